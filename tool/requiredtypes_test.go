package tool

import (
	"encoding/json"
	"testing"
)

// A schema that gives no required parameter a plain JSON type gives no
// types: any value fills such a parameter.
func TestRequiredTypesUnknown(t *testing.T) {
	for _, schema := range []string{``, `{}`, `{"required":["a"]}`, `{"required":["a"],"properties":{"a":{"type":"text"}}}`, `not json`} {
		if got := RequiredTypes(json.RawMessage(schema)); got != nil {
			t.Errorf("RequiredTypes(%s) = %v, want none", schema, got)
		}
	}
}
