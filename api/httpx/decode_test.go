package httpx_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/internal/fault"
)

type named string

type body struct {
	Inputs  map[string]any `json:"inputs"`
	Scope   named          `json:"scope"`
	Count   int            `json:"count"`
	Tags    []string       `json:"tags"`
	Expires *time.Time     `json:"expiresAt"`
}

// TestDecodeErrorsSpeakJSON: a wrongly typed field is named, in JSON's
// words, never by a Go type.
func TestDecodeErrorsSpeakJSON(t *testing.T) {
	for _, c := range []struct{ in, path, want string }{
		{`{"inputs":"str"}`, "inputs", "must be an object"},
		{`{"scope":5}`, "scope", "must be a string"},
		{`{"count":"x"}`, "count", "must be an integer"},
		{`{"tags":{}}`, "tags", "must be an array"},
		{`[]`, "body", "must be an object"},
		{`{"expiresAt":"yesterday"}`, "body", "RFC 3339"},
	} {
		var b body
		err := httpx.DecodeStrict([]byte(c.in), &b)
		fields := fault.Fields(err)
		if len(fields) != 1 || fields[0].Path != c.path || !strings.Contains(fields[0].Message, c.want) {
			t.Errorf("%s: %v (fields %+v), want %s: %s", c.in, err, fields, c.path, c.want)
		}
		if strings.Contains(err.Error(), "interface {}") || strings.Contains(err.Error(), "httpx_test.") {
			t.Errorf("%s: a Go type in the message: %v", c.in, err)
		}
	}
}
