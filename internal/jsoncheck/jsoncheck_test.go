package jsoncheck_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/internal/jsoncheck"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, body, root, path, msg string
	}{
		{"clean", `{"inputs":{"amount":1,"to":"EUR"},"tags":["a","a"]}`, "", "", ""},
		{"same key in sibling objects", `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`, "", "", ""},
		{"top-level repeat", `{"verb":"X","verb":"Y"}`, "", "verb", "more than once"},
		{"nested repeat", `{"inputs":{"amount":1,"amount":500}}`, "", "inputs.amount", "more than once"},
		{"repeat in an array's object", `{"tools":[{"manifest":{}},{"manifest":{},"manifest":{}}]}`, "", "tools[1].manifest", "more than once"},
		{"repeat under a root", `{"amount":1,"amount":2}`, "arguments", "arguments.amount", "more than once"},
		{"repeat after a nested value", `{"a":{"b":[1,{"c":2}]},"a":3}`, "", "a", "more than once"},
		{"bad UTF-8 in a value", "{\"queryText\":\"ab\xff\"}", "", "queryText", "not UTF-8"},
		{"bad UTF-8 deep", "{\"a\":[\"ok\",{\"b\":\"\xfe\"}]}", "", "a[1].b", "not UTF-8"},
		{"bad UTF-8 in a key", "{\"a\":{\"\xff\":1}}", "", "a", "key that is not UTF-8"},
		{"bad UTF-8 in a top-level string", "\"\xff\"", "", "body", "not UTF-8"},
		{"repeat in a large object", manyKeys(40) + `,"k7":1}}`, "", "o.k7", "more than once"},
		{"large object without a repeat", manyKeys(40) + `}}`, "", "", ""},
		{"lone surrogate escape", `{"queryText":"a\ud800b"}`, "", "queryText", "no character"},
		{"lone surrogate in a key", `{"a":{"\udc00":1}}`, "", "a", "no character"},
		{"U+FFFD spelt", "{\"a\":\"\uFFFD \\ufffd \\uFFFD \\ud83d\\ude00\"}", "", "", ""},
		{"syntax errors are the decoder's", `{"a":1,"b"`, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := jsoncheck.Check([]byte(tc.body), tc.root)
			if tc.path == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tc.body, err)
				}
				return
			}
			fields := fault.Fields(err)
			if !errors.Is(err, fault.ErrMalformed) || len(fields) != 1 || fields[0].Path != tc.path || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Check(%q) = %v (fields %+v), want a malformed error on %q saying %q", tc.body, err, fields, tc.path, tc.msg)
			}
		})
	}
}

// manyKeys is `{"o":{"k0":0,…` with n keys, the object left open.
func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString(`{"o":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return b.String()
}

// FuzzCheck feeds arbitrary bodies to the checker: it never panics, an
// error is one ErrMalformed naming one path, and a body it passes that
// parses is UTF-8.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, "{\"a\":\"\xff\"}", "{\"\xfe\":1}",
		`[[[[{"x":[1,2,{"y":1,"y":1}]}]]]]`, `{"a":1,"b":` + strings.Repeat("[", 100), `"str"`, `{"a":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		err := jsoncheck.Check(body, "")
		if err == nil {
			if json.Valid(body) && !utf8.Valid(body) {
				t.Fatalf("%q: passed, but it is JSON that is not UTF-8", body)
			}
			return
		}
		fields := fault.Fields(err)
		if !errors.Is(err, fault.ErrMalformed) || len(fields) != 1 || fields[0].Path == "" {
			t.Fatalf("%q: %v names %+v, want one malformed path", body, err, fields)
		}
	})
}

// Scan reports keys of one object that differ only in case, with where the
// object stands, for the caller to judge by the destination's type.
func TestScanReportsKeysOfAnotherCase(t *testing.T) {
	folds, err := jsoncheck.Scan([]byte(`{"Verb":"X","verb":"Y","a":[{},{"b":{"n":1,"N":2}}],"c":{"x":1,"y":2},"o":`+manyKeys(30)[5:]+`,"K29":1}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []jsoncheck.Fold{{Object: nil, Keys: [2]string{"Verb", "verb"}}, {Object: []any{"a", 1, "b"}, Keys: [2]string{"n", "N"}},
		{Object: []any{"o"}, Keys: [2]string{"k29", "K29"}}}
	if len(folds) != len(want) {
		t.Fatalf("folds = %+v, want %+v", folds, want)
	}
	for i := range want {
		if fmt.Sprint(folds[i]) != fmt.Sprint(want[i]) {
			t.Fatalf("fold %d = %+v, want %+v", i, folds[i], want[i])
		}
	}
}
