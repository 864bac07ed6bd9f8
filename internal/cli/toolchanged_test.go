package cli

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/retrieval"
)

// A hook that panics after a registry write (the write is stored) is
// logged, the hooks after it still run, and the write's caller goes on:
// its answer must not say the stored tool failed.
func TestToolChangedSurvivesAPanickingHook(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	sys := &system{log: slog.New(slog.NewTextHandler(&logs, nil)), retrieval: retrieval.New(st, hashing.New(16), retrieval.Options{})}
	var ran []string
	sys.onToolChange(func(id string) { panic("AddTool " + id + ": can't marshal input schema") })
	sys.onToolChange(func(id string) { ran = append(ran, id) })
	sys.toolChanged("t.deep")
	if len(ran) != 1 || ran[0] != "t.deep" {
		t.Fatalf("the hook after the panicking one ran for %v", ran)
	}
	if !strings.Contains(logs.String(), "can't marshal input schema") || !strings.Contains(logs.String(), "t.deep") {
		t.Fatalf("the panic was not logged: %q", logs.String())
	}
}
