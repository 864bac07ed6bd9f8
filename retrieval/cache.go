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

// lru is a small thread-safe least-recently-used map.
type lru[V any] struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recent; values are *lruItem[V]
	items map[string]*list.Element
}

type lruItem[V any] struct {
	key string
	val V
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
	if e, ok := c.items[key]; ok {
		e.Value.(*lruItem[V]).val = v
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruItem[V]{key: key, val: v})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruItem[V]).key)
	}
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

// resultCache is the L1 cache of seed 01 §5: size- and TTL-bounded, keyed by
// strategy, query hash, caller hash and session.
type resultCache struct {
	ttl time.Duration
	now func() time.Time
	lru *lru[cacheEntry]
}

func newResultCache(size int, ttl time.Duration, now func() time.Time) *resultCache {
	return &resultCache{ttl: ttl, now: now, lru: newLRU[cacheEntry](size)}
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
	c.lru.mu.Lock()
	defer c.lru.mu.Unlock()
	c.lru.order.Init()
	c.lru.items = map[string]*list.Element{}
}

// remove drops every entry whose metadata matches and returns how many.
func (c *resultCache) remove(match func(cacheMeta) bool) int {
	c.lru.mu.Lock()
	defer c.lru.mu.Unlock()
	n := 0
	for key, e := range c.lru.items {
		if match(e.Value.(*lruItem[cacheEntry]).val.meta) {
			c.lru.order.Remove(e)
			delete(c.lru.items, key)
			n++
		}
	}
	return n
}

// len counts live and expired entries (tests).
func (c *resultCache) len() int {
	c.lru.mu.Lock()
	defer c.lru.mu.Unlock()
	return c.lru.order.Len()
}

// cacheKey is tool:{strategy}:{query hash}:{caller hash}:{session} (seed 01
// §5.2). The session is part of every key because the history signal reads
// it in hybrid ranking too, not only in the session strategy.
func cacheKey(q Query) string {
	h := sha256.New()
	for _, part := range []string{q.Text, q.Context, q.Category, string(q.Phase), strconv.Itoa(q.MaxTools), strconv.FormatBool(q.IncludeExamples), strings.Join(q.Exclude, ",")} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	ch := sha256.Sum256([]byte(q.Caller.Hash()))
	return strings.Join([]string{"tool", string(q.Strategy), hex.EncodeToString(h.Sum(nil)[:8]), hex.EncodeToString(ch[:8]), q.Caller.SessionID}, ":")
}
