package retrieval

import (
	"fmt"
	"testing"
)

// TestExemplarsFloodOfOneTool: a flood of one tool's uses replaces that
// tool's own oldest entries past its share, and never evicts what the
// other tools learned.
func TestExemplarsFloodOfOneTool(t *testing.T) {
	e := newExemplars(1000) // 100 entries per tool at most (minPerTool)
	for i := range 300 {
		e.add(fmt.Sprintf("tool.%d", i%3), []float32{1, 0}, fmt.Sprintf("honest query %d", i))
	}
	for i := range 5000 {
		e.add("flood.tool", []float32{0, 1}, fmt.Sprintf("flood %d", i))
	}
	count := map[string]int{}
	for _, id := range e.tools {
		count[id]++
	}
	if count["flood.tool"] != e.perTool {
		t.Errorf("the flooded tool holds %d entries; want its share %d", count["flood.tool"], e.perTool)
	}
	for i := range 3 {
		if id := fmt.Sprintf("tool.%d", i); count[id] != 100 {
			t.Errorf("%s holds %d entries after the flood; want its 100", id, count[id])
		}
	}
	// The flooded tool keeps its newest entries, and its slots match the memory.
	if got := len(e.slots["flood.tool"]); got != e.perTool {
		t.Fatalf("slots: %d", got)
	}
	last := e.words[e.slots["flood.tool"][e.perTool-1]]
	if len(last) == 0 || last[len(last)-1] != "4999" {
		t.Errorf("the flooded tool's newest entry is %v; want flood 4999's words", last)
	}
	// The query log counts what the memory holds: the flood's evicted
	// words are gone.
	if s := e.logScores("flood 10"); s["flood.tool"] <= 0 {
		t.Errorf("query log lost the flooded tool: %v", s)
	}
	for id, n := range count {
		if n != len(e.slots[id]) {
			t.Errorf("%s: %d entries but %d slots", id, n, len(e.slots[id]))
		}
	}
}

// TestExemplarsRingStillEvictsTheOldest: with every tool under its share,
// a full memory evicts the oldest entry, and the slots follow.
func TestExemplarsRingStillEvictsTheOldest(t *testing.T) {
	e := newExemplars(200) // 100 per tool
	for i := range 400 {
		e.add(fmt.Sprintf("t%d", i%4), []float32{1, 0}, fmt.Sprintf("q %d", i))
	}
	if len(e.vecs) != 200 {
		t.Fatalf("memory holds %d; want 200", len(e.vecs))
	}
	total := 0
	for id, sl := range e.slots {
		total += len(sl)
		for _, i := range sl {
			if e.tools[i] != id {
				t.Fatalf("slot %d of %s holds %s", i, id, e.tools[i])
			}
		}
	}
	if total != 200 {
		t.Fatalf("slots count %d entries; want 200", total)
	}
}
