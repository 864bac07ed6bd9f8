package evaluation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/evaluation"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
)

func TestScore(t *testing.T) {
	tests := []struct {
		name              string
		ranked, relevant  []string
		r1, r5, ndcg, mrr float64
	}{
		{"first", []string{"a", "b"}, []string{"a"}, 1, 1, 1, 1},
		{"third", []string{"x", "y", "a"}, []string{"a"}, 0, 1, 0.5, 1.0 / 3},
		{"missing", []string{"x", "y"}, []string{"a"}, 0, 0, 0, 0},
		{"beyond k", []string{"1", "2", "3", "4", "5", "a"}, []string{"a"}, 0, 0, 0, 1.0 / 6},
		{"half of two", []string{"a", "x"}, []string{"a", "b"}, 0.5, 0.5, 1 / (1 + 1/math.Log2(3)), 1},
		{"both of two", []string{"b", "a"}, []string{"a", "b"}, 0.5, 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := evaluation.Score(tc.ranked, tc.relevant, 5)
			for _, c := range []struct{ got, want float64 }{{m.Recall1, tc.r1}, {m.RecallK, tc.r5}, {m.NDCGK, tc.ndcg}, {m.MRR, tc.mrr}} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Fatalf("metrics %+v, want r1 %v r5 %v ndcg %v mrr %v", m, tc.r1, tc.r5, tc.ndcg, tc.mrr)
				}
			}
		})
	}
}

func TestSplitIsDeterministicAndDisjoint(t *testing.T) {
	var qs []evaluation.QueryRecord
	for _, q := range []string{"alpha one", "Alpha  ONE", "beta two", "gamma three", "delta four", "epsilon five", "zeta six", "eta seven"} {
		qs = append(qs, evaluation.QueryRecord{Query: q, RelevantToolIDs: []string{"x"}})
	}
	var h1, t1, h2, t2 bytes.Buffer
	nh, nt, err := evaluation.Split(qs, &h1, &t1)
	if err != nil || nh+nt != len(qs) {
		t.Fatalf("split %d+%d, %v", nh, nt, err)
	}
	if _, _, err := evaluation.Split(qs, &h2, &t2); err != nil || h1.String() != h2.String() || t1.String() != t2.String() {
		t.Fatal("split is not deterministic")
	}
	if nh == 0 || nt == 0 {
		t.Fatalf("degenerate split %d/%d", nh, nt)
	}
	if evaluation.Half("alpha one") != evaluation.Half("Alpha  ONE") {
		t.Fatal("texts equal after normalisation landed in different halves")
	}
	hist := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(h1.String()), "\n") {
		var q evaluation.QueryRecord
		_ = json.Unmarshal([]byte(l), &q)
		hist[strings.ToLower(strings.Join(strings.Fields(q.Query), " "))] = true
	}
	for _, l := range strings.Split(strings.TrimSpace(t1.String()), "\n") {
		var q evaluation.QueryRecord
		_ = json.Unmarshal([]byte(l), &q)
		if hist[strings.ToLower(strings.Join(strings.Fields(q.Query), " "))] {
			t.Fatalf("%q is in both halves", q.Query)
		}
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"MixerBox_Translate_AI_language_tutor": "Mixer Box Translate AI language tutor",
		"ResearchHelper":                       "Research Helper",
		"ChatOCR":                              "Chat OCR",
		"airqualityforeast":                    "airqualityforeast",
		"ph_ai_news_query":                     "ph ai news query",
	} {
		if got := evaluation.Words(in); got != want {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseWeights(t *testing.T) {
	w, err := evaluation.ParseWeights("semantic=0.9, usage=0")
	if err != nil || w.Semantic != 0.9 || w.Usage != 0 || w.Keyword != retrieval.DefaultWeights().Keyword {
		t.Fatalf("weights %+v, %v", w, err)
	}
	for _, bad := range []string{"semantic", "nope=1", "keyword=-1", "keyword=x"} {
		if _, err := evaluation.ParseWeights(bad); !errors.Is(err, fault.ErrMalformed) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

func writeLines(t *testing.T, path string, v ...any) {
	t.Helper()
	var b bytes.Buffer
	for _, x := range v {
		js, _ := json.Marshal(x)
		b.Write(append(js, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunWithHistory indexes a tiny set, then shows that history teaches
// the usage signal a vocabulary the tool descriptions never use.
func TestRunWithHistory(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.jsonl")
	queries := filepath.Join(dir, "queries.jsonl")
	history := filepath.Join(dir, "history.jsonl")
	writeLines(t, tools,
		evaluation.ToolRecord{ID: "WeatherNow", Name: "WeatherNow", Description: "Current weather and forecast for a city.", Category: "plugin"},
		evaluation.ToolRecord{ID: "FxRates", Name: "FxRates", Description: "Currency exchange rates and conversion.", Category: "plugin", DescriptionForModel: "Convert money between currencies."},
		evaluation.ToolRecord{ID: "ChefBot", Name: "ChefBot", Description: "Recipes and cooking instructions.", Category: "plugin"},
		evaluation.ToolRecord{ID: "MapsPro", Name: "MapsPro", Description: "Directions and travel routes.", Category: "plugin"},
	)
	writeLines(t, queries,
		evaluation.QueryRecord{Query: "what is the weather forecast in Paris", RelevantToolIDs: []string{"WeatherNow"}},
		evaluation.QueryRecord{Query: "convert dollars to euros currency", RelevantToolIDs: []string{"FxRates"}},
		evaluation.QueryRecord{Query: "umbrella tomorrow drizzle", RelevantToolIDs: []string{"WeatherNow"}},
		evaluation.QueryRecord{Query: "lasagna recipe and weather", RelevantToolIDs: []string{"ChefBot", "WeatherNow"}},
	)
	writeLines(t, history,
		evaluation.QueryRecord{Query: "need an umbrella for the drizzle", RelevantToolIDs: []string{"WeatherNow"}},
		evaluation.QueryRecord{Query: "drizzle umbrella outlook tomorrow", RelevantToolIDs: []string{"WeatherNow"}},
		evaluation.QueryRecord{Query: "what is the weather forecast in Paris", RelevantToolIDs: []string{"WeatherNow"}},
	)
	var emb embed.Model = retrievaltest.Words{Dim: 256}
	run := func(hist string) (evaluation.Report, string) {
		var out, progress bytes.Buffer
		rep, err := evaluation.Run(context.Background(), evaluation.Options{Tools: tools, Queries: queries, History: hist, Embedder: emb, JSON: true, Progress: &progress}, &out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(progress.String(), "search hybrid") {
			t.Fatalf("no progress bar: %q", progress.String())
		}
		return rep, out.String()
	}
	zero, out := run("")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last map[string]map[string]float64
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("last line is not JSON: %q: %v", lines[len(lines)-1], err)
	}
	for _, s := range []string{"hybrid", "semantic", "keyword"} {
		m, ok := last[s]
		if !ok {
			t.Fatalf("JSON lacks %s: %v", s, last)
		}
		for _, k := range []string{"recall@1", "recall@5", "ndcg@5", "mrr", "p50_ms", "p95_ms"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("%s lacks %s", s, k)
			}
		}
	}
	if !strings.Contains(out, "Recall@1") || zero[retrieval.StrategyHybrid].N != 4 {
		t.Fatalf("table:\n%s", out)
	}
	withHist, out := run(history)
	// The history's copy of a test query text is dropped from the test set.
	if n := withHist[retrieval.StrategyHybrid].N; n != 3 {
		t.Fatalf("evaluated %d queries, want 3 (one shared with history)\n%s", n, out)
	}
	if withHist[retrieval.StrategyHybrid].MRR < 0.99*withHist[retrieval.StrategySemantic].MRR || withHist[retrieval.StrategyHybrid].Recall1 < 2.0/3 {
		t.Fatalf("history did not help hybrid:\n%s", out)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	_ = os.WriteFile(bad, []byte("{\"query\": \"x\"}\n"), 0o644)
	emb := retrievaltest.Words{Dim: 16}
	if _, err := evaluation.Run(context.Background(), evaluation.Options{Queries: bad, Embedder: emb}, &bytes.Buffer{}); !errors.Is(err, fault.ErrMalformed) {
		t.Fatalf("missing tools: %v", err)
	}
	if _, err := evaluation.ReadQueries(bad); !errors.Is(err, fault.ErrMalformed) {
		t.Fatalf("query without relevant ids: %v", err)
	}
}

// counting is an embedder that counts the texts it embeds.
type counting struct {
	retrievaltest.Words
	name string
	n    *int
}

func (c counting) Name() string { return c.name }
func (c counting) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	*c.n += len(texts)
	return c.Words.EmbedDocuments(ctx, texts)
}
func (c counting) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	*c.n++
	return c.Words.EmbedQuery(ctx, text)
}

func TestVectorCacheEmbedsEachTextOnce(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.jsonl")
	queries := filepath.Join(dir, "queries.jsonl")
	cache := filepath.Join(dir, "vectors.gob")
	writeLines(t, tools,
		evaluation.ToolRecord{ID: "WeatherNow", Name: "WeatherNow", Description: "Current weather and forecast for a city."},
		evaluation.ToolRecord{ID: "FxRates", Name: "FxRates", Description: "Currency exchange rates and conversion."},
	)
	writeLines(t, queries,
		evaluation.QueryRecord{Query: "weather forecast in Paris", RelevantToolIDs: []string{"WeatherNow"}},
		evaluation.QueryRecord{Query: "convert dollars to euros", RelevantToolIDs: []string{"FxRates"}},
	)
	run := func(name string) (evaluation.Report, int, error) {
		n := 0
		emb := counting{Words: retrievaltest.Words{Dim: 64}, name: name, n: &n}
		rep, err := evaluation.Run(context.Background(), evaluation.Options{Tools: tools, Queries: queries, Embedder: emb, VectorCache: cache}, &bytes.Buffer{})
		return rep, n, err
	}
	first, n1, err := run("words")
	if err != nil {
		t.Fatal(err)
	}
	if n1 < 4 {
		t.Fatalf("first run embedded %d texts, want at least 4 (2 tools, 2 queries)", n1)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache file after the first run: %v", err)
	}
	second, n2, err := run("words")
	if err != nil {
		t.Fatal(err)
	}
	if n2 != 0 {
		t.Fatalf("second run embedded %d texts, want 0 (all cached)", n2)
	}
	for s, m := range first {
		if a, b := m.MRR, second[s].MRR; a != b {
			t.Fatalf("%s MRR %v with fresh vectors, %v with cached ones", s, a, b)
		}
	}
	_, _, err = run("another-model")
	if !errors.Is(err, fault.ErrMalformed) || !strings.Contains(err.Error(), "vector-cache") {
		t.Fatalf("a cache of another model: %v, want a malformed vector-cache error", err)
	}
}

func TestCompletenessSubsetsAndParameters(t *testing.T) {
	if m := evaluation.Score([]string{"b", "x", "a"}, []string{"a", "b"}, 5); m.CompleteK != 1 || m.RecallK != 1 {
		t.Fatalf("both found: %+v", m)
	}
	if m := evaluation.Score([]string{"b", "x"}, []string{"a", "b"}, 5); m.CompleteK != 0 || m.RecallK != 0.5 {
		t.Fatalf("one of two: %+v", m)
	}
	list := evaluation.ToolRecord{ID: "t", Parameters: json.RawMessage(`[{"name": "city", "type": "string", "description": "where"}, {"name": "days", "type": "int", "required": false}]`)}
	schema, err := list.InputSchema()
	if err != nil || !strings.Contains(string(schema), `"required":["city"]`) || !strings.Contains(string(schema), `"days":{"type":"integer"}`) {
		t.Fatalf("list parameters: %s %v", schema, err)
	}
	if s, err := (evaluation.ToolRecord{ID: "t", Parameters: json.RawMessage(`{"type": "object"}`)}).InputSchema(); err != nil || string(s) != `{"type": "object"}` {
		t.Fatalf("schema parameters: %s %v", s, err)
	}
	for _, bad := range []string{`"city"`, `[{"type": "string"}]`, `{`} {
		if _, err := (evaluation.ToolRecord{ID: "t", Parameters: json.RawMessage(bad)}).InputSchema(); err == nil {
			t.Errorf("parameters %s accepted", bad)
		}
	}

	dir := t.TempDir()
	tools, queries := filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl")
	writeLines(t, tools,
		evaluation.ToolRecord{ID: "WeatherNow", Name: "WeatherNow", Description: "Current weather and forecast for a city.",
			Parameters: json.RawMessage(`[{"name": "city", "type": "string", "description": "the city"}]`)},
		evaluation.ToolRecord{ID: "ChefBot", Name: "ChefBot", Description: "Recipes and cooking instructions."},
		evaluation.ToolRecord{ID: "MapsPro", Name: "MapsPro", Description: "Directions and travel routes."},
	)
	writeLines(t, queries,
		evaluation.QueryRecord{Query: "weather forecast for the city", RelevantToolIDs: []string{"WeatherNow"}, Subset: "single"},
		evaluation.QueryRecord{Query: "cooking recipes and weather forecast", RelevantToolIDs: []string{"ChefBot", "WeatherNow"}, Subset: "multi"},
	)
	var out bytes.Buffer
	rep, err := evaluation.Run(context.Background(), evaluation.Options{Tools: tools, Queries: queries, Embedder: retrievaltest.Words{Dim: 256},
		Strategies: []retrieval.Strategy{retrieval.StrategyHybrid}, JSON: true}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := rep["hybrid/multi"]; !ok || m.N != 1 || rep["hybrid/single"].N != 1 || rep[retrieval.StrategyHybrid].N != 2 {
		t.Fatalf("subsets: %+v\n%s", rep, out.String())
	}
	if !strings.Contains(out.String(), "Complete@5") || !strings.Contains(out.String(), "hybrid/multi") {
		t.Fatalf("table:\n%s", out.String())
	}
}

func TestLeaveOneOut(t *testing.T) {
	dir := t.TempDir()
	tools, queries := filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl")
	writeLines(t, tools,
		evaluation.ToolRecord{ID: "WeatherNow", Name: "WeatherNow", Description: "Current weather and forecast for a city."},
		evaluation.ToolRecord{ID: "FxRates", Name: "FxRates", Description: "Currency exchange rates and conversion."},
		evaluation.ToolRecord{ID: "ChefBot", Name: "ChefBot", Description: "Recipes and cooking instructions."},
	)
	writeLines(t, queries,
		evaluation.QueryRecord{Query: "current weather forecast for a city", RelevantToolIDs: []string{"WeatherNow"}},
		evaluation.QueryRecord{Query: "currency exchange rates and conversion", RelevantToolIDs: []string{"FxRates"}},
		evaluation.QueryRecord{Query: "recipes and cooking instructions", RelevantToolIDs: []string{"ChefBot"}},
	)
	type lastLine struct {
		LeaveOneOut evaluation.LeaveOneOut  `json:"leaveOneOut"`
		Calibrated  *evaluation.LeaveOneOut `json:"calibrated"`
		Curve       []evaluation.CurvePoint `json:"curve"`
	}
	run := func(o evaluation.Options) lastLine {
		t.Helper()
		o.Tools, o.Queries, o.Embedder, o.JSON, o.Protocol = tools, queries, retrievaltest.Words{Dim: 256}, true, evaluation.ProtocolLeaveOneOut
		var out bytes.Buffer
		if _, err := evaluation.Run(context.Background(), o, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var last lastLine
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
			t.Fatalf("last line: %q: %v", lines[len(lines)-1], err)
		}
		return last
	}
	// Each query is its tool's own description: present, the right tool is
	// substituted; taken out, the others are far below the bar.
	got := run(evaluation.Options{Rule: retrieval.SubstituteRule{Threshold: 0.6}, Calibrate: true})
	loo := got.LeaveOneOut
	if loo.N != 3 || loo.NothingFits != 1 || loo.Recall != 1 || loo.Precision != 1 {
		t.Fatalf("leave-one-out: %+v", got)
	}
	if got.Calibrated == nil {
		t.Fatalf("no calibrated rule: %+v", got)
	}
	// A bar nothing reaches substitutes nothing: all "nothing fits", no recall.
	if loo := run(evaluation.Options{Rule: retrieval.SubstituteRule{Threshold: 1}}).LeaveOneOut; loo.NothingFits != 1 || loo.Recall != 0 || loo.Substituted != 0 {
		t.Fatalf("threshold 1: %+v", loo)
	}
}

// The curve is the rule over its confidence bar: one point per step, the
// bar rising, so what it substitutes can only shrink, and "nothing fits"
// can only grow.
func TestLeaveOneOutCurve(t *testing.T) {
	dir := t.TempDir()
	tools, queries := filepath.Join(dir, "tools.jsonl"), filepath.Join(dir, "queries.jsonl")
	writeLines(t, tools,
		evaluation.ToolRecord{ID: "WeatherNow", Name: "WeatherNow", Description: "Current weather and forecast for a city."},
		evaluation.ToolRecord{ID: "WeatherSoon", Name: "WeatherSoon", Description: "Weather forecast for the coming days in a city."},
		evaluation.ToolRecord{ID: "FxRates", Name: "FxRates", Description: "Currency exchange rates and conversion."},
		evaluation.ToolRecord{ID: "ChefBot", Name: "ChefBot", Description: "Recipes and cooking instructions."},
	)
	writeLines(t, queries,
		evaluation.QueryRecord{Query: "current weather forecast for a city", RelevantToolIDs: []string{"WeatherNow"}},
		evaluation.QueryRecord{Query: "weather in the coming days", RelevantToolIDs: []string{"WeatherSoon"}},
		evaluation.QueryRecord{Query: "currency exchange rates and conversion", RelevantToolIDs: []string{"FxRates"}},
		evaluation.QueryRecord{Query: "recipes and cooking instructions", RelevantToolIDs: []string{"ChefBot"}},
	)
	var out bytes.Buffer
	samples := filepath.Join(dir, "samples.jsonl")
	o := evaluation.Options{Tools: tools, Queries: queries, Embedder: retrievaltest.Words{Dim: 256}, JSON: true,
		Protocol: evaluation.ProtocolLeaveOneOut, FitSamples: samples}
	if _, err := evaluation.Run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last struct {
		Curve []evaluation.CurvePoint  `json:"curve"`
		Model *retrieval.DecisionModel `json:"decisionModel"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if len(last.Curve) != 39 || last.Model == nil {
		t.Fatalf("curve of %d points, model %v:\n%s", len(last.Curve), last.Model, out.String())
	}
	for i, p := range last.Curve[1:] {
		prev := last.Curve[i]
		if p.Confidence <= prev.Confidence || p.Substituted > prev.Substituted || p.NothingFits < prev.NothingFits || p.Recall > prev.Recall {
			t.Fatalf("not monotone at %+v after %+v", p, prev)
		}
	}
	if !strings.Contains(out.String(), "curve over the confidence bar") || !strings.Contains(out.String(), "fitted decision model") {
		t.Fatalf("text lacks the curve or the model:\n%s", out.String())
	}
	// The samples stay for the next run to pool: 2 searches per query.
	raw, err := os.ReadFile(samples)
	if err != nil || strings.Count(string(raw), "\n") != 8 {
		t.Fatalf("samples file: %v, %d lines", err, strings.Count(string(raw), "\n"))
	}
}
