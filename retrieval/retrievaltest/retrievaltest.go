// Package retrievaltest holds test helpers for retrieval and its API: a
// deterministic word-hashing embedder, a fresh SQLite store, a way to
// register manifests, and the reservation catalogue used by the
// disambiguation tests.
package retrievaltest

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/tool"
)

// Words is a deterministic bag-of-words embedder: each lower-cased word
// (and its 5-letter prefix, a crude stemmer) adds ±1 to a hashed dimension.
// Texts sharing words have positive cosine; it needs no model files.
type Words struct{ Dim int }

// Name implements embed.Model.
func (w Words) Name() string { return "retrievaltest-words" }

// Dimension implements embed.Model.
func (w Words) Dimension() int { return w.Dim }

// EmbedQuery implements embed.Embedder.
func (w Words) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	v := make([]float32, w.Dim)
	for _, tok := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, f := range []string{tok, stem(tok)} {
			h := fnv.New64a()
			h.Write([]byte(f))
			x := h.Sum64()
			sign := float32(1)
			if x>>63 == 1 {
				sign = -1
			}
			v[x%uint64(w.Dim)] += sign
		}
	}
	return graph.Normalize(v), nil
}

func stem(tok string) string {
	if len(tok) > 5 {
		return "~" + tok[:5]
	}
	return "~" + tok
}

// EmbedDocuments implements embed.Embedder.
func (w Words) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i], _ = w.EmbedQuery(ctx, t)
	}
	return out, nil
}

// Store opens a fresh SQLite store in a temp dir and records emb's model.
func Store(t testing.TB, emb Words) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.EnsureEmbedder(context.Background(), graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dim}); err != nil {
		t.Fatalf("ensure embedder: %v", err)
	}
	return s
}

// Register embeds and upserts manifests (the registry's projection).
func Register(t testing.TB, s graph.Store, emb Words, ms ...tool.Manifest) {
	t.Helper()
	for _, m := range ms {
		if m.ShortDescription == "" {
			m.ShortDescription = m.Description
		}
		if m.Status == "" {
			m.Status = graph.StatusActive
		}
		vec, _ := emb.EmbedQuery(context.Background(), tool.EmbeddingText(m))
		if _, err := s.UpsertTool(context.Background(), tool.ToGraph(m, vec)); err != nil {
			t.Fatalf("upsert %s: %v", m.ToolID, err)
		}
	}
}

// Manifest is a small valid manifest with a one-parameter input schema.
func Manifest(id, verb, category, desc string) tool.Manifest {
	return tool.Manifest{
		ToolID: id, Verb: verb, Name: strings.ReplaceAll(id, ".", " "), Description: desc, Category: category,
		PermissionsRequired: []string{"public"},
		InputSchema:         json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`),
		Examples:            []tool.Example{{Scenario: "typical call", Input: json.RawMessage(`{"input":"x"}`)}},
		Complexity:          tool.ComplexityLow,
	}
}

// Reservation returns the two MAKE_RESERVATION tools of the demo catalogue:
// an airline seat booking about Southwest (an Airline) and a restaurant
// table reservation about restaurants, plus a flight-status tool that
// depends on nothing. Their descriptions share the reservation vocabulary so
// that text alone cannot tell them apart.
func Reservation() []tool.Manifest {
	air := Manifest("airline.book_seat", "MAKE_RESERVATION", "travel", "Make a reservation: book a seat for a passenger.")
	air.Entities = []tool.Entity{{Name: "Southwest", Type: "Airline", Aliases: []string{"Southwest Airlines", "WN"}}, {Name: "Flight", Type: "Trip", Aliases: []string{"flights"}}}
	air.Relationships = &tool.Relationships{Pairings: []tool.Pairing{{ToolID: "airline.flight_status", Score: 0.8, Sequence: "after"}}}
	rest := Manifest("restaurant.reserve_table", "MAKE_RESERVATION", "dining", "Make a reservation: book a table for a party.")
	rest.Entities = []tool.Entity{{Name: "Restaurant", Type: "Venue", Aliases: []string{"dinner", "lunch", "table"}}}
	status := Manifest("airline.flight_status", "GET_FLIGHT_STATUS", "travel", "Look up the status of a flight.")
	return []tool.Manifest{air, rest, status}
}
