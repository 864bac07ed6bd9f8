package neo4j

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the statements the store sends")

// goldenDim is the embedding dimension of the golden cases.
const goldenDim = 4

var errGoldenRefused = errors.New("hard budget reached")

var goldenNow = time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)

func summaryJSON(t *testing.T, id, status string, tags ...string) string {
	t.Helper()
	b, err := json.Marshal(graph.ToolSummary{
		ID: id, Verb: "DO_" + id, Name: "Tool " + id, Category: "c", Tags: tags, Groups: []string{"default"},
		Permissions: []string{"public"}, Status: status, RequiredParams: []string{}, OptionalParams: []string{},
		UpdatedAt: goldenNow,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func embedderRecord() record {
	return record{"model": "golden-model", "dimension": int64(goldenDim)}
}

func goldenTool() graph.Tool {
	return graph.Tool{
		ToolSummary: graph.ToolSummary{
			ID: "airline.book", Verb: "MAKE_RESERVATION", Name: "Airline Booking",
			ShortDescription: "Book a flight.", Category: "travel",
			Tags: []string{"flights", "booking", ""}, Groups: []string{"default", "travel"},
			Permissions: []string{"authenticated"}, RequiredLevel: "user", Module: "airline",
			RequiredParams: []string{"from", "to"}, OptionalParams: []string{},
		},
		Description: "Book a seat on a scheduled flight.",
		UseCases:    []string{"fly to paris", "book a plane ticket"},
		Entities: []graph.EntityRef{
			{Name: " Southwest ", Type: "Airline", Aliases: []string{"SWA", "swa", "Southwest Airlines"}},
			{Name: "Airline"},
		},
		Relations: []graph.Relation{
			{Kind: graph.RelPairsWith, Target: "hotel.book", Score: 0.5, Sequence: "after"},
			{Kind: graph.RelPairsWith, Target: "hotel.book", Score: 0.75, Sequence: "after"},
			{Kind: graph.RelDependsOn, Target: "payments.charge"},
			{Kind: graph.RelAlternative, Target: "train.book"},
		},
		Embedding: []float32{0.5, 0.5, 0.5, 0.5},
		Manifest:  json.RawMessage(`{"toolId":"airline.book"}`),
	}
}

// goldenSessionID has the shape of a session id (a hex SHA-256).
const goldenSessionID = "7b4a6d0de1a4a6b3a7e0f4b2b4d8b1d2f1c4c1a3f3a2b9e3b6f5c6d7e8f9a0b1"

func goldenSession() graph.ConsoleSession {
	return graph.ConsoleSession{ID: goldenSessionID, KeyID: "k1", Principal: json.RawMessage(`{"subject":"key:k1","level":"admin"}`),
		CreatedAt: goldenNow, ExpiresAt: goldenNow.Add(time.Hour)}
}

type goldenCase struct {
	name  string
	setup func(t *testing.T, f *fakeRunner)
	run   func(ctx context.Context, s *Store) (any, error)
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"ensure_schema", nil, func(ctx context.Context, s *Store) (any, error) { return nil, s.EnsureSchema(ctx) }},
		{"ensure_embedder", func(t *testing.T, f *fakeRunner) { f.answer("ensureEmbedder", embedderRecord()) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "golden-model", Dimension: goldenDim})
			}},
		{"ensure_embedder_mismatch", func(t *testing.T, f *fakeRunner) { f.answer("ensureEmbedder", embedderRecord()) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "other-model", Dimension: 8})
			}},
		{"embedder_missing", nil, func(ctx context.Context, s *Store) (any, error) { return s.Embedder(ctx) }},
		{"upsert_new", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			f.answer("toolState", record{"revision": nil, "createdAt": nil})
		}, func(ctx context.Context, s *Store) (any, error) { return s.UpsertTool(ctx, goldenTool()) }},
		{"upsert_replace", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			f.answer("toolState", record{"revision": int64(2), "createdAt": int64(1700000000000000000)})
		}, func(ctx context.Context, s *Store) (any, error) {
			tl := goldenTool()
			tl.Entities, tl.Relations, tl.Embedding, tl.Module, tl.Status = nil, nil, nil, "", graph.StatusDeprecated
			return s.UpsertTool(ctx, tl)
		}},
		{"upsert_wrong_dimension", func(t *testing.T, f *fakeRunner) { f.answer("getEmbedder", embedderRecord()) },
			func(ctx context.Context, s *Store) (any, error) {
				tl := goldenTool()
				tl.Embedding = []float32{1, 2, 3}
				return s.UpsertTool(ctx, tl)
			}},
		{"get_tool", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.Tool{ToolSummary: graph.ToolSummary{ID: "a", Name: "A", Status: "active"}, Description: "d"})
			f.answer("getTool", record{"record": string(rec), "embedding": list(0.5, 0.5, 0.5, 0.5)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.GetTool(ctx, "a") }},
		{"get_tool_missing", nil, func(ctx context.Context, s *Store) (any, error) { return s.GetTool(ctx, "nope") }},
		{"manifest_runes", func(t *testing.T, f *fakeRunner) {
			a, _ := json.Marshal(graph.Tool{ToolSummary: graph.ToolSummary{ID: "a"}, Manifest: json.RawMessage(`{"d": "café <b> 😀"}`)})
			b, _ := json.Marshal(graph.Tool{ToolSummary: graph.ToolSummary{ID: "b"}})
			f.answer("manifestRecords", record{"id": "a", "record": string(a)}, record{"id": "b", "record": string(b)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.ManifestRunes(ctx) }},
		{"list_tools_allow", func(t *testing.T, f *fakeRunner) {
			f.answer("countTools", record{"total": int64(5)})
			// limit 2 → batches of 3; Allow hides "b", so a second batch is needed.
			f.answer("listTools",
				record{"id": "a", "summary": summaryJSON(t, "a", "active")},
				record{"id": "b", "summary": summaryJSON(t, "b", "active", "secret")},
				record{"id": "c", "summary": summaryJSON(t, "c", "active")})
			f.answer("listTools",
				record{"id": "d", "summary": summaryJSON(t, "d", "active")},
				record{"id": "e", "summary": summaryJSON(t, "e", "active")})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.ListTools(ctx, graph.ListQuery{After: "", Limit: 2, Filter: graph.Filter{
				Categories: []string{"c"}, Modules: []string{"m"},
				Allow: func(ts *graph.ToolSummary) bool { return len(ts.Tags) == 0 },
			}})
		}},
		{"set_status", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.Tool{ToolSummary: graph.ToolSummary{ID: "a", Name: "A", Status: "active"}, Manifest: json.RawMessage(`{"toolId":"a"}`)})
			f.answer("setStatusRead", record{"revision": int64(3), "record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.SetStatus(ctx, "a", graph.StatusDeprecated, "superseded by b")
		}},
		{"set_status_missing", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.SetStatus(ctx, "nope", graph.StatusDisabled, "")
		}},
		{"history", func(t *testing.T, f *fakeRunner) {
			f.answer("history",
				record{"revision": int64(1), "status": "active", "reason": "", "manifest": `{"v":1}`, "at": int64(1)},
				record{"revision": int64(2), "status": "deprecated", "reason": "old", "manifest": nil, "at": int64(2)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.History(ctx, "a") }},
		{"related_pairs", func(t *testing.T, f *fakeRunner) {
			f.answer("toolExists", record{"id": "a"})
			f.answer("relatedPairs",
				record{"summary": summaryJSON(t, "b", "active"), "score": 0.9},
				record{"summary": summaryJSON(t, "c", "active"), "score": 0.5},
				record{"summary": summaryJSON(t, "d", "active"), "score": 0.1})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.Related(ctx, "a", graph.RelPairsWith, 2, graph.Filter{Statuses: []string{"active", "deprecated"}})
		}},
		{"related_alternatives_missing", nil, func(ctx context.Context, s *Store) (any, error) {
			return s.Related(ctx, "nope", graph.RelAlternative, 0, graph.Filter{})
		}},
		{"vector_search_overfetch", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			// k=2 → fetch 8: the index is full (scanned=8) but Allow keeps
			// one hit, so the store asks again for 32 and gets all 9.
			f.answer("vectorSearch", record{"scanned": int64(8), "hits": list(
				map[string]any{"summary": summaryJSON(t, "a", "active", "secret"), "score": 1.0},
				map[string]any{"summary": summaryJSON(t, "b", "active"), "score": 0.75})})
			f.answer("vectorSearch", record{"scanned": int64(9), "hits": list(
				map[string]any{"summary": summaryJSON(t, "a", "active", "secret"), "score": 1.0},
				map[string]any{"summary": summaryJSON(t, "b", "active"), "score": 0.75},
				map[string]any{"summary": summaryJSON(t, "d", "active"), "score": 0.5},
				map[string]any{"summary": summaryJSON(t, "c", "active"), "score": 0.5})})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.VectorSearch(ctx, []float32{1, 0, 0, 0}, 2, graph.Filter{
				Categories: []string{"finance"},
				Allow:      func(ts *graph.ToolSummary) bool { return len(ts.Tags) == 0 },
			})
		}},
		{"vector_search_ids", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			// An id list is scored exactly, one statement, best first.
			f.answer("vectorScoreIDs",
				record{"summary": summaryJSON(t, "c", "active"), "score": 0.5},
				record{"summary": summaryJSON(t, "a", "active", "secret"), "score": 1.0},
				record{"summary": summaryJSON(t, "b", "active"), "score": 0.75})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.VectorSearch(ctx, []float32{1, 0, 0, 0}, 5, graph.Filter{
				IDs:   []string{"a", "b", "c", "missing"},
				Allow: func(ts *graph.ToolSummary) bool { return len(ts.Tags) == 0 },
			})
		}},
		{"vector_scores", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			// Every listed tool against every vector, one statement; Allow
			// drops "a", and a null score (a zero vector) reads as 0.
			f.answer("vectorScoresIDs",
				record{"summary": summaryJSON(t, "a", "active", "secret"), "scores": list(1.0, 0.5)},
				record{"summary": summaryJSON(t, "b", "active"), "scores": list[any](0.75, nil)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.VectorScores(ctx, [][]float32{{1, 0, 0, 0}, {0, 0.5, 0, 0}}, graph.Filter{
				IDs:   []string{"a", "b", "missing"},
				Allow: func(ts *graph.ToolSummary) bool { return len(ts.Tags) == 0 },
			})
		}},
		{"vector_scores_no_ids", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
		}, func(ctx context.Context, s *Store) (any, error) {
			// No ids: nothing to score and no statement beyond the dimension check.
			return s.VectorScores(ctx, [][]float32{{1, 0, 0, 0}}, graph.Filter{})
		}},
		{"vector_scores_wrong_dimension", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.VectorScores(ctx, [][]float32{{1, 0, 0, 0}, {1, 0}}, graph.Filter{IDs: []string{"a"}})
		}},
		{"usage_search_ids", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			f.answer("usageScoreIDs", record{"summary": summaryJSON(t, "a", "active"), "score": 0.25})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.UsageSearch(ctx, []float32{0, 1, 0, 0}, 3, graph.Filter{IDs: []string{"a", "b"}})
		}},
		{"mean_vector", func(t *testing.T, f *fakeRunner) {
			f.answer("activeEmbeddings",
				record{"embedding": list(3.0, 4.0, 0.0, 0.0)},
				record{"embedding": list(0.0, 0.0, 2.0, 0.0)})
		}, func(ctx context.Context, s *Store) (any, error) {
			// The second call is served from the cache: one statement.
			if _, err := s.MeanVector(ctx); err != nil {
				return nil, err
			}
			return s.MeanVector(ctx)
		}},
		{"usage_search", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			f.answer("usageSearch", record{"scanned": int64(1), "hits": list(
				map[string]any{"summary": summaryJSON(t, "a", "active"), "score": 0.25})})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.UsageSearch(ctx, []float32{0, 1, 0, 0}, 3, graph.Filter{})
		}},
		{"text_search_hostile", func(t *testing.T, f *fakeRunner) {
			f.answer("textSearch", record{"scanned": int64(1), "hits": list(
				map[string]any{"summary": summaryJSON(t, "fx.convert", "active"), "score": 3.5})})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.TextSearch(ctx, `name:currency AND (fx* || "rate") NOT -x^2 currency`, 5, graph.Filter{})
		}},
		{"text_search_empty", nil, func(ctx context.Context, s *Store) (any, error) {
			return s.TextSearch(ctx, "   ", 5, graph.Filter{})
		}},
		{"entities", func(t *testing.T, f *fakeRunner) {
			f.answer("entities",
				record{"key": "airline", "name": "Airline", "type": "", "aliases": list[string]()},
				record{"key": "southwest", "name": "Southwest", "type": "Airline", "aliases": list("SWA", "Southwest Airlines", "LUV")})
		}, func(ctx context.Context, s *Store) (any, error) { return s.Entities(ctx) }},
		{"find_entities", func(t *testing.T, f *fakeRunner) {
			f.answer("findEntities", record{"key": "southwest", "name": "Southwest", "type": "Airline", "aliases": list("SWA")})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.FindEntities(ctx, []string{" SWA ", "", "Delta"})
		}},
		{"tools_near_entities", func(t *testing.T, f *fakeRunner) {
			// southwest -IS_A-> airline <-IS_A- delta: the second step (from
			// airline) sees southwest again, already reached, not re-queued.
			f.answer("entityStep", record{"key": "airline"}, record{"key": "southwest"})
			f.answer("entityStep", record{"key": "delta"}, record{"key": "southwest"})
			f.answer("toolsNearEntities",
				record{"id": "a", "summary": summaryJSON(t, "a", "active"), "entityKey": "southwest", "depth": int64(1)},
				record{"id": "b", "summary": summaryJSON(t, "b", "active", "secret"), "entityKey": "southwest", "depth": int64(1)},
				record{"id": "a", "summary": summaryJSON(t, "a", "active"), "entityKey": "airline", "depth": int64(2)},
				record{"id": "c", "summary": summaryJSON(t, "c", "active"), "entityKey": "airline", "depth": int64(2)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.ToolsNearEntities(ctx, []string{"Southwest"}, 3, graph.Filter{
				Allow: func(ts *graph.ToolSummary) bool { return len(ts.Tags) == 0 },
			})
		}},
		{"neighbourhood", func(t *testing.T, f *fakeRunner) {
			f.answer("neighbourStart", record{"eid": "4:x:0"})
			f.answer("neighbourStep",
				record{"eid": "4:x:1", "outgoing": true, "type": "PROVIDES", "fromLabel": "Tool", "fromKey": "a", "toLabel": "Verb", "toKey": "DO_A"},
				record{"eid": "4:x:2", "outgoing": false, "type": "OFFERS", "fromLabel": "Tool", "fromKey": "a", "toLabel": "Module", "toKey": "m"},
				record{"eid": "4:x:3", "outgoing": true, "type": "ABOUT", "fromLabel": "Tool", "fromKey": "a", "toLabel": "Entity", "toKey": "southwest"})
			f.answer("neighbourStep",
				record{"eid": "4:x:0", "outgoing": true, "type": "PROVIDES", "fromLabel": "Verb", "fromKey": "DO_A", "toLabel": "Tool", "toKey": "a"},
				record{"eid": "4:x:4", "outgoing": true, "type": "IS_A", "fromLabel": "Entity", "fromKey": "southwest", "toLabel": "Entity", "toKey": "airline"})
		}, func(ctx context.Context, s *Store) (any, error) { return s.Neighbourhood(ctx, "a", 2) }},
		{"record_usage", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			f.answer("usageLock",
				record{"id": "a", "usageSum": list(1.0, 0.0, 0.0, 0.0), "centroidN": int64(1)},
				record{"id": "b", "usageSum": nil, "centroidN": int64(0)})
			f.answer("usageSequence", record{"first": int64(10)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.RecordUsage(ctx, []graph.UsageEvent{
				{ToolID: "a", SessionID: "s1", UserID: "u", Query: "q1", QueryEmbedding: []float32{0, 1, 0, 0}, Success: true, LatencyMs: 12, At: goldenNow.Add(-time.Minute)},
				{ToolID: "b", SessionID: "s1", Query: "q2", QueryEmbedding: []float32{0, 0, 1, 0}, Success: false},
				{ToolID: "a", SessionID: "s2", Success: true},
			})
		}},
		{"claim_runs", func(t *testing.T, f *fakeRunner) {
			f.answer("claimRuns", record{"claimed": int64(2)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.ClaimRuns(ctx, graph.RunClaim{UserID: "u", ToolID: "a", Since: goldenNow.Add(-24 * time.Hour), N: 3, Successful: true})
		}},
		{"record_usage_unknown_tool", func(t *testing.T, f *fakeRunner) {
			f.answer("usageLock", record{"id": "a", "usageSum": nil, "centroidN": int64(0)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "a"}, {ToolID: "ghost"}})
		}},
		{"usage", func(t *testing.T, f *fakeRunner) {
			f.answer("usage", record{"id": "a", "uses": int64(3), "successes": int64(2), "lastUsed": int64(5), "centroid": list(3.0, 4.0, 0.0, 0.0), "centroidN": int64(2)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.Usage(ctx, []string{"a", "b"}) }},
		{"session_history", func(t *testing.T, f *fakeRunner) {
			f.answer("sessionHistory",
				record{"toolId": "b", "success": false, "at": int64(2)},
				record{"toolId": "a", "success": true, "at": int64(1)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.SessionHistory(ctx, "s1", 0) }},
		{"served_queries", func(t *testing.T, f *fakeRunner) {
			f.answer("servedQueries",
				record{"toolId": "b", "query": "rain tomorrow", "embedding": list(0.0, 1.0, 0.0, 0.0), "at": int64(2), "seq": int64(8)},
				record{"toolId": "a", "query": "euros to yen", "at": int64(1), "seq": int64(3)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.ServedQueries(ctx, 0) }},
		{"served_queries_after", func(t *testing.T, f *fakeRunner) {
			f.answer("servedQueriesAfter",
				record{"toolId": "a", "query": "euros to yen", "at": int64(5), "seq": int64(4)},
				record{"toolId": "b", "query": "rain tomorrow", "embedding": list(0.0, 1.0, 0.0, 0.0), "at": int64(2), "seq": int64(8)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.ServedQueriesAfter(ctx, 3, 50) }},
		// The first Refresh only starts following; the second reads the
		// writes since the first, less FollowOverlap.
		{"refresh", func(t *testing.T, f *fakeRunner) {
			f.answer("toolsChangedSince", record{"id": "a", "updatedAt": int64(10)}, record{"id": "b", "updatedAt": int64(20)})
		}, func(ctx context.Context, s *Store) (any, error) {
			if ids, err := s.Refresh(ctx); err != nil || len(ids) != 0 {
				return ids, err
			}
			return s.Refresh(ctx)
		}},
		{"stats", func(t *testing.T, f *fakeRunner) {
			f.answer("statsStatus", record{"status": "active", "n": int64(3)}, record{"status": "disabled", "n": int64(1)})
			f.answer("statsCounts", record{"verbs": int64(4), "entities": int64(2), "categories": int64(1), "tags": int64(5),
				"groups": int64(1), "toolEdges": int64(20), "offers": int64(2), "isA": int64(1), "relations": int64(3), "usageEvents": int64(7)})
			f.answer("getEmbedder", embedderRecord())
		}, func(ctx context.Context, s *Store) (any, error) { return s.Stats(ctx) }},
		{"reset", func(t *testing.T, f *fakeRunner) {
			f.answer("showConstraints", record{"name": "tool_id"}, record{"name": "odd`name"})
			f.answer("showIndexes", record{"name": "tool_text"})
		}, func(ctx context.Context, s *Store) (any, error) { return nil, s.Reset(ctx) }},
		{"put_source", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.PutSource(ctx, graph.Source{ID: "src1", Type: "openapi", Location: "https://specs.example/pets.yaml", Specs: 1})
		}},
		{"get_source", func(t *testing.T, f *fakeRunner) {
			f.answer("getSource", record{"id": "src1", "type": "openapi", "location": "https://specs.example/pets.yaml",
				"createdAt": goldenNow.UnixNano(), "lastScannedAt": int64(0), "lastError": "", "specs": int64(1)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.GetSource(ctx, "src1") }},
		{"delete_source_missing", func(t *testing.T, f *fakeRunner) { f.answer("deleteSource") },
			func(ctx context.Context, s *Store) (any, error) { return nil, s.DeleteSource(ctx, "nope") }},
		{"put_definitions", func(t *testing.T, f *fakeRunner) { f.answer("getEmbedder", embedderRecord()) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.PutDefinitions(ctx, "src1", "h1", []graph.Definition{
					{ID: "h1:list_pets", Name: "list_pets", API: "Pets", Method: "GET", Path: "/pets", Embedding: []float32{1, 0, 0, 0}},
					{ID: "h1:no_vector", Name: "no_vector", Status: graph.DefinitionPending},
				})
			}},
		{"search_definitions", func(t *testing.T, f *fakeRunner) {
			f.answer("getEmbedder", embedderRecord())
			rec, _ := json.Marshal(graph.Definition{ID: "h1:list_pets", Name: "list_pets", SourceID: "src1", SpecHash: "h1"})
			f.answer("searchDefinitions", record{"record": string(rec), "status": "available", "score": 0.9})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.SearchDefinitions(ctx, []float32{1, 0, 0, 0}, 3, nil)
		}},
		{"set_spec_status_missing", func(t *testing.T, f *fakeRunner) { f.answer("setSpecStatus", record{"n": int64(0)}) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.SetSpecStatus(ctx, "zz", graph.DefinitionPending)
			}},
		{"create_key", func(t *testing.T, f *fakeRunner) { f.answer("createKey", record{"id": "k1"}) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.CreateKey(ctx, graph.APIKey{ID: "k1", Hash: "abc", Owner: "alice", Level: "admin", Roles: []string{"approver"}})
			}},
		{"create_key_conflict", func(t *testing.T, f *fakeRunner) { f.answer("createKey") },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.CreateKey(ctx, graph.APIKey{ID: "k1", Hash: "abc", Owner: "alice", Level: "admin"})
			}},
		{"revoke_key", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.APIKey{ID: "k1", Hash: "abc", Owner: "alice", Level: "admin", CreatedAt: goldenNow})
			f.answer("getKey", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.RevokeKey(ctx, "k1", goldenNow.Add(time.Hour))
		}},
		{"revoked_keys", func(t *testing.T, f *fakeRunner) { f.answer("revokedKeys", record{"n": int64(3)}) },
			func(ctx context.Context, s *Store) (any, error) { return s.RevokedKeys(ctx) }},
		{"add_rate_count", func(t *testing.T, f *fakeRunner) { f.answer("addRateCount", record{"n": int64(4), "prev": int64(9)}) },
			func(ctx context.Context, s *Store) (any, error) {
				cur, prev, err := s.AddRateCount(ctx, "search|key:k1", 29000000, 1)
				return []int64{cur, prev}, err
			}},
		{"expire_rate_counts", func(t *testing.T, f *fakeRunner) { f.answer("expireRateCounts", record{"n": int64(2)}) },
			func(ctx context.Context, s *Store) (any, error) { return s.ExpireRateCounts(ctx, 28999999) }},
		{"reserve_call", func(t *testing.T, f *fakeRunner) {
			f.answer("ledgerLock", record{"spent": 1.5})
			f.answer("ledgerTally", record{"i": int64(0), "n": int64(3)}, record{"i": int64(1), "n": int64(7)})
			f.answer("callSeq", record{"last": int64(42)})
		}, func(ctx context.Context, s *Store) (any, error) {
			rec, tally, err := s.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap1", Tool: "get", UserID: "u1", At: goldenNow, Cost: 0.25},
				[]time.Time{goldenNow.Add(-time.Minute), goldenNow.Add(-time.Hour)}, func(graph.CallTally) error { return nil })
			return map[string]any{"record": rec, "tally": tally}, err
		}},
		{"reserve_call_refused", func(t *testing.T, f *fakeRunner) {
			f.answer("ledgerLock", record{"spent": 9.0})
		}, func(ctx context.Context, s *Store) (any, error) {
			_, _, err := s.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap1", At: goldenNow, Cost: 2}, nil,
				func(t graph.CallTally) error { return fmt.Errorf("%w: spent %.2f", errGoldenRefused, t.Spent) })
			return nil, err
		}},
		{"complete_call", func(t *testing.T, f *fakeRunner) { f.answer("completeCall", record{"id": int64(42)}) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.CompleteCall(ctx, graph.CallRecord{ID: 42, ApprovalID: "ap1", At: goldenNow, Done: true, Success: true, LatencyMs: 9})
			}},
		{"complete_call_missing", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.CompleteCall(ctx, graph.CallRecord{ID: 7, ApprovalID: "ap1", At: goldenNow})
		}},
		{"call_records", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.CallRecord{ID: 3, ApprovalID: "ap1", Tool: "get", At: goldenNow, Cost: 1, Done: true})
			f.answer("callRecords", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) { return s.CallRecords(ctx, "ap1", 0) }},
		{"import_calls", func(t *testing.T, f *fakeRunner) {
			f.answer("callImport", record{"fresh": true})
			f.answer("callSeq", record{"last": int64(12)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.ImportCalls(ctx, "ledger#ab12", []graph.CallRecord{{ID: 1, ApprovalID: "ap1", At: goldenNow, Cost: 1}, {ID: 2, ApprovalID: "ap2", At: goldenNow}})
		}},
		{"import_calls_again", func(t *testing.T, f *fakeRunner) { f.answer("callImport", record{"fresh": false}) },
			func(ctx context.Context, s *Store) (any, error) {
				return s.ImportCalls(ctx, "ledger#ab12", []graph.CallRecord{{ID: 1, ApprovalID: "ap1", At: goldenNow, Cost: 1}})
			}},
		{"post_notice", func(t *testing.T, f *fakeRunner) { f.answer("noticeSeq", record{"last": int64(7)}) },
			func(ctx context.Context, s *Store) (any, error) {
				return s.PostNotice(ctx, graph.Notice{Topic: "airlock.notifications", Data: json.RawMessage(`{"kind":"disabled"}`)}, 0)
			}},
		{"import_notices", func(t *testing.T, f *fakeRunner) {
			f.answer("noticeImport", record{"fresh": true})
			f.answer("noticeSeq", record{"last": int64(2)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.ImportNotices(ctx, "notifications.jsonl#ab12", []graph.Notice{
				{Topic: "airlock.notifications", At: goldenNow, Data: json.RawMessage(`{"i":1}`)},
				{Topic: "airlock.notifications", At: goldenNow, Data: json.RawMessage(`{"i":2}`)},
			}, 50)
		}},
		{"import_notices_again", func(t *testing.T, f *fakeRunner) { f.answer("noticeImport", record{"fresh": false}) },
			func(ctx context.Context, s *Store) (any, error) {
				return s.ImportNotices(ctx, "notifications.jsonl#ab12", []graph.Notice{{Topic: "t", Data: json.RawMessage(`1`)}}, 0)
			}},
		{"latest_notices", func(t *testing.T, f *fakeRunner) {
			f.answer("latestNotices", record{"seq": int64(3), "at": goldenNow.UnixNano(), "data": `{"i":3}`})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.LatestNotices(ctx, "airlock.notifications", 20)
		}},
		{"notices_after", func(t *testing.T, f *fakeRunner) {
			f.answer("noticesAfter", record{"seq": int64(4), "at": goldenNow.UnixNano(), "data": `{"scope":"all"}`})
		}, func(ctx context.Context, s *Store) (any, error) { return s.NoticesAfter(ctx, "cache.invalidate", 3, 0) }},
		{"claim_span", func(t *testing.T, f *fakeRunner) {
			f.answer("claimSpan", record{"prev": goldenNow.UnixNano(), "claimed": true})
		}, func(ctx context.Context, s *Store) (any, error) {
			prev, ok, err := s.ClaimSpan(ctx, "analytics.shared", goldenNow.Add(time.Minute))
			return map[string]any{"prev": prev, "claimed": ok}, err
		}},
		{"claim_span_first", func(t *testing.T, f *fakeRunner) { f.answer("claimSpan", record{"prev": nil, "claimed": true}) },
			func(ctx context.Context, s *Store) (any, error) {
				prev, ok, err := s.ClaimSpan(ctx, "analytics.shared", goldenNow)
				return map[string]any{"prev": prev, "claimed": ok}, err
			}},
		{"put_wrapper_approval", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.PutWrapperApproval(ctx, graph.WrapperApproval{Slug: "pets", ApprovalID: "ap1", SpecHash: "ab12", Spec: "openapi: 3.0.0", Record: json.RawMessage(`{"id":"ap1"}`)})
		}},
		{"get_wrapper_approval", func(t *testing.T, f *fakeRunner) {
			f.answer("getWrapperApproval", record{"approvalId": "ap1", "specHash": "ab12", "spec": "openapi: 3.0.0", "record": `{"id":"ap1"}`, "updatedAt": goldenNow.UnixNano()})
		}, func(ctx context.Context, s *Store) (any, error) { return s.GetWrapperApproval(ctx, "pets") }},
		{"list_wrapper_approvals", func(t *testing.T, f *fakeRunner) {
			f.answer("listWrapperApprovals", record{"slug": "pets", "approvalId": "ap1", "specHash": "ab12", "record": `{"id":"ap1"}`, "updatedAt": goldenNow.UnixNano()})
		}, func(ctx context.Context, s *Store) (any, error) { return s.ListWrapperApprovals(ctx) }},
		{"get_wrapper_approval_missing", nil, func(ctx context.Context, s *Store) (any, error) { return s.GetWrapperApproval(ctx, "nope") }},
		{"append_audit", func(t *testing.T, f *fakeRunner) { f.answer("auditExisting") },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.AppendAudit(ctx, []graph.AuditEvent{{ID: "e1", At: goldenNow, Actor: "key:k1", Action: "tools.register", Tool: "t", Outcome: "success", Status: 201}})
			}},
		{"record_gap", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.Gap{Verb: "COMPOSE_SYMPHONY", Count: 1, FirstSeen: goldenNow, LastSeen: goldenNow,
				Closest: []graph.GapCandidate{}, Entities: []string{"Orchestra"}, Status: graph.GapClosed, ClosedBy: "music.compose", ClosedAt: goldenNow})
			f.answer("getGap", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.RecordGap(ctx, graph.GapEvent{Verb: "COMPOSE_SYMPHONY", Description: "write a symphony",
				Closest: []graph.GapCandidate{{ToolID: "text.stats", Score: 0.25}}, Entities: []string{"orchestra", "Vienna"}, At: goldenNow.Add(time.Hour)})
		}},
		{"list_gaps", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.Gap{Verb: "SING", Count: 3, FirstSeen: goldenNow, LastSeen: goldenNow, Closest: []graph.GapCandidate{}, Entities: []string{}, Status: graph.GapOpen})
			f.answer("listGaps", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.ListGaps(ctx, graph.GapQuery{Status: graph.GapOpen, Limit: 10})
		}},
		{"close_gap", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.Gap{Verb: "SING", Count: 3, FirstSeen: goldenNow, LastSeen: goldenNow, Closest: []graph.GapCandidate{}, Entities: []string{}, Status: graph.GapOpen})
			f.answer("getGap", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.CloseGap(ctx, "SING", "music.sing", goldenNow.Add(time.Hour))
		}},
		{"learn_pairs", func(t *testing.T, f *fakeRunner) {
			// ana's second session pairs hotel and flight (she is known:
			// callers stays 1); bob's first pairs fx and flight (a new
			// caller); ana's second session again changes nothing.
			f.answer("pairSessions", record{"sessions": int64(1), "seen": int64(0)})
			f.answer("getLearnedPair", record{"weight": 2.0, "count": int64(2), "callers": int64(1), "updatedAt": goldenNow.UnixNano()})
			f.answer("pairSessions", record{"sessions": int64(0), "seen": int64(0)})
			f.answer("getLearnedPair")
			f.answer("pairSessions", record{"sessions": int64(2), "seen": int64(1)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.LearnPairs(ctx, []graph.PairEvidence{
				{A: "trip.hotel", B: "trip.flight", At: goldenNow.Add(graph.PairHalfLife), Caller: "ana", Session: "ana/s2"},
				{A: "fx.convert", B: "trip.flight", At: goldenNow, Caller: "bob", Session: "bob/s1"},
				{A: "trip.flight", B: "trip.hotel", At: goldenNow.Add(graph.PairHalfLife), Caller: "ana", Session: "ana/s2"},
			})
		}},
		{"learned_pairs", func(t *testing.T, f *fakeRunner) {
			f.answer("learnedPairs", record{"summary": summaryJSON(t, "trip.hotel", "active"), "weight": 2.0, "updatedAt": goldenNow.UnixNano()},
				record{"summary": summaryJSON(t, "fx.convert", "active"), "weight": 3.0, "updatedAt": goldenNow.Add(-graph.PairHalfLife).UnixNano()})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.LearnedPairs(ctx, "trip.flight", 5, graph.Filter{Categories: []string{"c"}}, goldenNow)
		}},
		{"put_snapshot", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.PutSnapshot(ctx, graph.Snapshot{Name: "analytics", At: goldenNow, Data: json.RawMessage(`{"tools":{"active":3}}`)})
		}},
		{"get_snapshot", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.Snapshot{Name: "analytics", At: goldenNow, Data: json.RawMessage(`{"tools":{"active":3}}`)})
			f.answer("getSnapshot", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.GetSnapshot(ctx, "analytics")
		}},
		{"put_model_version", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.PutModelVersion(ctx, graph.ModelVersion{ID: "rv-1", CreatedAt: goldenNow, Status: "candidate",
				Record: json.RawMessage(`{"mrr":0.5}`), Blob: []byte{0, 1, 2}})
		}},
		{"list_model_versions", func(t *testing.T, f *fakeRunner) {
			f.answer("listModelVersions",
				record{"id": "rv-2", "createdAt": goldenNow.UnixNano(), "status": "rejected", "record": `{"mrr":0.4}`},
				record{"id": "rv-1", "createdAt": goldenNow.UnixNano() - 1, "status": "promoted", "record": `{"mrr":0.5}`})
		}, func(ctx context.Context, s *Store) (any, error) { return s.ListModelVersions(ctx, 0) }},
		{"promote_model_version", func(t *testing.T, f *fakeRunner) {
			f.answer("modelVersionExists", record{"id": "rv-1"})
		}, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.PromoteModelVersion(ctx, "rv-1", "superseded")
		}},
		{"promote_model_version_missing", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.PromoteModelVersion(ctx, "nope", "superseded")
		}},
		{"promoted_model_version", func(t *testing.T, f *fakeRunner) {
			f.answer("promotedModelVersion", record{"id": "rv-1", "createdAt": goldenNow.UnixNano(), "status": "promoted",
				"record": `{"mrr":0.5}`, "blob": "AAEC"})
		}, func(ctx context.Context, s *Store) (any, error) { return s.PromotedModelVersion(ctx) }},
		{"add_series_points", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.SeriesPoint{Series: "search", Res: graph.ResMinute, At: goldenNow.Truncate(time.Minute), Count: 1, Sum: 20})
			f.answer("seriesGet", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			at := goldenNow.Truncate(time.Minute)
			return nil, s.AddSeriesPoints(ctx, []graph.SeriesPoint{{Series: "search", Res: graph.ResMinute, At: at, Count: 2, Sum: 10},
				{Series: "gaps.open", Res: graph.ResMinute, At: at, Count: 1, Sum: 3}})
		}},
		{"series_points", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.SeriesPoint{Series: "search", Res: graph.ResHour, At: goldenNow.Truncate(time.Hour), Count: 3, Sum: 30})
			f.answer("seriesPoints", record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.SeriesPoints(ctx, graph.SeriesQuery{Prefix: "sea", Res: graph.ResHour, Since: goldenNow.Add(-24 * time.Hour)})
		}},
		{"compact_series", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.SeriesPoint{Series: "search", Res: graph.ResMinute, At: goldenNow.Add(-3 * time.Hour).Truncate(time.Minute), Count: 3, Sum: 30})
			f.answer("seriesPoints", record{"record": string(rec)})
			f.answer("seriesGet")
			f.answer("seriesPut")
			f.answer("seriesDelete", record{"n": int64(1)})
			f.answer("seriesPoints")
			f.answer("seriesDelete", record{"n": int64(0)})
			f.answer("seriesDelete", record{"n": int64(0)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.CompactSeries(ctx, goldenNow, graph.DefaultRetention)
		}},
		{"audit_events", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(graph.AuditEvent{ID: "e2", At: goldenNow, Actor: "key:k1", Action: "tools.execute", Outcome: "denied", Status: 403})
			f.answer("auditEvents", record{"record": string(rec)}, record{"record": string(rec)})
		}, func(ctx context.Context, s *Store) (any, error) {
			return s.AuditEvents(ctx, graph.AuditQuery{Actor: "key:k1", Since: goldenNow.Add(-time.Hour), Limit: 1})
		}},
		{"put_session", func(t *testing.T, f *fakeRunner) { f.answer("putSession", record{"id": goldenSessionID}) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.PutSession(ctx, goldenSession())
			}},
		{"put_session_conflict", func(t *testing.T, f *fakeRunner) { f.answer("putSession") },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.PutSession(ctx, goldenSession())
			}},
		{"get_session", func(t *testing.T, f *fakeRunner) {
			rec, _ := json.Marshal(goldenSession())
			f.answer("getSession", record{"record": string(rec), "expiresAt": goldenNow.Add(2 * time.Hour).UnixNano(), "flash": "AAEC/3g="})
		}, func(ctx context.Context, s *Store) (any, error) {
			cs, err := s.GetSession(ctx, goldenSessionID)
			return map[string]any{"session": cs, "flash": cs.Flash}, err
		}},
		{"get_session_missing", func(t *testing.T, f *fakeRunner) { f.answer("getSession") },
			func(ctx context.Context, s *Store) (any, error) {
				return s.GetSession(ctx, goldenSessionID)
			}},
		{"touch_session", func(t *testing.T, f *fakeRunner) { f.answer("touchSession", record{"id": goldenSessionID}) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.TouchSession(ctx, goldenSessionID, goldenNow.Add(12*time.Hour))
			}},
		{"touch_session_missing", func(t *testing.T, f *fakeRunner) { f.answer("touchSession") },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.TouchSession(ctx, goldenSessionID, goldenNow.Add(12*time.Hour))
			}},
		{"set_session_flash", func(t *testing.T, f *fakeRunner) { f.answer("setSessionFlash", record{"id": goldenSessionID}) },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.SetSessionFlash(ctx, goldenSessionID, []byte{0, 1, 2, 0xff, 'x'})
			}},
		{"set_session_flash_missing", func(t *testing.T, f *fakeRunner) { f.answer("setSessionFlash") },
			func(ctx context.Context, s *Store) (any, error) {
				return nil, s.SetSessionFlash(ctx, goldenSessionID, nil)
			}},
		{"delete_session", nil, func(ctx context.Context, s *Store) (any, error) {
			return nil, s.DeleteSession(ctx, goldenSessionID)
		}},
		{"delete_expired_sessions", func(t *testing.T, f *fakeRunner) { f.answer("deleteExpiredSessions", record{"n": int64(2)}) },
			func(ctx context.Context, s *Store) (any, error) {
				return s.DeleteExpiredSessions(ctx, goldenNow)
			}},
	}
}

// goldenOutput is what a golden file holds.
type goldenOutput struct {
	Calls  []call `json:"calls"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRunner(goldenDim)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			s := newStore(f)
			s.now = func() time.Time { return goldenNow }
			res, err := tc.run(context.Background(), s)
			out := goldenOutput{Calls: f.calls, Result: res}
			if err != nil {
				out.Error = err.Error()
				out.Result = nil
			}
			got, merr := json.MarshalIndent(out, "", "  ")
			if merr != nil {
				t.Fatalf("marshal: %v", merr)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatalf("%v (run go test -update to create it)", rerr)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("statements or result differ from %s (go test -update rewrites it):\n--- got\n%s", path, got)
			}
			for _, c := range f.calls {
				if c.Statement == "UNNAMED" {
					t.Errorf("statement not declared in cypher.go: %q", c.Cypher)
				}
			}
		})
	}
}

// TestGoldenErrors checks the sentinel errors of the golden cases.
func TestGoldenErrors(t *testing.T) {
	want := map[string]error{
		"ensure_embedder_mismatch":      graph.ErrEmbedderMismatch,
		"embedder_missing":              fault.ErrNotFound,
		"upsert_wrong_dimension":        graph.ErrDimension,
		"vector_scores_wrong_dimension": graph.ErrDimension,
		"get_tool_missing":              fault.ErrNotFound,
		"set_status_missing":            fault.ErrNotFound,
		"related_alternatives_missing":  fault.ErrNotFound,
		"record_usage_unknown_tool":     fault.ErrNotFound,
		"delete_source_missing":         fault.ErrNotFound,
		"set_spec_status_missing":       fault.ErrNotFound,
		"create_key_conflict":           fault.ErrConflict,
		"promote_model_version_missing": fault.ErrNotFound,
		"put_session_conflict":          fault.ErrConflict,
		"get_session_missing":           fault.ErrNotFound,
		"touch_session_missing":         fault.ErrNotFound,
		"set_session_flash_missing":     fault.ErrNotFound,
		"complete_call_missing":         fault.ErrNotFound,
		"get_wrapper_approval_missing":  fault.ErrNotFound,
		"reserve_call_refused":          errGoldenRefused,
	}
	for _, tc := range goldenCases() {
		f := newFakeRunner(goldenDim)
		if tc.setup != nil {
			tc.setup(t, f)
		}
		s := newStore(f)
		s.now = func() time.Time { return goldenNow }
		_, err := tc.run(context.Background(), s)
		if w, ok := want[tc.name]; ok {
			if !errors.Is(err, w) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, w)
			}
		} else if err != nil {
			t.Errorf("%s: unexpected error %v", tc.name, err)
		}
	}
}
