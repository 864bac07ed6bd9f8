package graph

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/internal/testwait"
)

// memNotices is one topic's log in memory, for FollowNotices.
type memNotices struct {
	mu    sync.Mutex
	items []Notice
	fail  error
}

func (m *memNotices) post(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for range n {
		m.items = append(m.items, Notice{Seq: int64(len(m.items) + 1), Topic: "t", Data: []byte(`{}`)})
	}
}

func (m *memNotices) PostNotice(context.Context, Notice, int) (Notice, error) { panic("unused") }
func (m *memNotices) ImportNotices(context.Context, string, []Notice, int) (bool, error) {
	panic("unused")
}
func (m *memNotices) ClaimSpan(context.Context, string, time.Time) (time.Time, bool, error) {
	panic("unused")
}

func (m *memNotices) LatestNotices(_ context.Context, _ string, limit int) ([]Notice, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []Notice
	for i := len(m.items) - 1; i >= 0 && len(out) < NoticeLimit(limit); i-- {
		out = append(out, m.items[i])
	}
	return out, nil
}

func (m *memNotices) NoticesAfter(_ context.Context, _ string, after int64, limit int) ([]Notice, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []Notice
	for _, n := range m.items {
		if n.Seq > after && len(out) < NoticeLimit(limit) {
			out = append(out, n)
		}
	}
	return out, nil
}

// FollowNotices skips what was posted before it started, applies later
// posts once and in order, a burst larger than a page included, and keeps
// following after a failed read.
func TestFollowNotices(t *testing.T) {
	m := &memNotices{}
	m.post(3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var seen []int64
	var failures int
	count := func() (int, int) { mu.Lock(); defer mu.Unlock(); return len(seen), failures }
	done := make(chan struct{})
	go func() {
		defer close(done)
		FollowNotices(ctx, m, "t", 10*time.Millisecond, func(ns []Notice) {
			mu.Lock()
			defer mu.Unlock()
			for _, n := range ns {
				seen = append(seen, n.Seq)
			}
		}, func(error) { mu.Lock(); failures++; mu.Unlock() })
	}()
	time.Sleep(50 * time.Millisecond)
	m.post(NoticeLimit(0) + 5)
	testwait.Eventually(t, 5*time.Second, func() error {
		if n, _ := count(); n != NoticeLimit(0)+5 {
			return fmt.Errorf("applied %d of %d", n, NoticeLimit(0)+5)
		}
		return nil
	})
	m.mu.Lock()
	m.fail = errors.New("store down")
	m.mu.Unlock()
	testwait.Eventually(t, 5*time.Second, func() error {
		if _, f := count(); f == 0 {
			return errors.New("no failure reported")
		}
		return nil
	})
	m.mu.Lock()
	m.fail = nil
	m.mu.Unlock()
	m.post(1)
	testwait.Eventually(t, 5*time.Second, func() error {
		if n, _ := count(); n != NoticeLimit(0)+6 {
			return fmt.Errorf("applied %d after the store came back", n)
		}
		return nil
	})
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for i, seq := range seen {
		if seq != int64(i+4) {
			t.Fatalf("applied %v...; want seqs from 4 on, each once, in order", seen[:i+1])
		}
	}
}
