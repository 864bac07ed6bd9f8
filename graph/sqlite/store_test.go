package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/graphtest"
	"github.com/toolsmith/toolsmith/graph/sqlite"
)

func openTemp(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) graph.Store { return openTemp(t) })
}
