package tool_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// FuzzManifest runs a registration's path over arbitrary bytes: Parse,
// Normalize, Validate (registry.Register's order). Seeds are in
// testdata/fuzz/FuzzManifest (the demo catalogue's manifests and this
// package's test manifest). Properties:
//   - Parse fails only with a *fault.ValidationError marked Malformed, whose
//     every field problem has a message;
//   - Normalize is idempotent, and the short description it derives is at
//     most MaxShortDescriptionLen characters;
//   - Validate fails only with a *fault.ValidationError matching ErrInvalid;
//   - a valid manifest survives what the store does to it: marshalled,
//     parsed, normalized and validated again it is the same and still valid.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(validJSON))
	f.Add([]byte(`{"toolId":"a","verb":"V","name":"n","description":"d.","category":"c"}`))
	f.Add([]byte(`{"toolId":"a","verb":"V","name":"n","description":"d","category":"c","inputSchema":{"type":"object","$ref":"#/$defs/x","$defs":{"x":{"minimum":1}}},"examples":[{"input":{}}]}`))
	f.Add([]byte(`{"commonErrors":["x",{"error":"y"}],"relationships":{"commonPairings":[{"toolId":"b","cooccurrenceScore":2}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := tool.Parse(raw)
		if err != nil {
			checkValidationError(t, "Parse", err, fault.ErrMalformed)
			return
		}
		tool.Normalize(&m)
		once := clone(t, m)
		tool.Normalize(&m)
		if !reflect.DeepEqual(once, clone(t, m)) {
			t.Fatalf("Normalize is not idempotent:\nonce:  %+v\ntwice: %+v", once, m)
		}
		if n := utf8.RuneCountInString(tool.ShortDescription(m.Description)); n > tool.MaxShortDescriptionLen {
			t.Fatalf("ShortDescription(%q) has %d characters", m.Description, n)
		}
		if err := tool.Validate(&m); err != nil {
			checkValidationError(t, "Validate", err, fault.ErrInvalid)
			return
		}
		stored, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("a valid manifest does not marshal: %v", err)
		}
		again, err := tool.Parse(stored)
		if err != nil {
			t.Fatalf("a valid manifest, stored, does not parse: %v\n%s", err, stored)
		}
		tool.Normalize(&again)
		if !reflect.DeepEqual(clone(t, m), clone(t, again)) {
			t.Fatalf("a valid manifest changed through the store:\nbefore: %s\nafter:  %s", stored, mustJSON(t, again))
		}
		if err := tool.Validate(&again); err != nil {
			t.Fatalf("a valid manifest, stored and read back, is invalid: %v\n%s", err, stored)
		}
	})
}

// checkValidationError asserts the error contract of Parse and Validate.
func checkValidationError(t *testing.T, op string, err error, kind error) {
	t.Helper()
	var ve *fault.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, kind) {
		t.Fatalf("%s: error %T %v is not a *fault.ValidationError matching %v", op, err, err, kind)
	}
	if len(ve.Fields) == 0 {
		t.Fatalf("%s: a validation error without fields", op)
	}
	for _, fe := range ve.Fields {
		if fe.Message == "" {
			t.Fatalf("%s: field %q has no message", op, fe.Path)
		}
	}
}

// clone is a manifest as generic JSON, for comparing manifests without
// the white space inside their json.RawMessage fields.
func clone(t *testing.T, m tool.Manifest) map[string]any {
	t.Helper()
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(mustJSON(t, m)))
	dec.UseNumber() // schemas may hold numbers no float64 holds (1e400)
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
