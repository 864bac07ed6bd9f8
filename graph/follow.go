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

// Follow calls f.Refresh at once (a store that starts following on its
// first Refresh starts now) and then every every (FollowEvery when <= 0)
// until ctx ends, handing the ids of the tools another process changed to
// changed (only when there are some) and a failed Refresh's error to
// failed (nil: ignored); a failure is retried on the next tick.
func Follow(ctx context.Context, f Follower, every time.Duration, changed func(ids []string), failed func(error)) {
	if every <= 0 {
		every = FollowEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		ids, err := f.Refresh(ctx)
		switch {
		case err != nil:
			if failed != nil && ctx.Err() == nil {
				failed(err)
			}
		case len(ids) > 0:
			changed(ids)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
