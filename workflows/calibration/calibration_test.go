package calibration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/embed/use"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/workflows"
)

type evalTool struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

type evalQuery struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant_tool_ids"`
	Subset   string   `json:"subset"`
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sample is one query's best match.
type sample struct {
	sim     float64
	correct bool
}

// TestCalibrate embeds the MetaTool tools as Toolsmith embeds manifests
// (tool.EmbeddingText of name and description), takes a deterministic
// sample of the single-tool queries, finds each query's most similar tool,
// and reports, for each threshold, the precision of substituting the top-1
// tool when it clears the threshold and the share of queries substituted.
func TestCalibrate(t *testing.T) {
	modelDir, evalDir := os.Getenv("TOOLSMITH_MODEL_DIR"), os.Getenv("TOOLSMITH_EVAL_DIR")
	if modelDir == "" || evalDir == "" {
		t.Skip("set TOOLSMITH_MODEL_DIR (USE-lite weights) and TOOLSMITH_EVAL_DIR (MetaTool tools.jsonl, queries.jsonl) to rerun the calibration")
	}
	limit := 1500
	if s := os.Getenv("TOOLSMITH_CALIBRATION_QUERIES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		limit = n
	}
	model, err := use.Load(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools := readJSONL[evalTool](t, filepath.Join(evalDir, "tools.jsonl"))
	texts := make([]string, len(tools))
	for i, tl := range tools {
		texts[i] = tool.EmbeddingText(tool.Manifest{Name: tl.Name, Description: tl.Description})
	}
	tvecs, err := model.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	var queries []evalQuery
	for _, q := range readJSONL[evalQuery](t, filepath.Join(evalDir, "queries.jsonl")) {
		if q.Subset == "single" && len(q.Relevant) == 1 {
			queries = append(queries, q)
		}
	}
	stride := max(1, len(queries)/limit)
	var samples []sample
	for i := 0; i < len(queries) && len(samples) < limit; i += stride {
		q := queries[i]
		qv, err := model.EmbedQuery(ctx, q.Query)
		if err != nil {
			t.Fatal(err)
		}
		best, bestSim := -1, -2.0
		for j, tv := range tvecs {
			var dot float64
			for k := range tv {
				dot += float64(tv[k]) * float64(qv[k])
			}
			if dot > bestSim {
				best, bestSim = j, dot
			}
		}
		samples = append(samples, sample{sim: bestSim, correct: tools[best].ID == q.Relevant[0]})
	}
	report(t, samples)
}

func report(t *testing.T, samples []sample) {
	var right, wrong []float64
	for _, s := range samples {
		if s.correct {
			right = append(right, s.sim)
		} else {
			wrong = append(wrong, s.sim)
		}
	}
	sort.Float64s(right)
	sort.Float64s(wrong)
	q := func(xs []float64, p float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		return xs[int(p*float64(len(xs)-1))]
	}
	t.Logf("queries %d, top-1 correct %d (%.1f%%)", len(samples), len(right), 100*float64(len(right))/float64(len(samples)))
	t.Logf("similarity of correct top-1: p10 %.3f p25 %.3f p50 %.3f p75 %.3f", q(right, .1), q(right, .25), q(right, .5), q(right, .75))
	t.Logf("similarity of wrong top-1:   p50 %.3f p75 %.3f p90 %.3f p95 %.3f", q(wrong, .5), q(wrong, .75), q(wrong, .9), q(wrong, .95))
	t.Logf("%-9s %-10s %-12s %-8s", "threshold", "precision", "substituted", "F0.5")
	for th := 0.30; th <= 0.901; th += 0.05 {
		var sub, ok int
		for _, s := range samples {
			if s.sim >= th {
				sub++
				if s.correct {
					ok++
				}
			}
		}
		prec := 0.0
		if sub > 0 {
			prec = float64(ok) / float64(sub)
		}
		recall := float64(ok) / float64(max(1, len(right)))
		f := 0.0
		if prec+recall > 0 {
			f = 1.25 * prec * recall / (0.25*prec + recall)
		}
		t.Logf("%-9s %-10s %-12s %-8s", fmt.Sprintf("%.2f", th), fmt.Sprintf("%.3f", prec), fmt.Sprintf("%.1f%%", 100*float64(sub)/float64(len(samples))), fmt.Sprintf("%.3f", f))
	}
}

// demoCatalogue loads USE-Lite (skipping without TOOLSMITH_MODEL_DIR) and
// embeds the demo catalogue's manifests as the registry does.
func demoCatalogue(t *testing.T) (*use.Model, []tool.Manifest, [][]float32) {
	t.Helper()
	modelDir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if modelDir == "" {
		t.Skip("set TOOLSMITH_MODEL_DIR (USE-lite weights) to run")
	}
	model, err := use.Load(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mans, err := demo.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(mans))
	for i, m := range mans {
		texts[i] = tool.EmbeddingText(m)
	}
	vecs, err := model.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	return model, mans, vecs
}

// TestDemoVerbsClearDefault checks, on the demo catalogue, that verbs a
// planner would write for catalogue tools reach workflows.DefaultThreshold
// against the right tool, and that the right tool is the most similar one.
func TestDemoVerbsClearDefault(t *testing.T) {
	model, mans, vecs := demoCatalogue(t)
	ctx := context.Background()
	cases := []struct{ verb, desc, want string }{
		{"CONVERT_CURRENCY", "convert an amount of money from US dollars to euros", "currency.convert"},
		{"CONVERT_CURRENCY", "", "currency.convert"},
		{"CONVERT_UNITS", "convert miles to kilometres", "units.convert"},
		{"CONVERT_TIMEZONE", "what time is a Denver meeting in Berlin", "timezone.convert_time"},
	}
	for _, c := range cases {
		qv, err := model.EmbedQuery(ctx, activities.VerbQuery(c.verb, c.desc))
		if err != nil {
			t.Fatal(err)
		}
		best, bestSim, wantSim := "", -2.0, -2.0
		for i, v := range vecs {
			var dot float64
			for k := range v {
				dot += float64(v[k]) * float64(qv[k])
			}
			if dot > bestSim {
				best, bestSim = mans[i].ToolID, dot
			}
			if mans[i].ToolID == c.want {
				wantSim = dot
			}
		}
		t.Logf("%s %q: %s %.3f (best %s %.3f)", c.verb, c.desc, c.want, wantSim, best, bestSim)
		if best != c.want || wantSim < workflows.DefaultThreshold {
			t.Errorf("%s %q: want %s ≥ %.2f, got %.3f (best %s %.3f)", c.verb, c.desc, c.want, workflows.DefaultThreshold, wantSim, best, bestSim)
		}
	}
}

// TestDemoVerbsDecision runs the whole decision on the demo catalogue as a
// server does (SQLite store, hybrid retrieval, retrieval.DefaultSubstituteRule
// on the searcher's candidates, no inputs): verbs a planner would write for
// one tool substitute it, paraphrases included; a verb three tools share
// (cancelling a flight, hotel or restaurant reservation) is a near tie that
// substitutes nothing, though its best candidate is close; and a verb no
// tool serves substitutes nothing.
func TestDemoVerbsDecision(t *testing.T) {
	model, mans, vecs := demoCatalogue(t)
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: model.Name(), Dimension: model.Dimension()}); err != nil {
		t.Fatal(err)
	}
	for i, m := range mans {
		if _, err := st.UpsertTool(ctx, tool.ToGraph(m, vecs[i])); err != nil {
			t.Fatal(err)
		}
	}
	searcher := activities.RetrievalSearcher{Service: retrieval.New(st, model, retrieval.Options{})}
	caller := access.Caller{UserID: "planner", Level: "owner", Groups: []string{access.Wildcard}}
	rule := retrieval.DefaultSubstituteRule()
	money := []string{"amount", "from", "to"}
	cases := []struct {
		verb, desc string
		inputs     []string
		want       string
	}{
		{"CONVERT_CURRENCY", "convert an amount of money from US dollars to euros", nil, "currency.convert"},
		{"CONVERT_CURRENCY", "convert an amount of money between currencies", nil, "currency.convert"}, // the README's example
		{"CONVERT_CURRENCY", "", nil, "currency.convert"},
		{"CONVERT_UNITS", "convert miles to kilometres", nil, "units.convert"},
		{"CONVERT_TIMEZONE", "what time is a Denver meeting in Berlin", nil, "timezone.convert_time"},
		// A paraphrase with no word of the tool's, and inputs that fill
		// its parameters (and not those of the currency tools behind it).
		{"EXCHANGE_MONEY", "change my dollars into yen", money, "currency.convert"},
		{"CANCEL_RESERVATION", "cancel a reservation", nil, ""},
		{"CANCEL_RESERVATION", "cancel my booking", nil, ""},
		{"CANCEL_RESERVATION", "cancel my booking", []string{"confirmation", "last_name"}, ""},
		{"ORDER_PIZZA", "order a large pizza for delivery", nil, ""}, // no tool does this
		{"ORDER_PIZZA", "", nil, ""},
		{"ORDER_PIZZA", "order a large pizza for delivery", []string{"size", "toppings", "address"}, ""},
	}
	for _, c := range cases {
		hits, err := searcher.Search(ctx, activities.SearchRequest{Query: activities.VerbQuery(c.verb, c.desc), Limit: workflows.DefaultSearchLimit, Caller: caller})
		if err != nil {
			t.Fatal(err)
		}
		cands := make([]retrieval.Candidate, len(hits))
		for i, h := range hits {
			cands[i] = retrieval.Candidate{Similarity: h.Similarity, Score: h.Score, Keyword: h.Keyword, Subword: h.Subword,
				InputFit: retrieval.InputFit(h.Tool.RequiredParams, c.inputs)}
		}
		ok, why := rule.Decide(cands)
		first := ""
		if len(hits) > 0 {
			first = hits[0].Tool.ID
		}
		t.Logf("%s %q %v: first %s, substitute %v (%s)", c.verb, c.desc, c.inputs, first, ok, why)
		switch {
		case c.want == "" && ok:
			t.Errorf("%s %q: substitute %v with %s (%s), want nothing", c.verb, c.desc, ok, first, why)
		case c.want != "" && (!ok || first != c.want):
			t.Errorf("%s %q: substitute %v with %s (%s), want %s", c.verb, c.desc, ok, first, why, c.want)
		}
	}
}
