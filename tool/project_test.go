package tool_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/tool"
)

func TestToGraph(t *testing.T) {
	m := valid(t)
	m.Groups = []string{"finance", "default"}
	m.State = "priced"
	m.AvailableInStates = []string{"undefined"}
	m.RequiredPermission = "user"
	m.UseCases = []string{"price a trip abroad"}
	m.Entities = []tool.Entity{{Name: "Southwest", Type: "Airline", Aliases: []string{"WN"}}}
	tool.Normalize(&m)
	vec := []float32{0.6, 0.8}
	g := tool.ToGraph(m, vec)

	if g.ID != "currency.convert" || g.Verb != "CONVERT_CURRENCY" || g.Module != "currency" || g.Category != "finance" {
		t.Fatalf("summary ids: %+v", g.ToolSummary)
	}
	if g.Status != graph.StatusActive || g.Version != "1.0.0" || g.Complexity != "low" || g.RequiredLevel != "user" {
		t.Fatalf("summary defaults: %+v", g.ToolSummary)
	}
	if g.ShortDescription != "Converts an amount between two currencies at the latest mid-market rate." {
		t.Fatalf("shortDescription = %q", g.ShortDescription)
	}
	if !slices.Equal(g.RequiredParams, []string{"amount", "from", "to"}) || !slices.Equal(g.OptionalParams, []string{"items"}) {
		t.Fatalf("params = %v / %v", g.RequiredParams, g.OptionalParams)
	}
	if !slices.Equal(g.Groups, []string{"finance", "default"}) || g.State != "priced" || !slices.Equal(g.AvailableInStates, []string{"undefined"}) {
		t.Fatalf("groups/states: %+v", g.ToolSummary)
	}
	if !slices.Equal(g.Permissions, []string{"public"}) || !slices.Equal(g.Tags, []string{"currency", "exchange"}) {
		t.Fatalf("permissions/tags: %+v", g.ToolSummary)
	}
	wantRel := []graph.Relation{
		{Kind: graph.RelDependsOn, Target: "currency.rates"},
		{Kind: graph.RelAlternative, Target: "finance.fx"},
		{Kind: graph.RelPairsWith, Target: "currency.rates", Score: 0.5, Sequence: "before"},
	}
	if !slices.Equal(g.Relations, wantRel) {
		t.Fatalf("relations = %+v", g.Relations)
	}
	if len(g.Entities) != 1 || g.Entities[0].Name != "Southwest" || g.Entities[0].Type != "Airline" || g.Entities[0].Aliases[0] != "WN" {
		t.Fatalf("entities = %+v", g.Entities)
	}
	if !slices.Equal(g.UseCases, m.UseCases) || g.Description != m.Description || !slices.Equal(g.Embedding, vec) {
		t.Fatalf("text/embedding not carried over")
	}
	back, err := tool.Parse(g.Manifest)
	if err != nil {
		t.Fatalf("manifest JSON does not parse back: %v", err)
	}
	if back.ToolID != m.ToolID || back.ShortDescription != m.ShortDescription || len(back.Examples) != 1 {
		t.Fatalf("manifest round trip lost data: %+v", back)
	}
}

func TestToGraphEmptySlicesAreNotNull(t *testing.T) {
	g := tool.ToGraph(tool.Manifest{ToolID: "a", Verb: "DO"}, nil)
	b, err := json.Marshal(g.ToolSummary)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"tags":[]`, `"groups":[]`, `"requiredParams":[]`, `"optionalParams":[]`, `"permissionsRequired":[]`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("%s missing from %s", field, b)
		}
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		req, opt []string
	}{
		{"none", ``, []string{}, []string{}},
		{"no properties", `{"type":"object"}`, []string{}, []string{}},
		{"mixed", `{"type":"object","properties":{"b":{},"a":{},"c":{}},"required":["c","a"]}`, []string{"a", "c"}, []string{"b"}},
		{"required undeclared", `{"type":"object","required":["x","x"]}`, []string{"x"}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, opt := tool.Params(json.RawMessage(tc.schema))
			if !slices.Equal(req, tc.req) || !slices.Equal(opt, tc.opt) {
				t.Fatalf("Params = %v, %v; want %v, %v", req, opt, tc.req, tc.opt)
			}
		})
	}
}

func TestEmbeddingText(t *testing.T) {
	m := tool.Manifest{
		Name:          "Book a seat",
		Verb:          "MAKE_RESERVATION",
		Description:   "Books a seat on a flight.",
		Explanation:   "Holds the fare for 24 hours",
		Tags:          []string{"travel", "airline"},
		InputGuidance: "Give the flight number",
		Examples:      []tool.Example{{Scenario: "Southwest flight 175 to Denver"}, {Scenario: ""}},
		UseCases:      []string{"reserve a window seat"},
		Entities:      []tool.Entity{{Name: "Southwest", Type: "Airline"}, {Name: "Flight"}, {Name: "Delta", Type: "Airline"}},
	}
	got := tool.EmbeddingText(m)
	want := "Book a seat. make reservation. Books a seat on a flight. Holds the fare for 24 hours. travel airline. " +
		"Give the flight number. Southwest flight 175 to Denver. reserve a window seat. Southwest Airline Flight Delta."
	if got != want {
		t.Fatalf("EmbeddingText =\n%q\nwant\n%q", got, want)
	}
	if tool.EmbeddingText(tool.Manifest{}) != "" {
		t.Fatal("empty manifest should give empty text")
	}
}

func TestVerbWords(t *testing.T) {
	for in, want := range map[string]string{"CONVERT_CURRENCY": "convert currency", "GET": "get", "": "", "A__B": "a b"} {
		if got := tool.VerbWords(in); got != want {
			t.Errorf("VerbWords(%q) = %q, want %q", in, got, want)
		}
	}
}
