package api

import (
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/tool"
)

// FuzzBadQuery: badQuery refuses exactly the raw query strings that
// url.ParseQuery cannot read whole, or whose names or values are not
// UTF-8 or hold a control character other than tab, newline and carriage
// return, and always says why when it names something.
func FuzzBadQuery(f *testing.F) {
	for _, seed := range []string{"", "q=convert&maxTools=5", "actor=key:abc%", "limt=%zz", "li%zzmt=1",
		"limit=1;status=active", "q=%ff%fe", "q%ff=x", "q=caf%C3%A9", "actor=%00", "q=a%09b%0Ac", "category=%7F", "a%01=1", "&&a=&=b&", "a=%2", "a%=1", "=%"} {
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
			ok = ok && utf8.ValidString(k) && tool.ControlAt(k) < 0
			for _, v := range vs {
				ok = ok && utf8.ValidString(v) && tool.ControlAt(v) < 0
			}
		}
		if ok != (name == "") {
			t.Fatalf("badQuery(%q) = %q (%s), but url.ParseQuery reads it whole and as UTF-8: %v", raw, name, why, ok)
		}
	})
}
