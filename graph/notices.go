package graph

import (
	"context"
	"encoding/json"
	"time"
)

// Notice is one entry of a topic's log (Notices): the airlock's
// notifications, the cache invalidations an admin asked for.
type Notice struct {
	// Seq orders a topic's notices: it grows with every post, in the order
	// the posts commit. The store sets it.
	Seq   int64           `json:"seq"`
	Topic string          `json:"topic"`
	At    time.Time       `json:"at"`
	Data  json.RawMessage `json:"data"`
}

// DefaultNoticeKeep is how many notices of a topic PostNotice keeps when
// it is not told.
const DefaultNoticeKeep = 1000

// Notices keeps short logs by topic, shared by every replica over one
// store: a notice posted by one process is read by all of them, and each
// topic keeps only its newest notices. It is part of Store.
type Notices interface {
	// PostNotice appends n to n.Topic's log with the next Seq (returned
	// with n) and drops the topic's notices beyond its newest keep
	// (<= 0: DefaultNoticeKeep), in one transaction. Topic and Data (a
	// JSON value) are required (fault.ErrInvalid).
	PostNotice(ctx context.Context, n Notice, keep int) (Notice, error)
	// ImportNotices posts ns, oldest first, once per source, all or none:
	// it returns false, posting nothing, when source was imported before.
	ImportNotices(ctx context.Context, source string, ns []Notice, keep int) (bool, error)
	// LatestNotices returns topic's newest notices first, at most limit
	// (<= 0: 100, at most 10000).
	LatestNotices(ctx context.Context, topic string, limit int) ([]Notice, error)
	// NoticesAfter returns topic's notices with a Seq above after, oldest
	// first, at most limit (<= 0: 100, at most 10000).
	NoticesAfter(ctx context.Context, topic string, after int64, limit int) ([]Notice, error)
	// ClaimSpan moves the mark name to until when the mark is before it (or
	// unset) and returns the mark it had (zero when unset) and true; when
	// the mark is at or past until it returns it and false and changes
	// nothing. Of processes claiming the same span at once, exactly one
	// gets true, so the spans claimed never overlap: one process a span
	// does a system-wide periodic job (the analytics' shared samples).
	ClaimSpan(ctx context.Context, name string, until time.Time) (time.Time, bool, error)
}

// ValidateNotice checks what both stores require of a notice.
func ValidateNotice(n Notice) error {
	return validateNamedJSON("notice", "topic", n.Topic, n.Data)
}

// NoticeLimit is the page size of LatestNotices and NoticesAfter: 100 when
// unset, at most 10000.
func NoticeLimit(n int) int { return Limit(n, 100, 10000) }

// NoticeKeep is the retention PostNotice applies: DefaultNoticeKeep when
// keep <= 0.
func NoticeKeep(keep int) int {
	if keep <= 0 {
		return DefaultNoticeKeep
	}
	return keep
}

// FollowNotices calls apply with the notices posted to topic after the
// newest one at its start, oldest first, checking every every (FollowEvery
// when <= 0) until ctx ends; a failed read goes to failed (nil: ignored)
// and is retried on the next tick. A notice is applied here within every
// plus one read of its commit.
func FollowNotices(ctx context.Context, n Notices, topic string, every time.Duration, apply func([]Notice), failed func(error)) {
	if every <= 0 {
		every = FollowEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	last, started := int64(0), false
	for {
		var err error
		if !started {
			var top []Notice
			if top, err = n.LatestNotices(ctx, topic, 1); err == nil {
				started = true
				if len(top) > 0 {
					last = top[0].Seq
				}
			}
		} else {
			// Page by page: a burst of posts is applied in one tick.
			for {
				var got []Notice
				if got, err = n.NoticesAfter(ctx, topic, last, 0); err != nil || len(got) == 0 {
					break
				}
				last = got[len(got)-1].Seq
				apply(got)
				if len(got) < NoticeLimit(0) {
					break
				}
			}
		}
		if err != nil && failed != nil && ctx.Err() == nil {
			failed(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
