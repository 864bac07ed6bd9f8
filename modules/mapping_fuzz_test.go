package modules

import (
	"encoding/json"
	"testing"
)

// FuzzMapInputs: input names (any bytes, the invisible, full-width and
// look-alike ones the ambiguity check normalises among them) are mapped
// to a schema's parameters without a panic; a mapping it returns sends no
// input twice (each argument comes from one input) and keeps every value
// the caller gave under a name it matched.
func FuzzMapInputs(f *testing.F) {
	schema := json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"},"from_currency":{"type":"string"},"to":{"type":"string"}},"required":["amount"]}`)
	for _, seed := range [][2]string{
		{"amount", "to"},
		{"Amount", "amount"},
		{"ａmount", "to"},
		{"amount\u200b", "amount"},
		{"fromCurrency", "from-currency"},
		{"a_mount", "AMOUNT"},
		{"\xff\xfe", "to"},
		{"", "amount"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		inputs := map[string]any{a: 1.0, b: "x"}
		m, err := MapInputs(schema, inputs)
		if err != nil {
			return
		}
		from := map[string]bool{}
		for param := range m.Arguments {
			src := param
			if r, ok := m.Renamed[param]; ok {
				src = r
			}
			if _, ok := inputs[src]; !ok {
				t.Fatalf("argument %q comes from %q, which is no input (%q, %q): %+v", param, src, a, b, m)
			}
			if from[src] {
				t.Fatalf("input %q fills two arguments (%q, %q): %+v", src, a, b, m)
			}
			from[src] = true
			if m.Arguments[param] != inputs[src] {
				t.Fatalf("argument %q is %v, its input %q was %v", param, m.Arguments[param], src, inputs[src])
			}
		}
	})
}
