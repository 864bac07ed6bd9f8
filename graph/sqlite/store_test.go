package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
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

// TestTwoStoresWriteOneFile: two stores on one file (two processes'
// views) writing at the same time all succeed, the writer lock queueing
// them (WAL, BEGIN IMMEDIATE, the busy timeout), and after a Refresh each
// finds every tool either wrote.
func TestTwoStoresWriteOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	var stores [2]*sqlite.Store
	for i := range stores {
		s, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: 2}); err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				id := fmt.Sprintf("s%d.tool%02d", i, j)
				_, err := s.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO", Name: id}, Embedding: []float32{1, float32(j)}})
				if err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, s := range stores {
		if _, err := s.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		hits, err := s.VectorSearch(ctx, []float32{1, 0}, 2*each+1, graph.Filter{})
		if err != nil || len(hits) != 2*each {
			t.Errorf("store %d finds %d tools (%v), want %d", i, len(hits), err, 2*each)
		}
	}
}

// TestOpenOneFileAtOnce: stores opened on one fresh file at the same time
// (replicas starting together) migrate it once between them: every Open
// succeeds.
func TestOpenOneFileAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "graph.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sqlite.Open(path, sqlite.Options{})
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
