package evaluation_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/evaluation"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/adapter"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
)

// The tool-disjoint split scores the same queries with the adapter off and
// on, only queries for tools the adapter did not train on, and the adapter
// reports what it trained on.
func TestAdapterToolDisjointSplit(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.jsonl")
	queries := filepath.Join(dir, "queries.jsonl")
	topics := []string{"weather forecast rain", "currency exchange money", "recipe cooking food", "maps directions travel",
		"stocks shares market", "music songs playlist", "flights airline tickets", "news headlines articles"}
	var trs []any
	var qrs []any
	for i, tp := range topics {
		id := fmt.Sprintf("tool%d", i)
		trs = append(trs, evaluation.ToolRecord{ID: id, Name: id, Description: "Find " + tp + ". Answers about " + tp + ".", Category: "plugin"})
		for j := 0; j < 3; j++ {
			qrs = append(qrs, evaluation.QueryRecord{Query: fmt.Sprintf("%s question %d", tp, j), RelevantToolIDs: []string{id}})
		}
	}
	writeLines(t, tools, trs...)
	writeLines(t, queries, qrs...)
	run := func(mode string) (evaluation.Report, string) {
		var out bytes.Buffer
		rep, err := evaluation.Run(context.Background(), evaluation.Options{
			Tools: tools, Queries: queries, Embedder: retrievaltest.Words{Dim: 64},
			Strategies: []retrieval.Strategy{retrieval.StrategySemantic},
			Adapter:    mode, AdapterTrainTools: 0.5, AdapterOptions: adapter.Options{Epochs: 3, Seed: 1},
		}, &out)
		if err != nil {
			t.Fatal(err)
		}
		return rep, out.String()
	}
	off, outOff := run(evaluation.AdapterOff)
	on, outOn := run(evaluation.AdapterCatalogue)
	n := off[retrieval.StrategySemantic].N
	if n == 0 || n >= len(qrs) || n%3 != 0 {
		t.Fatalf("scored %d of %d queries; want the three of each held-out tool\n%s", n, len(qrs), outOff)
	}
	if on[retrieval.StrategySemantic].N != n {
		t.Fatalf("adapter on scored %d queries, off %d", on[retrieval.StrategySemantic].N, n)
	}
	if strings.Contains(outOff, "adapter:") || !strings.Contains(outOn, fmt.Sprintf("adapter: %d tools", len(topics)-n/3)) {
		t.Fatalf("adapter line: off\n%s\non\n%s", outOff, outOn)
	}
}
