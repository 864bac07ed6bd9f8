package api

import (
	"net/url"
	"testing"
	"unicode/utf8"
)

// FuzzBadQuery: badQuery refuses exactly the raw query strings that
// url.ParseQuery cannot read whole, or whose names or values are not
// UTF-8, and always says why when it names something.
func FuzzBadQuery(f *testing.F) {
	for _, seed := range []string{"", "q=convert&maxTools=5", "actor=key:abc%", "limt=%zz", "li%zzmt=1",
		"limit=1;status=active", "q=%ff%fe", "q%ff=x", "q=caf%C3%A9", "&&a=&=b&", "a=%2", "a%=1", "=%"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		name, why := badQuery(raw)
		if (name == "") != (why == "") {
			t.Fatalf("badQuery(%q) = %q, %q: a name without a reason or a reason without a name", raw, name, why)
		}
		values, err := url.ParseQuery(raw)
		ok := err == nil
		for k, vs := range values {
			ok = ok && utf8.ValidString(k)
			for _, v := range vs {
				ok = ok && utf8.ValidString(v)
			}
		}
		if ok != (name == "") {
			t.Fatalf("badQuery(%q) = %q (%s), but url.ParseQuery reads it whole and as UTF-8: %v", raw, name, why, ok)
		}
	})
}
