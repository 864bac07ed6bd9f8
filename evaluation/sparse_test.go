package evaluation_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolsmith/toolsmith/embed/use"
	"github.com/toolsmith/toolsmith/evaluation"
	"github.com/toolsmith/toolsmith/retrieval"
)

// metatoolDir finds the MetaTool set beside the module
// (../shared/eval/metatool), and the USE-Lite weights; it skips without
// them (fails with TOOLSMITH_REQUIRE_MODEL=1 when the weights are missing).
func metatoolDir(t *testing.T) (data, model string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(root) == root {
			t.Fatal("go.mod not found above the test directory")
		}
		root = filepath.Dir(root)
	}
	model = os.Getenv("TOOLSMITH_MODEL_DIR")
	if model == "" {
		model = filepath.Join(root, ".cache", "models", use.DefaultDirName)
	}
	if _, err := os.Stat(filepath.Join(model, "model.json")); err != nil {
		msg := fmt.Sprintf("USE-Lite weights not found in %s", model)
		if os.Getenv("TOOLSMITH_REQUIRE_MODEL") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	data = filepath.Join(root, "..", "shared", "eval", "metatool")
	if _, err := os.Stat(filepath.Join(data, "queries.jsonl")); err != nil {
		t.Skipf("MetaTool set not found beside the module (%s)", data)
	}
	return data, model
}

// TestSparseHistoryNeverHurts holds that history never hurts, on the dev split:
// with history for ten tools only, the queries for every other tool lose
// no more Recall@5 than noise, and the queries for the ten gain. It uses
// the three-way split's choose part (a fixed sample) for the queries and
// the tune part for the history, never the report part.
func TestSparseHistoryNeverHurts(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds a sample of MetaTool with USE-Lite")
	}
	data, dir := metatoolDir(t)
	m, err := use.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := evaluation.ReadQueries(filepath.Join(data, "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var parts [3]bytes.Buffer
	if _, err := evaluation.Split3(qs, &parts[0], &parts[1], &parts[2]); err != nil {
		t.Fatal(err)
	}
	tune, choose := filepath.Join(tmp, "tune.jsonl"), filepath.Join(tmp, "choose.jsonl")
	for path, b := range map[string]*bytes.Buffer{tune: &parts[0], choose: &parts[1]} {
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	rep, err := evaluation.Run(context.Background(), evaluation.Options{
		Tools: filepath.Join(data, "tools.jsonl"), Queries: choose, History: tune, Embedder: m,
		Protocol: evaluation.ProtocolSparseHistory, Limit: 400,
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	hot, hot0 := rep[retrieval.StrategyHybrid+"/hot"], rep[retrieval.StrategyHybrid+"/hot/zero-shot"]
	cold, cold0 := rep[retrieval.StrategyHybrid+"/cold"], rep[retrieval.StrategyHybrid+"/cold/zero-shot"]
	if cold.N < 300 || hot.N < 20 {
		t.Fatalf("sample too small: %d cold, %d hot queries", cold.N, hot.N)
	}
	// Noise: a paired change of a few queries in a few hundred. Before
	// the gate on usage evidence this fell by about .26.
	if d := cold.RecallK - cold0.RecallK; d < -0.02 {
		t.Errorf("cold queries' Recall@5 %.4f → %.4f with sparse history; want a change within noise (≥ -.02)", cold0.RecallK, cold.RecallK)
	}
	if hot.RecallK < hot0.RecallK+0.03 {
		t.Errorf("hot queries' Recall@5 %.4f → %.4f; history must lift them", hot0.RecallK, hot.RecallK)
	}
}

// TestSplit3: the three-way split puts every query in one part, identical
// texts (up to case and spaces) in the same part, and fills all three.
func TestSplit3(t *testing.T) {
	var qs []evaluation.QueryRecord
	for i := range 300 {
		qs = append(qs, evaluation.QueryRecord{Query: fmt.Sprintf("query number %d", i), RelevantToolIDs: []string{"t"}})
	}
	var a, b, c bytes.Buffer
	n, err := evaluation.Split3(qs, &a, &b, &c)
	if err != nil {
		t.Fatal(err)
	}
	if n[0]+n[1]+n[2] != 300 || n[0] < 70 || n[1] < 70 || n[2] < 70 {
		t.Fatalf("parts %v: want all 300 queries spread over three parts", n)
	}
	if evaluation.Part("Query  NUMBER 7") != evaluation.Part("query number 7") {
		t.Fatal("the part must not depend on case or spacing")
	}
	if got := bytes.Count(a.Bytes(), []byte("\n")); got != n[0] {
		t.Fatalf("tune part has %d lines, counted %d", got, n[0])
	}
}

// TestSparseHistoryChoice: the hot tools are chosen among those with enough
// history, each keeps at most m queries, a multi-tool query keeps only its
// hot tools, and the choice is the same on every run.
func TestSparseHistoryChoice(t *testing.T) {
	var hist []evaluation.QueryRecord
	for i := range 40 {
		for _, id := range []string{"a", "b", "c", "d"} {
			hist = append(hist, evaluation.QueryRecord{Query: fmt.Sprintf("%s %d", id, i), RelevantToolIDs: []string{id}})
		}
		hist = append(hist, evaluation.QueryRecord{Query: fmt.Sprintf("rare %d", i%2), RelevantToolIDs: []string{"rare"}})
	}
	hist = append(hist, evaluation.QueryRecord{Query: "both", RelevantToolIDs: []string{"a", "b", "c", "d", "rare"}})
	hot, sel := evaluation.SparseHistory(hist, 2, 5)
	hot2, _ := evaluation.SparseHistory(hist, 2, 5)
	if len(hot) != 2 || fmt.Sprint(hot) != fmt.Sprint(hot2) {
		t.Fatalf("hot tools %v, then %v: want the same two", hot, hot2)
	}
	per := map[string]int{}
	for _, q := range sel {
		for _, id := range q.RelevantToolIDs {
			per[id]++
		}
	}
	for _, id := range hot {
		if per[id] != 5 {
			t.Errorf("%s keeps %d history queries, want 5", id, per[id])
		}
	}
	if len(per) != 2 || per["rare"] != 0 {
		t.Fatalf("history covers %v: only the hot tools (never the one with too little history)", per)
	}
}
