package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
)

// Example opens a store, records the embedder, registers two tools and finds
// the one nearest to a query vector.
func Example() {
	dir, err := os.MkdirTemp("", "toolsmith-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := sqlite.Open(filepath.Join(dir, "graph.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// The embedder's name and dimension are recorded once; a store built
	// with another model refuses to open its vectors to a different one.
	if err := store.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "toy-3d", Dimension: 3}); err != nil {
		log.Fatal(err)
	}
	for _, t := range []graph.Tool{
		{
			ToolSummary: graph.ToolSummary{ID: "fx.convert", Verb: "CONVERT_CURRENCY", Name: "Currency Converter", Category: "finance"},
			Description: "Convert an amount between currencies.",
			Embedding:   []float32{1, 0, 0},
		},
		{
			ToolSummary: graph.ToolSummary{ID: "weather.now", Verb: "GET_WEATHER", Name: "Current Weather", Category: "weather"},
			Description: "Current conditions for a city.",
			Embedding:   []float32{0, 1, 0},
		},
	} {
		res, err := store.UpsertTool(ctx, t)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("registered %s (created=%v, revision %d)\n", t.ID, res.Created, res.Revision)
	}

	hits, err := store.VectorSearch(ctx, []float32{0.9, 0.1, 0}, 1, graph.Filter{})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.3f\n", h.Tool.ID, h.Score)
	}
	// Output:
	// registered fx.convert (created=true, revision 1)
	// registered weather.now (created=true, revision 1)
	// fx.convert 0.994
}
