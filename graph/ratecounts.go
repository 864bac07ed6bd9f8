package graph

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// RateCounts are fixed-window counters shared by every process over one
// store: the per-caller rate limits of API replicas count in them, so a
// caller has one budget whichever replica serves it. It is part of Store.
type RateCounts interface {
	// AddRateCount adds delta (negative gives calls back) to key's count
	// in window and returns, after the change, that count and the count
	// of window-1 (0 when none). A count starts at 0. Concurrent adds,
	// from any process, are never lost.
	AddRateCount(ctx context.Context, key string, window int64, delta int) (cur, prev int64, err error)
	// ExpireRateCounts deletes every count of a window before before and
	// returns how many it deleted.
	ExpireRateCounts(ctx context.Context, before int64) (int, error)
}

// ValidateRateKey checks a rate count key: non-empty, at most 500 bytes.
func ValidateRateKey(key string) error {
	if strings.TrimSpace(key) == "" || len(key) > 500 {
		return fmt.Errorf("rate count key must be 1-500 bytes, got %d: %w", len(key), fault.ErrInvalid)
	}
	return nil
}

// MemoryRateCounts is RateCounts in one process's memory: what a limiter
// counts in when it has no store, or while its store fails. Its memory is
// bounded by the keys of the windows not yet expired.
type MemoryRateCounts struct {
	mu sync.Mutex
	m  map[rateKey]int64
}

type rateKey struct {
	key    string
	window int64
}

var _ RateCounts = (*MemoryRateCounts)(nil)

// AddRateCount implements RateCounts.
func (c *MemoryRateCounts) AddRateCount(_ context.Context, key string, window int64, delta int) (int64, int64, error) {
	if err := ValidateRateKey(key); err != nil {
		return 0, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[rateKey]int64{}
	}
	k := rateKey{key, window}
	c.m[k] += int64(delta)
	return c.m[k], c.m[rateKey{key, window - 1}], nil
}

// ExpireRateCounts implements RateCounts.
func (c *MemoryRateCounts) ExpireRateCounts(_ context.Context, before int64) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k := range c.m {
		if k.window < before {
			delete(c.m, k)
			n++
		}
	}
	return n, nil
}
