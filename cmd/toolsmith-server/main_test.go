package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoDevServer: the production binary does not link the
// in-process Temporal server or its Web UI (nearly all of cmd/toolsmith's
// size); a new import that pulls them in fails here.
func TestLinksNoDevServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{
			"github.com/toolsmith/toolsmith/internal/temporalserver",
			"github.com/toolsmith/toolsmith/internal/cli/devtemporal",
			"go.temporal.io/server/",
			"github.com/temporalio/ui-server/",
		} {
			if pkg == banned || strings.HasPrefix(pkg, banned) {
				t.Errorf("cmd/toolsmith-server links %s", pkg)
			}
		}
	}
}
