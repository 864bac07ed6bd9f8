package neo4j_test

import (
	"context"
	"fmt"
	"log"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/neo4j"
)

// ExampleOpen connects to a server, records the embedder (which creates the
// vector indexes with its dimension) and searches. It needs a running Neo4j 5,
// so it has no Output comment and is only compiled.
func ExampleOpen() {
	ctx := context.Background()
	s, err := neo4j.Open(ctx, neo4j.Config{URI: "neo4j://localhost:7687", User: "neo4j", Password: "secret"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "use-lite@0.2.0", Dimension: 512}); err != nil {
		log.Fatal(err) // graph.ErrEmbedderMismatch: the store needs a reindex
	}
	hits, err := s.TextSearch(ctx, "convert currency", 5, graph.Filter{})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.Tool.ID, h.Score)
	}
}

// ExampleStatements lists the Cypher the store may send.
func ExampleStatements() {
	for _, st := range neo4j.Statements()[:3] {
		fmt.Println(st.Name)
	}
	// Output:
	// activeEmbeddings
	// addRateCount
	// appendAudit
}
