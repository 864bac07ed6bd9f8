package codegen

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/templates"
)

// TestPrefetch fills the module cache for wrappers (online, as a worker
// image build does) and proves, through the offline Verify it ends with,
// that a wrapper then builds and passes its test without the network.
func TestPrefetch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wrapper twice")
	}
	g, err := New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	if err := Prefetch(context.Background(), g, "", &progress); err != nil {
		t.Fatalf("Prefetch: %v\n%s", err, progress.String())
	}
	if !strings.Contains(progress.String(), "offline") {
		t.Fatalf("no progress reported:\n%s", progress.String())
	}
}
