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
	Options struct {
		Depth int `json:"depth"`
	} `json:"options"`
	Events []struct {
		At time.Time `json:"at"`
		N  int       `json:"n"`
	} `json:"events"`
	Limits map[string]struct {
		PerMinute int `json:"perMinute"`
	} `json:"limits"`
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
		{`{"expiresAt":"yesterday"}`, "expiresAt", "RFC 3339"},
		{`{"events":[{"at":"2026-01-01T00:00:00Z"},{"at":"noon"}]}`, "events[1].at", "RFC 3339"},
		// Unknown fields are named by their whole path.
		{`{"bogus":1}`, "bogus", "unknown field"},
		{`{"options":{"depth":1,"bogus":1}}`, "options.bogus", "unknown field"},
		{`{"events":[{"at":"2026-01-01T00:00:00Z"},{"At":"2026-01-01T00:00:00Z","bogus":1}]}`, "events[1].bogus", "unknown field"},
		{`{"limits":{"search":{"perMinute":1,"bogus":2}}}`, "limits.search.bogus", "unknown field"},
		{`{"":1}`, "body", "empty name"},
		{`{"options":{"":1}}`, "options", "empty name"},
		// A wrong type inside a list is named with its index.
		{`{"events":[{"n":1},{"n":"x"}]}`, "events[1].n", "must be an integer"},
		// A repeated key is named, at any depth, not decoded as its last
		// value; so is a string that is not UTF-8, which the decoder would
		// turn into U+FFFD.
		{`{"count":1,"count":500}`, "count", "more than once"},
		{`{"inputs":{"amount":1,"amount":500}}`, "inputs.amount", "more than once"},
		{`{"events":[{"n":1},{"n":2,"n":3}]}`, "events[1].n", "more than once"},
		// encoding/json matches a struct's fields ignoring case: two
		// spellings of one field are the field twice; in a map they are
		// two keys.
		{`{"count":1,"Count":500}`, "Count", "ignoring case"},
		{`{"events":[{"n":1},{"n":2,"N":3}]}`, "events[1].N", "ignoring case"},
		{`{"limits":{"a":{"perMinute":1,"PERMINUTE":2}}}`, "limits.a.PERMINUTE", "ignoring case"},
		{"{\"scope\":\"a\xff\"}", "scope", "not UTF-8"},
		{"{\"inputs\":{\"q\":[\"\xfe\"]}}", "inputs.q[0]", "not UTF-8"},
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

type inner struct {
	LatencyMs int64 `json:"latencyMs"`
}

type withEmbedded struct {
	Events []struct {
		inner
		OK *bool `json:"ok"`
	} `json:"events"`
}

// A wrong type in a field an embedded struct promotes is named by its
// JSON path, without the embedded Go type's name.
func TestDecodeErrorsSkipEmbeddedTypeNames(t *testing.T) {
	for in, path := range map[string]string{
		`{"events":[{"latencyMs":1e300}]}`:               "events[0].latencyMs",
		`{"events":[{"latencyMs":1},{"latencyMs":"x"}]}`: "events[1].latencyMs",
	} {
		var b withEmbedded
		err := httpx.DecodeStrict([]byte(in), &b)
		if f := fault.Fields(err); len(f) != 1 || f[0].Path != path {
			t.Errorf("%s: %v (fields %+v), want %s", in, err, f, path)
		}
	}
}

// Keys of a map that differ only in case are two keys, not a field twice.
func TestDecodeKeepsMapKeysOfAnotherCase(t *testing.T) {
	var b body
	if err := httpx.DecodeStrict([]byte(`{"inputs":{"amount":1,"Amount":2},"limits":{"a":{"perMinute":1},"A":{"perMinute":2}}}`), &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Inputs) != 2 || len(b.Limits) != 2 {
		t.Fatalf("decoded %+v", b)
	}
}
