package modules

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestMapInputs(t *testing.T) {
	closed := json.RawMessage(`{"type":"object","required":["amount","from_currency"],"additionalProperties":false,
	  "properties":{"amount":{"type":"number"},"from_currency":{"type":"string"},"note":{"type":"string"}}}`)
	open := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)
	cases := []struct {
		name    string
		schema  json.RawMessage
		in      map[string]any
		args    map[string]any
		renamed map[string]string
		unused  []string
		errPath string
	}{
		{name: "exact", schema: closed, in: map[string]any{"amount": 1, "from_currency": "USD"}, args: map[string]any{"amount": 1, "from_currency": "USD"}},
		{name: "case and separators", schema: closed, in: map[string]any{"Amount": 1, "fromCurrency": "USD"},
			args: map[string]any{"amount": 1, "from_currency": "USD"}, renamed: map[string]string{"amount": "Amount", "from_currency": "fromCurrency"}},
		{name: "exact and a variant of it", schema: closed, in: map[string]any{"amount": 1, "AMOUNT": 2, "from_currency": "X"}, errPath: "inputs.amount"},
		{name: "exact and a variant on an open schema", schema: open, in: map[string]any{"query": "q", "Query": "r"}, errPath: "inputs.query"},
		{name: "variant taken by its own parameter", schema: json.RawMessage(`{"type":"object","properties":{"amount":{},"Amount":{}}}`),
			in: map[string]any{"amount": 1, "AMOUNT": 2}, args: map[string]any{"amount": 1, "Amount": 2}, renamed: map[string]string{"Amount": "AMOUNT"}},
		{name: "extra inputs dropped on closed schema", schema: closed, in: map[string]any{"amount": 1, "from_currency": "X", "colour": "red"},
			args: map[string]any{"amount": 1, "from_currency": "X"}, unused: []string{"colour"}},
		{name: "extra inputs kept on open schema", schema: open, in: map[string]any{"query": "q", "limit": 3}, args: map[string]any{"query": "q", "limit": 3}},
		{name: "no schema passes through", schema: nil, in: map[string]any{"a": 1}, args: map[string]any{"a": 1}},
		{name: "missing required", schema: closed, in: map[string]any{"amount": 1}, errPath: "inputs.from_currency"},
		{name: "ambiguous", schema: closed, in: map[string]any{"amount": 1, "FromCurrency": "a", "from-currency": "b"}, errPath: "inputs.from_currency"},
		// Look-alikes: a full-width name is its ASCII twin (NFKC), so it is
		// ambiguous beside it and renamed alone; a name with an invisible
		// character is refused, with or without a schema.
		{name: "full-width beside ASCII", schema: closed, in: map[string]any{"amount": 1, "\uff41mount": 500, "from_currency": "X"}, errPath: "inputs.amount"},
		{name: "full-width alone", schema: closed, in: map[string]any{"\uff41\uff4d\uff4f\uff55\uff4e\uff54": 1, "from_currency": "X"},
			args: map[string]any{"amount": 1, "from_currency": "X"}, renamed: map[string]string{"amount": "\uff41\uff4d\uff4f\uff55\uff4e\uff54"}},
		{name: "zero-width space", schema: closed, in: map[string]any{"amount": 1, "amount\u200b": 500, "from_currency": "X"}, errPath: "inputs"},
		{name: "bidi control", schema: open, in: map[string]any{"query": "q", "\u202equery": "r"}, errPath: "inputs"},
		{name: "invisible without a schema", schema: nil, in: map[string]any{"a\u2060": 1}, errPath: "inputs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MapInputs(tc.schema, tc.in)
			if tc.errPath != "" {
				if !errors.Is(err, ErrSchemaMismatch) || !errors.Is(err, fault.ErrInvalid) {
					t.Fatalf("err = %v, want a schema mismatch", err)
				}
				if f := fault.Fields(err); len(f) == 0 || f[0].Path != tc.errPath {
					t.Fatalf("fields = %v, want path %s", f, tc.errPath)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Arguments, tc.args) || !reflect.DeepEqual(m.Renamed, tc.renamed) || !reflect.DeepEqual(m.Unused, tc.unused) {
				t.Fatalf("mapping = %+v", m)
			}
		})
	}
	if _, err := MapInputs(json.RawMessage(`[`), nil); err == nil || !strings.Contains(err.Error(), "inputSchema") {
		t.Fatalf("bad schema: %v", err)
	}
}
