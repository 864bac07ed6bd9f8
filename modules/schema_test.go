package modules

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A huge value that fails its pattern is echoed as a short prefix, not
// whole: the message still says where and why.
func TestValidationCutsAHugeValue(t *testing.T) {
	var c schemaCache
	schema := json.RawMessage(`{"type":"object","properties":{"from":{"type":"string","pattern":"^[A-Z]{3}$"}}}`)
	err := c.validateArgs(schema, map[string]any{"from": strings.Repeat("x", 50000)})
	if err == nil || !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("err = %v", err)
	}
	if msg := err.Error(); len(msg) > 400 || !strings.Contains(msg, "/from") || !strings.Contains(msg, "…") {
		t.Fatalf("message (%d bytes): %.300s", len(msg), msg)
	}
}
