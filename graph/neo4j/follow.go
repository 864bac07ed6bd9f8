package neo4j

import (
	"context"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

// FollowOverlap is how far before its last look Refresh reads again. The
// server keeps the vector and full-text indexes, so a replica holds only
// the mean-vector cache and whatever its callers cache; a tool write is
// found by its updatedAt, which the writing process's clock sets. Reading
// again the last FollowOverlap, and remembering what was seen in it, lets
// the clocks of the replicas' hosts differ by up to FollowOverlap (and a
// transaction commit up to that long after its updatedAt) without a write
// being missed.
const FollowOverlap = 5 * time.Second

// follower is Refresh's state: where it looks from and the latest write
// (updatedAt by tool id) of the overlap it has reported or made itself.
type follower struct {
	mu    sync.Mutex
	since int64 // Unix nanoseconds; 0 until the first Refresh
	seen  map[string]int64
}

// saw records a write this store made, so that Refresh does not report it.
func (f *follower) saw(id string, at int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]int64{}
	}
	f.seen[id] = max(f.seen[id], at)
}

// Refresh returns the tools another process wrote since the last Refresh
// (the first call only starts following) and marks the mean vector stale
// when there are some; the indexes are the server's and need nothing.
func (s *Store) Refresh(ctx context.Context) ([]string, error) {
	f := &s.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	now := graph.Nanos(s.now().UTC())
	if f.since == 0 {
		f.since = now
		return nil, nil
	}
	from := f.since - int64(FollowOverlap)
	type write struct {
		id string
		at int64
	}
	var writes []write
	err := s.r.read(ctx, func(tx txRunner) error {
		writes = nil // the driver may run this more than once
		recs, err := tx.run(ctx, cypherToolsChangedSince, map[string]any{"since": from})
		if err != nil {
			return err
		}
		for _, r := range recs {
			id, err := getString(r, "id")
			if err != nil {
				return err
			}
			at, err := getInt(r, "updatedAt")
			if err != nil {
				return err
			}
			writes = append(writes, write{id, at})
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("refresh", err)
	}
	if f.seen == nil {
		f.seen = map[string]int64{}
	}
	var ids []string
	for _, w := range writes {
		if f.seen[w.id] >= w.at {
			continue // reported already, or this store's own write
		}
		f.seen[w.id] = w.at
		ids = append(ids, w.id) // one row per tool: a node has one updatedAt
	}
	f.since = now
	for id, at := range f.seen {
		if at < now-int64(FollowOverlap) {
			delete(f.seen, id) // older than any later look reads
		}
	}
	if len(ids) > 0 {
		s.staleMean()
	}
	return ids, nil
}
