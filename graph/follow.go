package graph

import (
	"context"
	"time"
)

// FollowEvery is how often Follow refreshes a store: another replica's
// registration, status change or re-description is searchable (or gone)
// here within FollowEvery plus one Refresh, which docs/storage.md states as
// at most 2 s.
const FollowEvery = time.Second

// Follow calls f.Refresh every every (FollowEvery when <= 0) until ctx
// ends, handing the ids of the tools another process changed to changed
// (only when there are some) and a failed Refresh's error to failed (nil:
// ignored); a failure is retried on the next tick.
func Follow(ctx context.Context, f Follower, every time.Duration, changed func(ids []string), failed func(error)) {
	if every <= 0 {
		every = FollowEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ids, err := f.Refresh(ctx)
		if err != nil {
			if failed != nil && ctx.Err() == nil {
				failed(err)
			}
			continue
		}
		if len(ids) > 0 {
			changed(ids)
		}
	}
}
