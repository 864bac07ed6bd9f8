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

// TestFollow runs the graph.Follower contract on two stores opened on one
// file, as two processes (API replicas, workers) open it.
func TestFollow(t *testing.T) {
	graphtest.RunFollow(t, func(t *testing.T) (graph.Store, graph.Store) {
		path := filepath.Join(t.TempDir(), "graph.db")
		var stores [2]graph.Store
		for i := range stores {
			s, err := sqlite.Open(path, sqlite.Options{})
			if err != nil {
				t.Fatalf("Open #%d: %v", i+1, err)
			}
			t.Cleanup(func() { _ = s.Close() })
			stores[i] = s
		}
		return stores[0], stores[1]
	})
}
