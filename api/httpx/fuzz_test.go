package httpx_test

import (
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// FuzzDecodeStrict feeds arbitrary bodies to the strict decoder, whose
// errors walk the body beside the target type to name a field's whole
// path: it never panics, every error is a 400-class ErrMalformed naming
// a field, and a named path is made of the body's keys and indices.
func FuzzDecodeStrict(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `null`, `{"inputs":"str"}`, `{"count":"x"}`, `{"expiresAt":"yesterday"}`,
		`{"options":{"depth":1,"bogus":1}}`, `{"events":[{"n":1},{"n":"x"}]}`,
		`{"events":[{"at":"2026-01-01T00:00:00Z"},{"at":"noon"}]}`, `{"limits":{"search":{"perMinute":1,"bogus":2}}}`,
		`{"events":[{"At":"x","AT":5,"bogus":[[[{}]]]}]}`, `{"tags":[1,2,{"a":"b"}]}`, `{"a":` + strings.Repeat("[", 200),
		`{"scope":5} trailing`, "\x00\xff", `{"events":[{"n":1e400}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b body
		err := httpx.DecodeStrict(raw, &b)
		if err == nil {
			return
		}
		fields := fault.Fields(err)
		if len(fields) != 1 || fields[0].Path == "" {
			t.Fatalf("%q: %v names fields %+v, want one", raw, err, fields)
		}
		if !strings.Contains(err.Error(), fields[0].Path) {
			t.Fatalf("%q: the message %q does not name %q", raw, err, fields[0].Path)
		}
	})
}
