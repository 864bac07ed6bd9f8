package retrieval

import (
	"strings"
	"testing"
	"time"
)

func TestLRUBoundsEntriesAndCost(t *testing.T) {
	l := newLRU[string](10)
	l.cost = func(v string) int { return len(v) }
	l.maxCost = 10
	l.put("a", "xxxx")
	l.put("b", "xxxx")
	if _, ok := l.get("a"); !ok { // a is now the most recent
		t.Fatal("a evicted early")
	}
	l.put("c", "xxxx") // 12 > 10: the least recent (b) goes
	if _, ok := l.get("b"); ok {
		t.Fatal("b kept over the cost bound")
	}
	if _, ok := l.get("a"); !ok {
		t.Fatal("a evicted instead of b")
	}
	if l.total != 8 {
		t.Fatalf("total %d, want 8", l.total)
	}
	l.put("a", "x") // replacing adjusts the total
	if l.total != 5 {
		t.Fatalf("total after replace %d, want 5", l.total)
	}
	l.put("big", strings.Repeat("x", 50)) // over the bound alone: kept, the rest goes
	if _, ok := l.get("big"); !ok || l.len() != 1 || l.total != 50 {
		t.Fatalf("len %d total %d, want only the newest entry", l.len(), l.total)
	}
}

func TestLRUBoundsEntriesAndForgetsOnReset(t *testing.T) {
	l := newLRU[string](2)
	l.cost = func(v string) int { return len(v) }
	l.put("a", "x")
	l.put("b", "xx")
	l.get("a")        // b is now the least recent
	l.put("c", "xxx") // a third entry: b goes, and its cost with it
	if _, ok := l.get("b"); ok || l.len() != 2 || l.total != 4 {
		t.Fatalf("len %d total %d (b kept: %v), want a and c at a total of 4", l.len(), l.total, ok)
	}
	l.reset()
	if _, ok := l.get("a"); ok || l.len() != 0 || l.total != 0 {
		t.Fatalf("after reset: len %d total %d", l.len(), l.total)
	}
}

func TestResultCacheBoundsBytes(t *testing.T) {
	now := time.Unix(0, 0)
	c := newResultCache(1000, 128<<10, time.Minute, func() time.Time { return now })
	res := Result{Context: AssembledTools{indexMD: []string{strings.Repeat("m", 10<<10)}}}
	for k := 0; k < 20; k++ {
		c.put(string(rune('a'+k)), cacheMeta{}, res)
	}
	if n := c.len(); n < 2 || n > 4 {
		t.Fatalf("%d results of about 41 KB cached under 128 KB", n)
	}
	if _, ok := c.get(string(rune('a' + 19))); !ok {
		t.Fatal("the newest result was evicted")
	}
	n := c.len()
	if got := c.remove(func(cacheMeta) bool { return true }); got != n || c.len() != 0 || c.lru.total != 0 {
		t.Fatalf("remove dropped %d of %d and left a total of %d", got, n, c.lru.total)
	}
}
