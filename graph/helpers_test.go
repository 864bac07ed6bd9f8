package graph_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestLimit(t *testing.T) {
	tests := []struct{ n, def, most, want int }{
		{0, 100, 1000, 100},
		{-5, 100, 1000, 100},
		{7, 100, 1000, 7},
		{1000, 100, 1000, 1000},
		{1001, 100, 1000, 1000},
		{50000, 10, 0, 50000}, // no cap
	}
	for _, tc := range tests {
		if got := graph.Limit(tc.n, tc.def, tc.most); got != tc.want {
			t.Errorf("Limit(%d, %d, %d) = %d, want %d", tc.n, tc.def, tc.most, got, tc.want)
		}
	}
	if graph.AuditLimit(0) != 100 || graph.AuditLimit(5000) != 1000 || graph.AuditLimit(3) != 3 {
		t.Errorf("AuditLimit: %d %d %d", graph.AuditLimit(0), graph.AuditLimit(5000), graph.AuditLimit(3))
	}
}

func TestVerbTextAndEntityKey(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"MAKE_RESERVATION": "MAKE_RESERVATION make reservation",
		"weather.get-now":  "weather.get-now weather get now",
	} {
		if got := graph.VerbText(in); got != want {
			t.Errorf("VerbText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := graph.EntityKey("  Southwest Airlines "); got != "southwest airlines" {
		t.Errorf("EntityKey = %q", got)
	}
}

func TestValidStatus(t *testing.T) {
	for _, s := range []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled} {
		if !graph.ValidStatus(s) {
			t.Errorf("%q should be valid", s)
		}
	}
	for _, s := range []string{"", "Active", "gone"} {
		if graph.ValidStatus(s) {
			t.Errorf("%q should be invalid", s)
		}
	}
}

func TestCloneSummary(t *testing.T) {
	s := graph.ToolSummary{ID: "a", Tags: []string{"x"}, Groups: []string{"g"}, RequiredParams: []string{"p"}}
	c := graph.CloneSummary(s)
	if !reflect.DeepEqual(c, s) {
		t.Fatalf("clone %+v differs from %+v", c, s)
	}
	c.Tags[0], c.Groups[0], c.RequiredParams[0] = "changed", "changed", "changed"
	if s.Tags[0] != "x" || s.Groups[0] != "g" || s.RequiredParams[0] != "p" {
		t.Fatalf("the clone shares slices with the original: %+v", s)
	}
	if graph.CloneSummary(graph.ToolSummary{}).Tags != nil {
		t.Fatal("a nil slice should stay nil")
	}
}

func TestNanos(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 5, time.FixedZone("x", 3600))
	back := graph.FromNanos(graph.Nanos(at))
	if !back.Equal(at) || back.Location() != time.UTC {
		t.Fatalf("round trip of %v gave %v", at, back)
	}
}

func TestSortSubgraph(t *testing.T) {
	tool, verb, tag := graph.Node{Label: "Tool", Key: "a"}, graph.Node{Label: "Verb", Key: "DO"}, graph.Node{Label: "Tag", Key: "t"}
	sg := graph.Subgraph{
		Nodes: []graph.Node{verb, tool, tag, {Label: "Tool", Key: "0"}},
		Edges: []graph.Edge{{From: tool, Type: "TAGGED", To: tag}, {From: tool, Type: "PROVIDES", To: verb}, {From: tag, Type: "X", To: tool}},
	}
	graph.SortSubgraph(sg)
	want := graph.Subgraph{
		Nodes: []graph.Node{tag, {Label: "Tool", Key: "0"}, tool, verb},
		Edges: []graph.Edge{{From: tag, Type: "X", To: tool}, {From: tool, Type: "PROVIDES", To: verb}, {From: tool, Type: "TAGGED", To: tag}},
	}
	if !reflect.DeepEqual(sg, want) {
		t.Fatalf("sorted %+v, want %+v", sg, want)
	}
}

func TestSortHits(t *testing.T) {
	hit := func(id string, score float64) graph.Hit {
		return graph.Hit{Tool: graph.ToolSummary{ID: id}, Score: score}
	}
	hits := []graph.Hit{hit("b", 0.5), hit("c", 0.9), hit("a", 0.5)}
	graph.SortHits(hits)
	var got []string
	for _, h := range hits {
		got = append(got, h.Tool.ID)
	}
	if !reflect.DeepEqual(got, []string{"c", "a", "b"}) {
		t.Fatalf("order %v", got)
	}
}

func TestClosedGap(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	g := graph.ClosedGap(graph.Gap{Verb: "DO", Status: graph.GapOpen, Count: 3}, "tool", at)
	if g.Status != graph.GapClosed || g.ClosedBy != "tool" || !g.ClosedAt.Equal(at) || g.ClosedAt.Location() != time.UTC || g.Count != 3 {
		t.Fatalf("closed gap %+v", g)
	}
}

func TestEntityKeys(t *testing.T) {
	got := graph.EntityKeys([]string{" Airline", "", "  ", "SOUTHWEST"})
	if !reflect.DeepEqual(got, []string{"airline", "southwest"}) {
		t.Fatalf("EntityKeys = %q", got)
	}
}

func TestCheckDefinition(t *testing.T) {
	d := graph.Definition{ID: "op"}
	if err := graph.CheckDefinition(&d, 0); err != nil || d.Status != graph.DefinitionAvailable {
		t.Fatalf("CheckDefinition = %v, status %q", err, d.Status)
	}
	if err := graph.CheckDefinition(&graph.Definition{}, 3); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "definition 3 has no id") {
		t.Fatalf("no id: %v", err)
	}
	if err := graph.CheckDefinition(&graph.Definition{ID: "op", Status: "weird"}, 0); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), `"weird"`) {
		t.Fatalf("bad status: %v", err)
	}
}

func TestCompactSteps(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 34, 56, 0, time.UTC)
	got := graph.CompactSteps(now, graph.Retention{Minutes: 2 * time.Hour, Hours: 0, Days: 10 * 24 * time.Hour})
	want := []graph.CompactStep{
		{From: graph.ResMinute, To: graph.ResHour, Before: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)},
		{From: graph.ResDay, Before: now.Add(-10 * 24 * time.Hour)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CompactSteps = %+v, want %+v", got, want)
	}
}

// TestModuleOf: the stored module wins; a tool that names none belongs to
// the part of its id before the first "."; an id without one, to none.
func TestModuleOf(t *testing.T) {
	for _, c := range []struct{ id, module, want string }{
		{"currency.convert", "currency", "currency"},
		{"ns.y", "m", "m"},
		{"pet_clinic.list_pets", "", "pet_clinic"},
		{"ns.w.deep", "", "ns"},
		{"bare", "", ""},
	} {
		if got := graph.ModuleOf(&graph.ToolSummary{ID: c.id, Module: c.module}); got != c.want {
			t.Errorf("ModuleOf(%q, module %q) = %q, want %q", c.id, c.module, got, c.want)
		}
	}
}
