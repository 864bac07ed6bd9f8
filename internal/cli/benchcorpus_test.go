package cli

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/tool"
)

func benchBase(n int) []tool.Manifest {
	out := make([]tool.Manifest, n)
	for i := range out {
		out[i] = tool.Manifest{ToolID: fmt.Sprintf("api%d.get_user_%d", i%7, i), Verb: "GET_USER", Name: fmt.Sprintf("get_user_%d", i),
			Category: "api", Description: fmt.Sprintf("Gets the specified user %d and lists all details.", i), PermissionsRequired: []string{"public"}}
		tool.Normalize(&out[i])
	}
	return out
}

// The variants fill the count with valid tools whose ids and names are
// distinct, the same on every run, of every kind, near their source.
func TestExpandCatalogue(t *testing.T) {
	base := benchBase(40)
	got := expandCatalogue(base, 1000)
	if len(got) != 1000 {
		t.Fatalf("%d tools, want 1000", len(got))
	}
	if !reflect.DeepEqual(got, expandCatalogue(base, 1000)) {
		t.Fatal("two expansions differ")
	}
	if !reflect.DeepEqual(got[:40], base) {
		t.Fatal("the source's tools do not come first, unchanged")
	}
	ids, names, descs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	kinds := map[string]int{}
	for _, m := range got {
		if ids[m.ToolID] || names[m.Name] {
			t.Fatalf("id %q or name %q twice", m.ToolID, m.Name)
		}
		ids[m.ToolID], names[m.Name], descs[m.Description] = true, true, true
		if err := tool.Validate(&m); err != nil {
			t.Fatalf("%s: %v", m.ToolID, err)
		}
		switch {
		case strings.Contains(m.Description, "(version "):
			kinds["version"]++
		case strings.Contains(m.Description, " region."):
			kinds["regional"]++
		case !strings.HasPrefix(m.ToolID, "api") || strings.Contains(m.ToolID, ".alt"):
			kinds["paraphrase"]++
		}
	}
	for _, k := range []string{"version", "regional", "paraphrase"} {
		if kinds[k] < 250 {
			t.Errorf("%d %s variants of 960: %v", kinds[k], k, kinds)
		}
	}
	if len(descs) < 990 {
		t.Errorf("only %d distinct descriptions of 1000", len(descs))
	}
	if short := expandCatalogue(base, 10); len(short) != 10 {
		t.Errorf("a larger source is cut to the count: %d", len(short))
	}
	// An over-long id keeps within the limit and stays distinct.
	long := base[0]
	long.ToolID = strings.Repeat("a", tool.MaxToolIDLen)
	if got := expandCatalogue([]tool.Manifest{long}, 30); len(got) != 30 {
		t.Errorf("a maximal id: %d tools", len(got))
	}
}

// Usage events are seeded, name loaded tools, and are skewed: the most
// used tenth of the tools serves most events.
func TestUsageEvents(t *testing.T) {
	cat := expandCatalogue(benchBase(50), 500)
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	evs := usageEvents(cat, 5000, now)
	if len(evs) != 5000 || !reflect.DeepEqual(evs, usageEvents(cat, 5000, now)) {
		t.Fatalf("%d events, or two runs differ", len(evs))
	}
	known := map[string]bool{}
	for _, m := range cat {
		known[m.ToolID] = true
	}
	per := map[string]int{}
	failed := 0
	for _, e := range evs {
		if !known[e.ToolID] || e.Query == "" || e.SessionID == "" || e.At.After(now) {
			t.Fatalf("event %+v", e)
		}
		per[e.ToolID]++
		if !e.Success {
			failed++
		}
	}
	counts := make([]int, 0, len(per))
	for _, c := range per {
		counts = append(counts, c)
	}
	top := 0
	for i, c := range sortedDesc(counts) {
		if i < len(cat)/10 {
			top += c
		}
	}
	if top < len(evs)/2 || len(per) < 100 {
		t.Errorf("the top tenth of tools serves %d of %d events, %d tools used", top, len(evs), len(per))
	}
	if failed == 0 || failed > len(evs)/10 {
		t.Errorf("%d failed events", failed)
	}
}

func sortedDesc(xs []int) []int {
	out := append([]int(nil), xs...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] > out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Held-out tools are not loaded and their texts are queries.
func TestHoldOut(t *testing.T) {
	kept, held := holdOut(benchBase(100), 25)
	if len(kept) != 96 || len(held) != 4 || held[0] != benchBase(100)[24].Description {
		t.Fatalf("kept %d, held %v", len(kept), held)
	}
}
