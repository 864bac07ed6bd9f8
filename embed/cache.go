package embed

import (
	"container/list"
	"context"
	"sync"
)

// DefaultCacheSize is the capacity Cached uses for size <= 0.
const DefaultCacheSize = 1024

// CacheStats counts a CachedModel's query cache use.
type CacheStats struct {
	Hits, Misses uint64
	// Len is the number of cached queries, at most Cap.
	Len, Cap int
}

// CachedModel wraps a Model with an LRU cache of EmbedQuery results, so a
// query embedded by retrieval can be reused. EmbedDocuments passes through
// uncached (documents are embedded once, at registration). It is safe for
// concurrent use; two concurrent misses on the same text both call the model
// and the later result wins, which is harmless for a deterministic model.
type CachedModel struct {
	m     Model
	cap   int
	mu    sync.Mutex
	ll    *list.List // front = most recently used; values are *cacheEntry
	items map[string]*list.Element
	hits  uint64
	miss  uint64
}

type cacheEntry struct {
	text string
	vec  []float32
}

// Cached returns m with an LRU cache of size EmbedQuery results
// (DefaultCacheSize when size <= 0).
func Cached(m Model, size int) *CachedModel {
	if size <= 0 {
		size = DefaultCacheSize
	}
	return &CachedModel{m: m, cap: size, ll: list.New(), items: make(map[string]*list.Element, size)}
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
	c.mu.Lock()
	if el, ok := c.items[text]; ok {
		c.ll.MoveToFront(el)
		c.hits++
		v := append([]float32(nil), el.Value.(*cacheEntry).vec...)
		c.mu.Unlock()
		return v, nil
	}
	c.miss++
	c.mu.Unlock()

	v, err := c.m.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err // errors are not cached
	}
	stored := append([]float32(nil), v...)

	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[text]; ok {
		el.Value.(*cacheEntry).vec = stored
		c.ll.MoveToFront(el)
		return v, nil
	}
	c.items[text] = c.ll.PushFront(&cacheEntry{text: text, vec: stored})
	for c.ll.Len() > c.cap {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.items, old.Value.(*cacheEntry).text)
	}
	return v, nil
}

// EmbedDocuments calls the wrapped model directly.
func (c *CachedModel) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return c.m.EmbedDocuments(ctx, texts)
}

// Stats returns the hit and miss counts and the cache occupancy.
func (c *CachedModel) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheStats{Hits: c.hits, Misses: c.miss, Len: c.ll.Len(), Cap: c.cap}
}
