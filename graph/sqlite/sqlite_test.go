package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestFTSQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{`  "" ** -- () `, ""},
		{"currency", `"currency"`},
		{"Make Reservation", `"make" OR "reservation"`},
		{"MAKE_RESERVATION", `"make" OR "reservation"`},
		{`NEAR(a b)`, `"near" OR "a" OR "b"`},
		{`cur"ren"cy*`, `"cur" OR "ren" OR "cy"`},
		{`'; DROP TABLE tools; --`, `"drop" OR "table" OR "tools"`},
		{"a a A", `"a"`},
		{"café 東京", `"café" OR "東京"`},
	}
	for _, tc := range tests {
		if got := ftsQuery(tc.in); got != tc.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	long := ""
	for i := 0; i < 100; i++ {
		long += " w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	if got := ftsQuery(long); len(splitOr(got)) != maxQueryTerms {
		t.Errorf("long query has %d terms, want %d", len(splitOr(got)), maxQueryTerms)
	}
}

func splitOr(q string) []string {
	var out []string
	for _, p := range []byte(q) {
		if p == '"' {
			out = append(out, "")
		}
	}
	return out[:len(out)/2]
}

func TestVecRoundTrip(t *testing.T) {
	v := []float32{0, 1, -1.5, 3.25e-7, 1e30}
	b := encodeVec(v)
	if len(b) != 4*len(v) {
		t.Fatalf("encoded length %d", len(b))
	}
	// Little-endian float32: 1.0 is 0x3f800000.
	if b[4] != 0x00 || b[5] != 0x00 || b[6] != 0x80 || b[7] != 0x3f {
		t.Errorf("1.0 encoded as % x, want 00 00 80 3f", b[4:8])
	}
	got := decodeVec(b)
	for i := range v {
		if got[i] != v[i] {
			t.Errorf("decode[%d] = %v, want %v", i, got[i], v[i])
		}
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := graph.EmbedderInfo{Model: "m", Dimension: 3}
	if err := s.EnsureEmbedder(ctx, info); err != nil {
		t.Fatal(err)
	}
	tool := graph.Tool{ToolSummary: graph.ToolSummary{ID: "a", Verb: "DO_IT", Name: "Doer"}, Embedding: []float32{0, 1, 0}}
	if _, err := s.UpsertTool(ctx, tool); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "a", QueryEmbedding: []float32{1, 0, 0}, Success: true}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Embedder(ctx); err != nil || got != info {
		t.Errorf("Embedder after reopen = %+v, %v", got, err)
	}
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "other", Dimension: 3}); !errors.Is(err, graph.ErrEmbedderMismatch) {
		t.Errorf("EnsureEmbedder(other) after reopen: %v", err)
	}
	hits, err := s.VectorSearch(ctx, []float32{0, 2, 0}, 1, graph.Filter{})
	if err != nil || len(hits) != 1 || hits[0].Tool.ID != "a" {
		t.Errorf("VectorSearch after reopen = %+v, %v (embeddings not reloaded)", hits, err)
	}
	hits, err = s.UsageSearch(ctx, []float32{1, 0, 0}, 1, graph.Filter{})
	if err != nil || len(hits) != 1 || hits[0].Score < 0.999 {
		t.Errorf("UsageSearch after reopen = %+v, %v (centroids not reloaded)", hits, err)
	}
	if res, err := s.UpsertTool(ctx, tool); err != nil || res.Created || res.Revision != 2 {
		t.Errorf("upsert after reopen = %+v, %v", res, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("Open read-only: %v", err)
	}
	defer ro.Close()
	if _, err := ro.GetTool(ctx, "a"); err != nil {
		t.Errorf("GetTool read-only: %v", err)
	}
	if _, err := ro.UpsertTool(ctx, tool); !errors.Is(err, ErrReadOnly) {
		t.Errorf("UpsertTool read-only: err = %v, want ErrReadOnly", err)
	}
	if err := ro.SetStatus(ctx, "a", graph.StatusDisabled, ""); !errors.Is(err, ErrReadOnly) {
		t.Errorf("SetStatus read-only: err = %v, want ErrReadOnly", err)
	}
	if err := ro.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "a"}}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("RecordUsage read-only: err = %v, want ErrReadOnly", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open("", Options{}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("Open(\"\"): err = %v, want ErrInvalid", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), Options{ReadOnly: true}); err == nil {
		t.Error("Open read-only of a missing file succeeded")
	}
	// A second Open of the same file sees the migrated schema.
	path := filepath.Join(t.TempDir(), "g.db")
	for i := 0; i < 2; i++ {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("Open #%d: %v", i+1, err)
		}
		v, err := currentVersion(context.Background(), s.db)
		if err != nil || v != schemaVersion {
			t.Errorf("schema version = %d, %v; want %d", v, err, schemaVersion)
		}
		s.Close()
	}
}

func TestBatchUpsertIsAtomic(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "g.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: 2}); err != nil {
		t.Fatal(err)
	}
	good := graph.Tool{ToolSummary: graph.ToolSummary{ID: "a"}, Embedding: []float32{1, 0}}
	res, err := s.UpsertTools(ctx, []graph.Tool{good, {ToolSummary: graph.ToolSummary{ID: "b"}, Embedding: []float32{0, 1}}})
	if err != nil || len(res) != 2 || !res[0].Created || !res[1].Created {
		t.Fatalf("UpsertTools = %+v, %v", res, err)
	}
	_, err = s.UpsertTools(ctx, []graph.Tool{{ToolSummary: graph.ToolSummary{ID: "c"}}, {ToolSummary: graph.ToolSummary{ID: "d"}, Embedding: []float32{1}}})
	if !errors.Is(err, graph.ErrDimension) {
		t.Fatalf("bad batch: err = %v, want ErrDimension", err)
	}
	if _, err := s.GetTool(ctx, "c"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("good half of a bad batch was written: %v", err)
	}
	if _, err := s.UpsertTools(ctx, []graph.Tool{good, good}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("duplicate ids in batch: err = %v, want ErrInvalid", err)
	}
}

// TestUpsertRollsBackMidTransaction makes the last write of an upsert (the
// revision row) fail with a trigger, after the tool row, edges and full-text
// row were already rewritten, and checks nothing of the new version remains.
func TestUpsertRollsBackMidTransaction(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "g.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: 2}); err != nil {
		t.Fatal(err)
	}
	v1 := graph.Tool{
		ToolSummary: graph.ToolSummary{ID: "boom", Name: "Zebra", Verb: "SEE_ZEBRA", Tags: []string{"stripes"}},
		Relations:   []graph.Relation{{Kind: graph.RelDependsOn, Target: "dep"}},
		Entities:    []graph.EntityRef{{Name: "Zoo"}},
		Embedding:   []float32{1, 0},
	}
	dep := graph.Tool{ToolSummary: graph.ToolSummary{ID: "dep"}, Embedding: []float32{0, 1}}
	if _, err := s.UpsertTools(ctx, []graph.Tool{v1, dep}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TRIGGER fail_boom BEFORE INSERT ON revisions
		WHEN NEW.tool_id = 'boom' AND NEW.revision > 1 BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	v2 := graph.Tool{
		ToolSummary: graph.ToolSummary{ID: "boom", Name: "Giraffe", Verb: "SEE_GIRAFFE"},
		Entities:    []graph.EntityRef{{Name: "Savanna"}},
		Embedding:   []float32{0, 1},
	}
	if _, err := s.UpsertTool(ctx, v2); err == nil {
		t.Fatal("upsert with an injected failure succeeded")
	}
	got, err := s.GetTool(ctx, "boom")
	if err != nil || got.Name != "Zebra" || len(got.Relations) != 1 || got.Embedding[0] != 1 {
		t.Errorf("tool after failed upsert = %+v, %v", got, err)
	}
	if hits, _ := s.TextSearch(ctx, "zebra stripes", 5, graph.Filter{}); len(hits) != 1 {
		t.Errorf("old full-text row lost: %v", hits)
	}
	if hits, _ := s.TextSearch(ctx, "giraffe", 5, graph.Filter{}); len(hits) != 0 {
		t.Errorf("new full-text row kept: %v", hits)
	}
	if rel, _ := s.Related(ctx, "boom", graph.RelDependsOn, 5, graph.Filter{}); len(rel) != 1 {
		t.Errorf("old edges lost: %v", rel)
	}
	if e, _ := s.FindEntities(ctx, []string{"savanna"}); len(e) != 0 {
		t.Errorf("new entity kept: %v", e)
	}
	hits, _ := s.VectorSearch(ctx, []float32{1, 0}, 1, graph.Filter{})
	if len(hits) != 1 || hits[0].Tool.ID != "boom" || hits[0].Tool.Name != "Zebra" {
		t.Errorf("memory index changed by a rolled-back upsert: %+v", hits)
	}
}

// TestTextIndexMatchesFTS5 checks the in-memory text index against FTS5's
// own bm25() on a synthetic catalogue: same tools, same scores, same order,
// with and without filters, after updates that rewrite documents, and
// after reopening the file (read-write and read-only).
func TestTextIndexMatchesFTS5(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: benchDim}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	var tools []graph.Tool
	for i := 0; i < 800; i++ {
		tools = append(tools, benchTool(r, fmt.Sprintf("t.%04d", i)))
	}
	// Words FTS5's porter stemmer folds together, diacritics, digits and an
	// empty document.
	tools[0].Description = "Reservations reserved: reserving a café in Zürich for 2 people, 24x7"
	tools[1].Name, tools[1].Verb, tools[1].Description, tools[1].ShortDescription = "", "", "", ""
	tools[1].Tags, tools[1].UseCases, tools[1].Entities = nil, nil, nil
	if _, err := s.UpsertTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	filters := map[string]graph.Filter{
		"none":     {},
		"category": {Categories: []string{"finance", "travel", "files"}},
		"allow":    {Allow: func(ts *graph.ToolSummary) bool { return ts.ID[len(ts.ID)-1]%3 != 0 }},
	}
	queries := []string{"reservation cafe zurich", "Réservation CAFÉ 24x7 people", "the a of and"}
	for i := 0; i < 40; i++ {
		q := pick(r, benchVerbs) + " " + pick(r, benchObjects)
		switch i % 3 {
		case 1:
			q = "I need to " + q + " " + pick(r, benchFiller)
		case 2:
			q = pick(r, benchEntities).Name + " " + q + " " + pick(r, benchFiller)
		}
		queries = append(queries, q)
	}
	compare := func(stage string, s *Store) {
		t.Helper()
		s.text.wait() // a reopened store loads its index in the background
		for _, q := range queries {
			for name, f := range filters {
				for _, k := range []int{1, 10, 2000} {
					got, ok, err := s.textSearchIndex(ctx, queryTerms(q), k, f)
					if err != nil || !ok {
						t.Fatalf("%s: index search %q: ok=%v err=%v", stage, q, ok, err)
					}
					terms, _, err := s.pruneTerms(ctx, queryTerms(q))
					if err != nil {
						t.Fatal(err)
					}
					want, err := s.textSearchFull(ctx, ftsMatch(termList(terms)), k, f)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(want) {
						t.Fatalf("%s: %q/%s/k=%d: %d hits, FTS5 %d", stage, q, name, k, len(got), len(want))
					}
					for j := range got {
						if math.Abs(got[j].Score-want[j].Score) > 1e-9*math.Max(1, math.Abs(want[j].Score)) {
							t.Fatalf("%s: %q/%s/k=%d: hit %d score %v (%s), FTS5 %v (%s)", stage, q, name, k, j, got[j].Score, got[j].Tool.ID, want[j].Score, want[j].Tool.ID)
						}
						// Equal scores may come in either order (FTS5 rounds
						// differently); otherwise the ids must agree.
						if got[j].Tool.ID != want[j].Tool.ID && math.Abs(got[j].Score-want[j].Score) > 1e-12 {
							t.Fatalf("%s: %q/%s/k=%d: hit %d is %s, FTS5 %s", stage, q, name, k, j, got[j].Tool.ID, want[j].Tool.ID)
						}
					}
				}
			}
		}
	}
	compare("fresh", s)
	if hits, _ := s.TextSearch(ctx, "reservations cafe", 3, graph.Filter{}); len(hits) == 0 || hits[0].Tool.ID != "t.0000" {
		t.Fatalf("stemmed, accent-folded query: %+v", hits)
	}

	// Rewrite a third of the documents (one by one and in a batch) and add
	// new ones: the index must follow.
	for i := 0; i < 100; i++ {
		nt := benchTool(r, tools[i*3].ID)
		if _, err := s.UpsertTool(ctx, nt); err != nil {
			t.Fatal(err)
		}
	}
	var batch []graph.Tool
	for i := 0; i < 200; i++ {
		id := tools[i*3+1].ID
		if i >= 150 {
			id = fmt.Sprintf("new.%04d", i)
		}
		batch = append(batch, benchTool(r, id))
	}
	if _, err := s.UpsertTools(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, tools[2].ID, graph.StatusDeprecated, "test"); err != nil {
		t.Fatal(err)
	}
	compare("updated", s)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	compare("reopened", s)
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	compare("read-only", ro)
}

// TestMigrateKeepsServedQueries: a store written at schema v2 (usage events
// without query embeddings) opens at the current version with its served
// queries intact and no embeddings for them.
func TestMigrateKeepsServedQueries(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, migrations[0], migrations[1], `INSERT INTO schema_version(version) VALUES (2)`,
		`INSERT INTO usage_events(tool_id, session_id, query, success, at) VALUES ('fx', 's1', 'euros to yen', 1, 5)`,
		`INSERT INTO usage_events(tool_id, session_id, query, success, at) VALUES ('fx', 's1', 'failed', 0, 6)`}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("build a v2 store: %v", err)
		}
	}
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("open a v2 store: %v", err)
	}
	defer s.Close()
	if v, err := currentVersion(ctx, s.db); err != nil || v != schemaVersion {
		t.Fatalf("schema version after migration = %d, %v; want %d", v, err, schemaVersion)
	}
	served, err := s.ServedQueries(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(served) != 1 || served[0].Query != "euros to yen" || served[0].Embedding != nil {
		t.Fatalf("served queries after migration = %+v, want the one success without an embedding", served)
	}
}

// While the text index loads in the background, text search answers from
// FTS5 with the same ranking instead of waiting for the load.
func TestTextSearchWhileTheIndexLoads(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: benchDim}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(13, 14))
	var tools []graph.Tool
	for i := 0; i < 300; i++ {
		tools = append(tools, benchTool(r, fmt.Sprintf("t.%04d", i)))
	}
	if _, err := s.UpsertTools(ctx, tools); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.text.wait()
	q := pick(r, benchVerbs) + " " + pick(r, benchObjects) + " " + pick(r, benchFiller)
	loaded, err := s.TextSearch(ctx, q, 10, graph.Filter{})
	if err != nil || len(loaded) == 0 {
		t.Fatalf("loaded index: %v %v", loaded, err)
	}
	s.text.loading.Store(true) // as during a background load
	if _, ok, err := s.textSearchIndex(ctx, queryTerms(q), 10, graph.Filter{}); ok || err != nil {
		t.Fatalf("the loading index answered: ok=%v err=%v", ok, err)
	}
	during, err := s.TextSearch(ctx, q, 10, graph.Filter{})
	s.text.loading.Store(false)
	if err != nil || len(during) != len(loaded) {
		t.Fatalf("during the load: %d hits, %v; want %d", len(during), err, len(loaded))
	}
	for i := range loaded {
		if during[i].Tool.ID != loaded[i].Tool.ID || math.Abs(during[i].Score-loaded[i].Score) > 1e-9 {
			t.Fatalf("hit %d: %s %.9f during the load, %s %.9f after", i, during[i].Tool.ID, during[i].Score, loaded[i].Tool.ID, loaded[i].Score)
		}
	}
}

// TestPairsLearnedBeforeCallersStayHidden: a pair written before its
// callers were kept (migration v17 gives it no known callers) is not shown
// until graph.PairQuorum callers teach it again; its weight carries over.
func TestPairsLearnedBeforeCallersStayHidden(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "g.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: benchDim}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	if _, err := s.UpsertTools(ctx, []graph.Tool{benchTool(r, "t.a"), benchTool(r, "t.b")}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO learned_pairs(a, b, weight, count, updated_at) VALUES ('t.a', 't.b', 5, 5, ?)`, graph.Nanos(at)); err != nil {
		t.Fatal(err)
	}
	shown := func() []graph.Hit {
		t.Helper()
		hits, err := s.LearnedPairs(ctx, "t.a", 10, graph.Filter{}, at)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	if hits := shown(); len(hits) != 0 {
		t.Fatalf("a pair without known callers is shown: %+v", hits)
	}
	for _, who := range []string{"ana", "bob"} {
		if err := s.LearnPairs(ctx, []graph.PairEvidence{{A: "t.a", B: "t.b", At: at, Caller: who, Session: who + "/s1"}}); err != nil {
			t.Fatal(err)
		}
	}
	if hits := shown(); len(hits) != 1 || hits[0].Tool.ID != "t.b" || hits[0].Score != 7 {
		t.Fatalf("pairs after two callers = %+v, want t.b at 7", hits)
	}
}
