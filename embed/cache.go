package embed

import (
	"context"
	"fmt"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultCacheSize is the capacity Cached uses for size <= 0.
const DefaultCacheSize = 1024

// CacheStats counts a CachedModel's query cache use.
type CacheStats struct {
	Hits, Misses uint64
	// Len is the number of cached queries, at most Cap.
	Len, Cap int
}

// CachedModel wraps a Model with an LRU cache (golang-lru's lru.Cache) of
// EmbedQuery results, so a query embedded by retrieval can be reused.
// EmbedDocuments passes through uncached (documents are embedded once, at
// registration). It is safe for concurrent use; two concurrent misses on the
// same text both call the model and the later result wins, which is harmless
// for a deterministic model.
type CachedModel struct {
	m     Model
	cap   int
	cache *lru.Cache[string, []float32]
	hits  atomic.Uint64
	miss  atomic.Uint64
}

// Cached returns m with an LRU cache of size EmbedQuery results
// (DefaultCacheSize when size <= 0).
func Cached(m Model, size int) *CachedModel {
	if size <= 0 {
		size = DefaultCacheSize
	}
	cache, err := lru.New[string, []float32](size)
	if err != nil {
		panic(fmt.Sprintf("embed: query cache of %d entries: %v", size, err)) // size > 0 here
	}
	return &CachedModel{m: m, cap: size, cache: cache}
}

// Name returns the wrapped model's name: caching does not change vectors.
func (c *CachedModel) Name() string { return c.m.Name() }

// Dimension returns the wrapped model's dimension.
func (c *CachedModel) Dimension() int { return c.m.Dimension() }

// Unwrap returns the wrapped model.
func (c *CachedModel) Unwrap() Model { return c.m }

// EmbedQuery returns the cached vector for text or embeds and caches it.
// Callers get their own copy and may modify it.
func (c *CachedModel) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if v, ok := c.cache.Get(text); ok {
		c.hits.Add(1)
		return append([]float32(nil), v...), nil
	}
	c.miss.Add(1)
	v, err := c.m.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err // errors are not cached
	}
	c.cache.Add(text, append([]float32(nil), v...))
	return v, nil
}

// EmbedDocuments calls the wrapped model directly.
func (c *CachedModel) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return c.m.EmbedDocuments(ctx, texts)
}

// Stats returns the hit and miss counts and the cache occupancy.
func (c *CachedModel) Stats() CacheStats {
	return CacheStats{Hits: c.hits.Load(), Misses: c.miss.Load(), Len: c.cache.Len(), Cap: c.cap}
}
