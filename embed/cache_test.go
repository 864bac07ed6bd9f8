package embed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// countingModel returns [len(text), calls-so-far] and counts calls.
type countingModel struct {
	queries atomic.Int64
	docs    atomic.Int64
	fail    string
}

var errFail = errors.New("model failure")

func (m *countingModel) Name() string   { return "counting" }
func (m *countingModel) Dimension() int { return 2 }
func (m *countingModel) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	n := m.queries.Add(1)
	if text == m.fail {
		return nil, errFail
	}
	return []float32{float32(len(text)), float32(n)}, nil
}
func (m *countingModel) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	m.docs.Add(1)
	out := make([][]float32, len(texts))
	for k, t := range texts {
		out[k] = []float32{float32(len(t)), 0}
	}
	return out, nil
}

func TestCachedLRU(t *testing.T) {
	base := &countingModel{}
	c := Cached(base, 2)
	ctx := context.Background()
	var m Model = c
	if m.Name() != "counting" || m.Dimension() != 2 {
		t.Fatal("name/dimension not passed through")
	}
	a1, _ := c.EmbedQuery(ctx, "a")
	a2, _ := c.EmbedQuery(ctx, "a")
	if a1[1] != a2[1] {
		t.Fatalf("second query not served from cache: %v %v", a1, a2)
	}
	a2[0] = 99 // callers own their copy
	if a3, _ := c.EmbedQuery(ctx, "a"); a3[0] != 1 {
		t.Fatalf("cache entry was modified through a returned slice: %v", a3)
	}
	_, _ = c.EmbedQuery(ctx, "bb")  // miss; cache {bb, a}
	_, _ = c.EmbedQuery(ctx, "a")   // hit; a most recent
	_, _ = c.EmbedQuery(ctx, "ccc") // miss; evicts bb
	_, _ = c.EmbedQuery(ctx, "a")   // hit
	before := base.queries.Load()
	_, _ = c.EmbedQuery(ctx, "bb") // evicted: miss
	if base.queries.Load() != before+1 {
		t.Fatal("evicted entry was served from cache")
	}
	st := c.Stats()
	want := CacheStats{Hits: 4, Misses: 4, Len: 2, Cap: 2}
	if st != want {
		t.Fatalf("stats %+v, want %+v", st, want)
	}
}

func TestCachedErrorsAndDocuments(t *testing.T) {
	base := &countingModel{fail: "bad"}
	c := Cached(base, 0)
	ctx := context.Background()
	for range 2 {
		if _, err := c.EmbedQuery(ctx, "bad"); !errors.Is(err, errFail) {
			t.Fatalf("got %v", err)
		}
	}
	if base.queries.Load() != 2 {
		t.Fatal("an error was cached")
	}
	for range 2 {
		if _, err := c.EmbedDocuments(ctx, []string{"x", "y"}); err != nil {
			t.Fatal(err)
		}
	}
	if base.docs.Load() != 2 {
		t.Fatal("documents must pass through uncached")
	}
	if st := c.Stats(); st.Cap != DefaultCacheSize || st.Len != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCachedConcurrent(t *testing.T) {
	base := &countingModel{}
	c := Cached(base, 8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				text := fmt.Sprint((g + k) % 12)
				v, err := c.EmbedQuery(context.Background(), text)
				if err != nil || v[0] != float32(len(text)) {
					t.Errorf("%q: %v %v", text, v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := c.Stats()
	if st.Hits+st.Misses != 1600 || st.Len > 8 {
		t.Fatalf("stats %+v", st)
	}
	if uint64(base.queries.Load()) != st.Misses {
		t.Fatalf("%d model calls for %d misses", base.queries.Load(), st.Misses)
	}
}
