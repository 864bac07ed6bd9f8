package cli

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/testwait"
	"github.com/toolsmith/toolsmith/retrieval"
)

// TestCacheInvalidationReachesEveryReplica: two processes over one store
// (two SQLite handles on one file), each with its retrieval cache. An
// invalidation posted before a replica starts following is not replayed
// there; one an admin asks of the first replica clears the second's cache
// within the follow bound.
func TestCacheInvalidationReachesEveryReplica(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "graph.db")
	emb := hashing.New(64)
	var bc [2]*cacheBroadcast
	for i := range bc {
		st, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
			t.Fatal(err)
		}
		bc[i] = newCacheBroadcast(st, retrieval.New(st, emb, retrieval.Options{}))
	}
	hit := func(svc *retrieval.Service) bool {
		t.Helper()
		r, err := svc.Search(ctx, retrieval.Query{Text: "convert currency"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Metadata.CacheHit
	}
	all := retrieval.InvalidateRequest{Scope: retrieval.ScopeAll}
	if err := bc[0].Broadcast(ctx, all); err != nil { // before anyone follows
		t.Fatal(err)
	}
	hit(bc[1].svc)
	if !hit(bc[1].svc) {
		t.Fatal("the second search is not a cache hit")
	}
	failed := func(err error) { t.Errorf("follow: %v", err) }
	every := 20 * time.Millisecond
	go bc[1].follow(ctx, every, failed)
	time.Sleep(10 * every)
	if !hit(bc[1].svc) {
		t.Fatal("an invalidation posted before the replica started following cleared its cache")
	}
	if err := bc[0].Broadcast(ctx, all); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 2*time.Second, func() error {
		if hit(bc[1].svc) {
			return errors.New("the other replica still answers from its cache")
		}
		return nil
	})
	// The replica's own posts are not applied twice.
	if err := bc[1].Broadcast(ctx, all); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 2*time.Second, func() error {
		bc[1].mu.Lock()
		defer bc[1].mu.Unlock()
		if len(bc[1].mine) != 0 {
			return errors.New("the replica's own invalidation is still pending")
		}
		return nil
	})
}
