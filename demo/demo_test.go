package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/tool"
)

func byID(t *testing.T) map[string]tool.Manifest {
	t.Helper()
	ms, err := Manifests()
	if err != nil {
		t.Fatalf("Manifests: %v", err)
	}
	out := map[string]tool.Manifest{}
	for _, m := range ms {
		if _, dup := out[m.ToolID]; dup {
			t.Errorf("duplicate toolId %q", m.ToolID)
		}
		out[m.ToolID] = m
	}
	return out
}

func TestCatalogueIsValidAndConsistent(t *testing.T) {
	all := byID(t)
	if n := len(all); n < 90 || n > 120 {
		t.Fatalf("catalogue has %d tools, want about 100", n)
	}
	for id, m := range all {
		if m.Source == nil || m.Source.Origin != "demo" || m.Source.License != "Apache-2.0" {
			t.Errorf("%s: source = %+v", id, m.Source)
		}
		if len(m.Examples) == 0 || len(m.Entities) == 0 || len(m.UseCases) == 0 || len(m.Tags) == 0 {
			t.Errorf("%s: needs examples, entities, use cases and tags", id)
		}
		if isEmpty(m.InputSchema) || isEmpty(m.OutputSchema) {
			t.Errorf("%s: needs both schemas", id)
		}
		for _, ex := range m.Examples {
			if isEmpty(ex.Output) {
				t.Errorf("%s: example %q has no output", id, ex.Scenario)
			}
		}
		if r := m.Relationships; r != nil {
			targets := slices.Concat(r.Dependencies, r.Alternatives)
			for _, p := range r.Pairings {
				targets = append(targets, p.ToolID)
			}
			for _, target := range targets {
				if _, ok := all[target]; !ok {
					t.Errorf("%s: relationship target %q is not in the catalogue", id, target)
				}
			}
		}
	}
}

func isEmpty(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

func TestSeed02ModulesAndLevels(t *testing.T) {
	all := byID(t)
	perModule := map[string]int{}
	for id, m := range all {
		if m.Module != "" {
			if prefix, _, _ := strings.Cut(id, "."); prefix != m.Module {
				t.Errorf("%s: module %q is not the id prefix", id, m.Module)
			}
			perModule[m.Module]++
		}
	}
	for _, mod := range []string{"research", "file_manager", "code_executor", "knowledge", "atlassian", "claude_code", "deployer",
		"scheduler", "garmin", "renpho_biometrics", "location", "git_platform", "project_planner", "injective"} {
		if perModule[mod] < 3 {
			t.Errorf("module %s has %d tools, want at least 3", mod, perModule[mod])
		}
	}
	levels := map[string]string{ // each module tool's expected level
		"research.web_search":          tool.LevelGuest,
		"research.fetch_webpage":       tool.LevelGuest,
		"file_manager.create_document": tool.LevelGuest,
		"file_manager.delete_file":     tool.LevelUser,
		"code_executor.run_python":     tool.LevelUser,
		"code_executor.run_shell":      tool.LevelAdmin,
		"scheduler.add_job":            tool.LevelAdmin,
	}
	for id, want := range levels {
		if got := all[id].RequiredPermission; got != want {
			t.Errorf("%s: requiredPermission %q, want %q", id, got, want)
		}
	}
	seen := map[string]bool{}
	for _, m := range all {
		seen[m.RequiredPermission] = true
	}
	for _, l := range tool.Levels {
		if !seen[l] {
			t.Errorf("no demo tool requires level %q", l)
		}
	}
}

func TestCurrencyConvert(t *testing.T) {
	m, ok := byID(t)["currency.convert"]
	if !ok {
		t.Fatal("currency.convert missing")
	}
	if m.Verb != "CONVERT_CURRENCY" || m.Module != "currency" {
		t.Fatalf("verb/module = %s/%s", m.Verb, m.Module)
	}
	var in struct {
		Properties map[string]struct {
			Type    string `json:"type"`
			Pattern string `json:"pattern"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(m.InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	if in.Properties["amount"].Type != "number" || in.Properties["from"].Type != "string" || in.Properties["to"].Type != "string" {
		t.Fatalf("input properties = %+v", in.Properties)
	}
	if in.Properties["from"].Pattern != "^[A-Z]{3}$" {
		t.Fatalf("from must be a 3-letter code, pattern %q", in.Properties["from"].Pattern)
	}
	if !slices.Equal(in.Required, []string{"amount", "from", "to"}) {
		t.Fatalf("required = %v", in.Required)
	}
	req, _ := tool.Params(m.OutputSchema)
	if !slices.Contains(req, "converted") || !slices.Contains(req, "rate") {
		t.Fatalf("output required = %v", req)
	}
}

// entityScore counts the words of a context that name one of the tool's
// entities (name or alias, case-insensitive) — the signal retrieval's entity
// lookup gets from the graph.
func entityScore(m tool.Manifest, context string) int {
	words := strings.FieldsFunc(strings.ToLower(context), func(r rune) bool { return r == ' ' || r == ',' || r == '.' })
	score := 0
	for _, e := range m.Entities {
		names := append([]string{e.Name}, e.Aliases...)
		for _, n := range names {
			if slices.Contains(words, strings.ToLower(n)) {
				score++
				break
			}
		}
	}
	return score
}

func TestReservationsAreToldApartByEntities(t *testing.T) {
	all := byID(t)
	air, rest := all["airline.book_seat"], all["restaurant.reserve_table"]
	if air.Verb != "MAKE_RESERVATION" || rest.Verb != "MAKE_RESERVATION" {
		t.Fatalf("verbs = %s, %s", air.Verb, rest.Verb)
	}
	has := func(m tool.Manifest, name, typ string) bool {
		return slices.ContainsFunc(m.Entities, func(e tool.Entity) bool { return e.Name == name && (typ == "" || e.Type == typ) })
	}
	for _, want := range [][2]string{{"Southwest", "Airline"}, {"Airline", ""}, {"Flight", ""}, {"Seat", ""}} {
		if !has(air, want[0], want[1]) {
			t.Errorf("airline.book_seat lacks entity %v", want)
		}
	}
	for _, want := range []string{"Restaurant", "Table", "Dinner"} {
		if !has(rest, want, "") {
			t.Errorf("restaurant.reserve_table lacks entity %s", want)
		}
	}
	tests := []struct {
		context    string
		win, loser tool.Manifest
	}{
		{"Southwest flight 175 to Denver", air, rest},
		{"dinner for two at 8pm", rest, air},
	}
	for _, tc := range tests {
		w, l := entityScore(tc.win, tc.context), entityScore(tc.loser, tc.context)
		if w < 1 || l != 0 {
			t.Errorf("%q: %s scores %d, %s scores %d", tc.context, tc.win.ToolID, w, tc.loser.ToolID, l)
		}
	}
	for _, id := range []string{"airline.search_flights", "airline.flight_status", "restaurant.search"} {
		if _, ok := all[id]; !ok {
			t.Errorf("%s missing", id)
		}
	}
}

func TestSeed03GroupsAndStates(t *testing.T) {
	all := byID(t)
	tests := []struct {
		id, state     string
		groups, avail []string
	}{
		{"agent.knowledge-query", "analysis", []string{"read-only", "knowledge", "basic"}, []string{"undefined", "research"}},
		{"agent.graph-update", "", []string{"write", "knowledge", "admin"}, []string{"analysis", "modification"}},
		{"agent.text-completion", "undefined", []string{"read-only", "text", "basic"}, nil},
		{"agent.complex-analysis", "results", []string{"advanced", "compute", "expensive"}, []string{"analysis"}},
		{"agent.reset-workflow", "undefined", []string{"admin"}, []string{"analysis", "results"}},
	}
	for _, tc := range tests {
		m, ok := all[tc.id]
		if !ok {
			t.Errorf("%s missing", tc.id)
			continue
		}
		if m.State != tc.state || !slices.Equal(m.Groups, tc.groups) || !slices.Equal(m.AvailableInStates, tc.avail) {
			t.Errorf("%s: state %q groups %v states %v", tc.id, m.State, m.Groups, m.AvailableInStates)
		}
	}
}

func TestManifestsNamesBadEntries(t *testing.T) {
	fsys := fstest.MapFS{
		"catalog/a.json":   {Data: []byte(`[` + demoManifest("a.one") + `]`)},
		"catalog/bad.json": {Data: []byte(`[` + demoManifest("b.ok") + `,{"toolId":"b.x","verb":"lower"}]`)},
	}
	_, err := manifests(fsys)
	if err == nil || !strings.Contains(err.Error(), "bad.json[1]") || !strings.Contains(err.Error(), "verb") {
		t.Fatalf("manifests = %v, want an error naming bad.json[1] and verb", err)
	}
	fsys["catalog/bad.json"] = &fstest.MapFile{Data: []byte(`{"not":"an array"}`)}
	if _, err := manifests(fsys); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("non-array file: %v", err)
	}
}

func demoManifest(id string) string {
	return `{"toolId":"` + id + `","verb":"DO_THING","name":"Thing","description":"Does a thing.","category":"misc"}`
}

// hashEmbedder is a deterministic bag-of-words embedder counting its calls.
type hashEmbedder struct {
	mu    sync.Mutex
	texts int
}

func (e *hashEmbedder) Name() string   { return "test-hash" }
func (e *hashEmbedder) Dimension() int { return 32 }
func (e *hashEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}
func (e *hashEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.texts += len(texts)
	e.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 32)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%32]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(max(n, 1)))
		}
		out[i] = v
	}
	return out, nil
}

func TestLoadIsIdempotent(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emb := &hashEmbedder{}
	svc := registry.New(st, emb)
	want, err := Manifests()
	if err != nil {
		t.Fatal(err)
	}

	var progress bytes.Buffer
	n, err := Load(ctx, svc, &progress)
	if err != nil || n != len(want) {
		t.Fatalf("first Load = %d, %v; want %d", n, err, len(want))
	}
	if !strings.Contains(progress.String(), "created") || !strings.Contains(progress.String(), "/") {
		t.Fatalf("progress output: %q", progress.String())
	}
	page, err := svc.List(ctx, graph.ListQuery{Limit: 1000, Filter: graph.Filter{}})
	if err != nil || page.Total != len(want) {
		t.Fatalf("List total = %d (%v), want %d", page.Total, err, len(want))
	}
	embedded := emb.texts
	if embedded != len(want) {
		t.Fatalf("embedded %d texts, want %d", embedded, len(want))
	}

	n, err = Load(ctx, svc, nil)
	if err != nil || n != len(want) {
		t.Fatalf("second Load = %d, %v", n, err)
	}
	if emb.texts != embedded {
		t.Fatalf("second Load re-embedded %d texts", emb.texts-embedded)
	}
	h, err := svc.History(ctx, "currency.convert")
	if err != nil || len(h) != 1 {
		t.Fatalf("history after two loads: %d revisions (%v), want 1", len(h), err)
	}
	if err := svc.Deprecate(ctx, "currency.rates", "replaced"); err != nil {
		t.Fatal(err)
	}
	progress.Reset()
	n, err = Load(ctx, svc, &progress)
	if err != nil || n != len(want) || !strings.Contains(progress.String(), "1 kept inactive") {
		t.Fatalf("third Load = %d, %v, %q", n, err, progress.String())
	}
	if got, err := svc.Get(ctx, "currency.rates"); err != nil || got.Status != graph.StatusDeprecated {
		t.Fatalf("reload re-activated a deprecated demo tool: %q %v", got.Status, err)
	}
	got, err := svc.Get(ctx, "airline.book_seat")
	if err != nil || len(got.Entities) == 0 || len(got.Relations) == 0 {
		t.Fatalf("airline.book_seat stored without graph edges: %+v %v", got, err)
	}
}

func TestLoadReportsFailuresAndKeepsGoodItems(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := registry.New(st, &hashEmbedder{})
	fsys := fstest.MapFS{"catalog/x.json": {Data: []byte(`[` + demoManifest("x.good") + `,{"toolId":"x.bad"}]`)}}
	n, err := load(ctx, fsys, svc, nil)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "x.json[1]") {
		t.Fatalf("load = %d, %v", n, err)
	}
	if _, err := svc.Get(ctx, "x.good"); err != nil {
		t.Fatalf("good item not stored: %v", err)
	}
}

// TestCurrencyDescriptionsSayTheRatesAreFixed holds the demo catalogue to
// what the demo currency module does: it serves a fixed rate table, so no
// currency tool may promise live or refreshed rates.
func TestCurrencyDescriptionsSayTheRatesAreFixed(t *testing.T) {
	n := 0
	for id, m := range byID(t) {
		if m.Module != "currency" {
			continue
		}
		n++
		d := strings.ToLower(m.Description)
		for _, claim := range []string{"latest", "mid-market", "refresh", "real-time", "hourly"} {
			if strings.Contains(d, claim) {
				t.Errorf("%s claims %q: %s", id, claim, m.Description)
			}
		}
		if strings.Contains(d, "rate") && !strings.Contains(d, "demo rate table") {
			t.Errorf("%s speaks of rates without saying they come from the demo rate table: %s", id, m.Description)
		}
	}
	if n == 0 {
		t.Fatal("no currency tools in the demo catalogue")
	}
}
