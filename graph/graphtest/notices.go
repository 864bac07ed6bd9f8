package graphtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func testNotices(t *testing.T, open func(*testing.T) graph.Store) {
	var n graph.Notices = fresh(t, open)
	NoticesContract(t, n)
}

// NoticesContract checks a graph.Notices: posts ordered by seq within a
// topic, topics apart, retention to the newest keep, imports once per
// source, bad notices refused, and spans claimed by exactly one of
// several concurrent claimants.
func NoticesContract(t *testing.T, n graph.Notices) {
	t.Helper()
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	note := func(topic string, i int) graph.Notice {
		return graph.Notice{Topic: topic, At: t0.Add(time.Duration(i) * time.Minute), Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	for _, bad := range []graph.Notice{{Topic: "", Data: json.RawMessage(`{}`)}, {Topic: "a", Data: json.RawMessage(`{`)}} {
		if _, err := n.PostNotice(ctx, bad, 0); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("bad notice %+v: %v; want ErrInvalid", bad, err)
		}
	}
	if got, err := n.LatestNotices(ctx, "a", 0); err != nil || len(got) != 0 {
		t.Fatalf("latest of an empty topic = %v, %v", got, err)
	}
	var seqs []int64
	for i := range 5 {
		p, err := n.PostNotice(ctx, note("a", i), 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) > 0 && p.Seq <= seqs[len(seqs)-1] {
			t.Fatalf("post %d got seq %d after %d; want it growing", i, p.Seq, seqs[len(seqs)-1])
		}
		seqs = append(seqs, p.Seq)
	}
	if _, err := n.PostNotice(ctx, note("b", 9), 0); err != nil {
		t.Fatal(err)
	}
	got, err := n.LatestNotices(ctx, "a", 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("latest of a topic keeping 3 = %+v, %v", got, err)
	}
	for k, want := range []int{4, 3, 2} {
		if got[k].Seq != seqs[want] || got[k].Topic != "a" || !got[k].At.Equal(t0.Add(time.Duration(want)*time.Minute)) ||
			!jsonEqual(got[k].Data, []byte(fmt.Sprintf(`{"i":%d}`, want))) {
			t.Fatalf("latest[%d] = %+v %s; want notice %d (seq %d)", k, got[k], got[k].Data, want, seqs[want])
		}
	}
	if got, _ := n.LatestNotices(ctx, "a", 1); len(got) != 1 || got[0].Seq != seqs[4] {
		t.Fatalf("latest 1 = %+v", got)
	}
	after, err := n.NoticesAfter(ctx, "a", seqs[2], 0)
	if err != nil || len(after) != 2 || after[0].Seq != seqs[3] || after[1].Seq != seqs[4] {
		t.Fatalf("after seq %d = %+v, %v; want the last two, oldest first", seqs[2], after, err)
	}
	if after, _ := n.NoticesAfter(ctx, "a", seqs[4], 0); len(after) != 0 {
		t.Fatalf("after the newest = %+v", after)
	}
	if b, _ := n.LatestNotices(ctx, "b", 0); len(b) != 1 || !jsonEqual(b[0].Data, []byte(`{"i":9}`)) {
		t.Fatalf("topic b = %+v", b)
	}

	// Imports: once per source, trimmed like posts.
	batch := []graph.Notice{note("c", 1), note("c", 2), note("c", 3)}
	if fresh, err := n.ImportNotices(ctx, "file#1", batch, 2); err != nil || !fresh {
		t.Fatalf("import = %v, %v", fresh, err)
	}
	if fresh, err := n.ImportNotices(ctx, "file#1", batch, 2); err != nil || fresh {
		t.Fatalf("second import of a source = %v, %v; want false", fresh, err)
	}
	if c, _ := n.LatestNotices(ctx, "c", 0); len(c) != 2 || !jsonEqual(c[0].Data, []byte(`{"i":3}`)) || !jsonEqual(c[1].Data, []byte(`{"i":2}`)) {
		t.Fatalf("imported topic = %+v", c)
	}
	if _, err := n.ImportNotices(ctx, "", batch, 0); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("import without a source: %v", err)
	}

	// Spans: the mark moves forward only, and of concurrent claims of one
	// span exactly one wins.
	prev, ok, err := n.ClaimSpan(ctx, "job", t0)
	if err != nil || !ok || !prev.IsZero() {
		t.Fatalf("first claim = %v %v %v; want the zero mark, true", prev, ok, err)
	}
	if prev, ok, err := n.ClaimSpan(ctx, "job", t0); err != nil || ok || !prev.Equal(t0) {
		t.Fatalf("claim of the same span = %v %v %v; want the mark, false", prev, ok, err)
	}
	if _, ok, _ := n.ClaimSpan(ctx, "job", t0.Add(-time.Minute)); ok {
		t.Fatal("a claim before the mark succeeded")
	}
	if prev, ok, err := n.ClaimSpan(ctx, "job", t0.Add(time.Minute)); err != nil || !ok || !prev.Equal(t0) {
		t.Fatalf("next claim = %v %v %v; want the old mark, true", prev, ok, err)
	}
	if _, ok, _ := n.ClaimSpan(ctx, "other", t0); !ok {
		t.Fatal("another name's first claim failed")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := n.ClaimSpan(ctx, "job", t0.Add(2*time.Minute))
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d of 6 concurrent claims won; want 1", wins)
	}
}
