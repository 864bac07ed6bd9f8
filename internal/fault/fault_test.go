package fault_test

import (
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// A quoted input is echoed as its first MaxEcho characters and "…", so a
// huge value makes a short message; a short one is quoted whole, and
// other verbs print their argument whole.
func TestMessagesEchoAShortPrefixOfAnInput(t *testing.T) {
	huge := strings.Repeat("é", 120_000)
	err := fault.Malformed("cursor", "must be the nextCursor of the previous page, got %q", huge)
	want := `cursor: must be the nextCursor of the previous page, got "` + strings.Repeat("é", fault.MaxEcho) + `…"`
	if err.Error() != want {
		t.Fatalf("message of %d bytes: %.200s…, want %s", len(err.Error()), err.Error(), want)
	}
	if got := fault.Invalid("sort", "must be id or uses, got %q", "name").Error(); got != `sort: must be id or uses, got "name"` {
		t.Errorf("a short value: %s", got)
	}
	list := strings.Repeat("a, ", 40)
	if got := fault.Invalid("kind", "must be one of %s, got %q", list, "b").Error(); got != `kind: must be one of `+list+`, got "b"` {
		t.Errorf("a %%s argument was cut: %s", got)
	}
	if got := fault.Echo(strings.Repeat("x", fault.MaxEcho)); got != strings.Repeat("x", fault.MaxEcho) {
		t.Errorf("a value of exactly MaxEcho characters: %q", got)
	}
}
