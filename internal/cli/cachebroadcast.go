package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
)

// cacheTopic is the store topic (graph.Notices) of the admins' cache
// invalidations; the store keeps the newest cacheKeep, far more than a
// replica reads in one follow tick.
const (
	cacheTopic = "retrieval.cache.invalidate"
	cacheKeep  = 100
)

// cacheBroadcast makes DELETE /tools/admin/cache/invalidate reach every
// replica: the replica that answers clears its cache and posts the request
// to the store (Broadcast); every process follows the topic (follow) and
// applies the requests the others posted, within graph.FollowEvery plus
// one read of the store.
type cacheBroadcast struct {
	store graph.Notices
	svc   *retrieval.Service

	mu   sync.Mutex
	mine map[int64]bool // posted here and applied already; dropped once followed past
}

func newCacheBroadcast(store graph.Notices, svc *retrieval.Service) *cacheBroadcast {
	return &cacheBroadcast{store: store, svc: svc, mine: map[int64]bool{}}
}

// Broadcast implements apiretrieval.Broadcaster.
func (b *cacheBroadcast) Broadcast(ctx context.Context, r retrieval.InvalidateRequest) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("broadcast cache invalidation: %w", err)
	}
	// Held across the post, so the follower, which can only read the
	// notice once it committed, finds it in mine.
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.store.PostNotice(ctx, graph.Notice{Topic: cacheTopic, Data: data}, cacheKeep)
	if err != nil {
		return fmt.Errorf("broadcast cache invalidation: %w", err)
	}
	b.mine[n.Seq] = true
	return nil
}

// apply clears this process's cache for each invalidation another
// process posted.
func (b *cacheBroadcast) apply(ns []graph.Notice, failed func(error)) {
	if len(ns) == 0 {
		return
	}
	b.mu.Lock()
	own := make(map[int64]bool, len(b.mine))
	for seq := range b.mine {
		own[seq] = true
		if seq <= ns[len(ns)-1].Seq { // followed past: never read again
			delete(b.mine, seq)
		}
	}
	b.mu.Unlock()
	for _, n := range ns {
		if own[n.Seq] {
			continue
		}
		var r retrieval.InvalidateRequest
		if err := json.Unmarshal(n.Data, &r); err != nil {
			failed(fmt.Errorf("cache invalidation %d: %w", n.Seq, err))
			continue
		}
		if _, err := b.svc.InvalidateCache(r); err != nil {
			failed(fmt.Errorf("cache invalidation %d: %w", n.Seq, err))
		}
	}
}

// follow applies the other processes' invalidations until ctx ends.
func (b *cacheBroadcast) follow(ctx context.Context, every time.Duration, failed func(error)) {
	graph.FollowNotices(ctx, b.store, cacheTopic, every, func(ns []graph.Notice) { b.apply(ns, failed) }, failed)
}
