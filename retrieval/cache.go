package retrieval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// lru is a thread-safe least-recently-used map over golang-lru's
// simplelru, bounded by a number of entries and, when cost is set, also by
// the sum of the entries' costs: after each put the least recent entries
// go until the sum is within maxCost (the most recent entry is always
// kept). The cost bound is why the map is simplelru under one mutex rather
// than lru.Cache: a put, its evictions and the running total change
// together.
type lru[V any] struct {
	mu      sync.Mutex
	entries *simplelru.LRU[string, costed[V]]
	// cost estimates an entry's size in bytes; maxCost bounds their sum.
	cost    func(V) int
	maxCost int
	total   int
}

// costed is a value with the cost it was counted at.
type costed[V any] struct {
	val  V
	cost int
}

// newLRU returns an lru of at most size (≥ 1) entries.
func newLRU[V any](size int) *lru[V] {
	l := &lru[V]{}
	entries, err := simplelru.NewLRU(size, func(_ string, e costed[V]) { l.total -= e.cost })
	if err != nil {
		panic(fmt.Sprintf("retrieval: lru of %d entries: %v", size, err))
	}
	l.entries = entries
	return l
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries.Get(key)
	return e.val, ok
}

func (c *lru[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := 0
	if c.cost != nil {
		cost = c.cost(v)
	}
	// Replacing a value is no eviction: its old cost leaves the total here.
	if old, ok := c.entries.Peek(key); ok {
		c.total -= old.cost
	}
	c.total += cost
	c.entries.Add(key, costed[V]{val: v, cost: cost})
	for c.maxCost > 0 && c.total > c.maxCost && c.entries.Len() > 1 {
		c.entries.RemoveOldest()
	}
}

// reset drops every entry.
func (c *lru[V]) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Purge()
}

// removeIf drops every entry whose value matches and returns how many.
func (c *lru[V]) removeIf(match func(V) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, key := range c.entries.Keys() {
		if e, ok := c.entries.Peek(key); ok && match(e.val) {
			c.entries.Remove(key)
			n++
		}
	}
	return n
}

// len counts the entries.
func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
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
	return c.lru.len()
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
