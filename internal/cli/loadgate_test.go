package cli

import (
	"fmt"
	"testing"
)

// A tool changed while the MCP catalogue loads is applied after the load,
// and later changes at once.
func TestLoadGate(t *testing.T) {
	var applied []string
	g := &loadGate{loading: true, apply: func(id string) { applied = append(applied, id) }}
	g.changed("a")
	g.changed("b")
	if len(applied) != 0 {
		t.Fatalf("applied during the load: %v", applied)
	}
	g.done()
	g.changed("c")
	if fmt.Sprint(applied) != "[a b c]" {
		t.Fatalf("applied %v, want [a b c]", applied)
	}
}
