package retrieval

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"
)

// lru is a small thread-safe least-recently-used map, bounded by a number
// of entries and, when cost is set, by the sum of the entries' costs.
type lru[V any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *lruItem[V]
	items map[string]*list.Element
	// cost estimates an entry's size in bytes; maxCost bounds their sum
	// (the most recent entry is always kept).
	cost    func(V) int
	maxCost int
	total   int
}

type lruItem[V any] struct {
	key  string
	val  V
	cost int
}

func newLRU[V any](size int) *lru[V] {
	return &lru[V]{size: size, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruItem[V]).val, true
	}
	var zero V
	return zero, false
}

func (c *lru[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := 0
	if c.cost != nil {
		cost = c.cost(v)
	}
	if e, ok := c.items[key]; ok {
		it := e.Value.(*lruItem[V])
		c.total += cost - it.cost
		it.val, it.cost = v, cost
		c.order.MoveToFront(e)
	} else {
		c.items[key] = c.order.PushFront(&lruItem[V]{key: key, val: v, cost: cost})
		c.total += cost
	}
	for c.order.Len() > c.size || (c.maxCost > 0 && c.total > c.maxCost && c.order.Len() > 1) {
		c.removeElement(c.order.Back())
	}
}

// reset drops every entry.
func (c *lru[V]) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	c.items = map[string]*list.Element{}
	c.total = 0
}

// removeIf drops every entry whose value matches and returns how many.
func (c *lru[V]) removeIf(match func(V) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.items {
		if match(e.Value.(*lruItem[V]).val) {
			c.removeElement(e)
			n++
		}
	}
	return n
}

// removeElement drops e; the caller holds mu.
func (c *lru[V]) removeElement(e *list.Element) {
	it := e.Value.(*lruItem[V])
	c.order.Remove(e)
	delete(c.items, it.key)
	c.total -= it.cost
}

// cacheMeta is what invalidation scopes match on.
type cacheMeta struct {
	strategy  Strategy
	userID    string
	sessionID string
	tools     []string
}

type cacheEntry struct {
	meta    cacheMeta
	res     Result
	expires time.Time
}

// resultCache is the L1 cache: size- and TTL-bounded, keyed by
// strategy, query hash, caller hash and session.
type resultCache struct {
	ttl time.Duration
	now func() time.Time
	lru *lru[cacheEntry]
}

// newResultCache bounds the cache by entries and by maxBytes of estimated
// result size (0: entries only).
func newResultCache(size, maxBytes int, ttl time.Duration, now func() time.Time) *resultCache {
	l := newLRU[cacheEntry](size)
	l.cost = func(e cacheEntry) int { return resultBytes(e.res) }
	l.maxCost = maxBytes
	return &resultCache{ttl: ttl, now: now, lru: l}
}

// resultBytes estimates the memory a cached result holds: its rendered
// Markdown (kept for reuse), the structures it was rendered from (about
// three times as much again) and a share per hit and index entry. Checked
// against heap profiles at 10,000 tools, where a half-size estimate let the
// cache hold twice its budget.
func resultBytes(r Result) int {
	n := 1024 + 1024*len(r.Hits) + 256*(len(r.Context.Index)+len(r.Context.Detailed))
	for _, md := range r.Context.indexMD {
		n += 4 * len(md)
	}
	for _, md := range r.Context.detailedMD {
		n += 4 * len(md)
	}
	return n
}

func (c *resultCache) get(key string) (Result, bool) {
	e, ok := c.lru.get(key)
	if !ok || c.now().After(e.expires) {
		return Result{}, false
	}
	return e.res, true
}

func (c *resultCache) put(key string, m cacheMeta, r Result) {
	c.lru.put(key, cacheEntry{meta: m, res: r, expires: c.now().Add(c.ttl)})
}

func (c *resultCache) clear() {
	c.lru.reset()
}

// remove drops every entry whose metadata matches and returns how many.
func (c *resultCache) remove(match func(cacheMeta) bool) int {
	return c.lru.removeIf(func(e cacheEntry) bool { return match(e.meta) })
}

// len counts live and expired entries (tests).
func (c *resultCache) len() int {
	c.lru.mu.Lock()
	defer c.lru.mu.Unlock()
	return c.lru.order.Len()
}

// cacheKey is tool:{strategy}:{query hash}:{caller hash}:{session}. The
// session is part of every key because the history signal reads
// it in hybrid ranking too, not only in the session strategy.
func cacheKey(q Query) string {
	h := sha256.New()
	for _, part := range []string{q.Text, q.Context, q.Category, string(q.Phase), strconv.Itoa(q.MaxTools), strconv.FormatBool(q.IncludeExamples), strings.Join(q.Exclude, ","), strconv.FormatBool(q.WholeQuery)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	ch := sha256.Sum256([]byte(q.Caller.Hash()))
	return strings.Join([]string{"tool", string(q.Strategy), hex.EncodeToString(h.Sum(nil)[:8]), hex.EncodeToString(ch[:8]), q.Caller.SessionID}, ":")
}
