package neo4j

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	neo4jdriver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestEscapeLucene(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"currency", "currency"},
		{`+-&|!(){}[]^"~*?:\/`, `\+\-\&\|\!\(\)\{\}\[\]\^\"\~\*\?\:\\\/`},
		{"name:x", `name\:x`},
		{"c++", `c\+\+`},
		{"a&&b||c", `a\&\&b\|\|c`},
		{"ünïcode—dash", "ünïcode—dash"},
	} {
		if got := escapeLucene(c.in); got != c.want {
			t.Errorf("escapeLucene(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLuceneQuery(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // the term group; "" = no query
	}{
		{"", ""},
		{"   \t\n", ""},
		{"Currency", "(currency)"},
		{"make reservation MAKE", "(make OR reservation)"},
		{"AND OR NOT", "(and OR or OR not)"},
		{`name:currency (fx*)`, `(name\:currency OR \(fx\*\))`},
		{`"`, `(\")`},
	} {
		got := luceneQuery(c.in)
		if c.want == "" {
			if got != "" {
				t.Errorf("luceneQuery(%q) = %q, want empty", c.in, got)
			}
			continue
		}
		want := "name:" + c.want + "^8 OR verbText:" + c.want + "^6 OR tagsText:" + c.want + "^4 OR entitiesText:" +
			c.want + "^4 OR useCasesText:" + c.want + "^2 OR description:" + c.want + "^1"
		if got != want {
			t.Errorf("luceneQuery(%q) =\n %s\nwant\n %s", c.in, got, want)
		}
	}
	// The term count is bounded, keeping the first words.
	var words []string
	for i := 0; i < 100; i++ {
		words = append(words, fmt.Sprintf("t%d", i))
	}
	q := luceneQuery(strings.Join(words, " "))
	group := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(q, "^", 2)[0], "name:("), ")")
	terms := strings.Split(group, " OR ")
	if len(terms) != maxQueryTerms || terms[0] != "t0" || terms[len(terms)-1] != fmt.Sprintf("t%d", maxQueryTerms-1) {
		t.Errorf("bounded query keeps %d terms %v, want t0…t%d", len(terms), terms, maxQueryTerms-1)
	}
}

func TestWrapErr(t *testing.T) {
	transient := &neo4jdriver.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected", Msg: "deadlock"}
	notFound := &neo4jdriver.Neo4jError{Code: "Neo.ClientError.Database.DatabaseNotFound", Msg: "no db"}
	syntax := &neo4jdriver.Neo4jError{Code: "Neo.ClientError.Statement.SyntaxError", Msg: "bad"}
	cases := []struct {
		name   string
		err    error
		is     []error
		isNot  []error
		prefix string
	}{
		{"transient", transient, []error{ErrTransient, transient}, []error{fault.ErrNotFound}, "neo4j: op: "},
		{"not found", notFound, []error{fault.ErrNotFound, notFound}, []error{ErrTransient}, "neo4j: op: "},
		{"other", syntax, []error{syntax}, []error{ErrTransient, fault.ErrNotFound}, "neo4j: op: "},
		{"sentinel", fmt.Errorf("x: %w", fault.ErrInvalid), []error{fault.ErrInvalid}, []error{ErrTransient}, "neo4j: op: x: "},
		{"wrapped transient", fmt.Errorf("step: %w", transient), []error{ErrTransient}, nil, "neo4j: op: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := wrapErr("op", c.err)
			for _, e := range c.is {
				if !errors.Is(got, e) {
					t.Errorf("wrapErr(%v) = %v, not Is %v", c.err, got, e)
				}
			}
			for _, e := range c.isNot {
				if errors.Is(got, e) {
					t.Errorf("wrapErr(%v) = %v, unexpectedly Is %v", c.err, got, e)
				}
			}
			if !strings.HasPrefix(got.Error(), c.prefix) {
				t.Errorf("message %q lacks prefix %q", got, c.prefix)
			}
		})
	}
	if wrapErr("op", nil) != nil {
		t.Error("wrapErr(nil) != nil")
	}
}

func TestDecodeHelpers(t *testing.T) {
	r := record{"s": "x", "i": int64(3), "f": 1.5, "b": true, "l": []any{"a", "b"}, "v": []any{0.5, int64(1)}, "n": nil, "bad": 2.5}
	if s, err := getString(r, "s"); err != nil || s != "x" {
		t.Errorf("getString = %q, %v", s, err)
	}
	if _, err := getString(r, "i"); err == nil {
		t.Error("getString of an integer: no error")
	}
	if i, err := getInt(r, "i"); err != nil || i != 3 {
		t.Errorf("getInt = %d, %v", i, err)
	}
	if _, err := getInt(r, "bad"); err == nil {
		t.Error("getInt of 2.5: no error")
	}
	if f, err := getFloat(r, "i"); err != nil || f != 3 {
		t.Errorf("getFloat(int) = %v, %v", f, err)
	}
	if b, err := getBool(r, "b"); err != nil || !b {
		t.Errorf("getBool = %v, %v", b, err)
	}
	if l, err := getStrings(r, "l"); err != nil || len(l) != 2 || l[1] != "b" {
		t.Errorf("getStrings = %v, %v", l, err)
	}
	if v, err := getVector(r, "v"); err != nil || len(v) != 2 || v[0] != 0.5 || v[1] != 1 {
		t.Errorf("getVector = %v, %v", v, err)
	}
	if v, err := getVector(r, "n"); err != nil || v != nil {
		t.Errorf("getVector(null) = %v, %v", v, err)
	}
	if _, err := getVector(record{"v": []any{"x"}}, "v"); err == nil {
		t.Error("getVector of strings: no error")
	}
	for _, c := range []struct{ s, cos float64 }{{1, 1}, {0.5, 0}, {0, -1}, {0.75, 0.5}} {
		if got := fromCosineScore(c.s); math.Abs(got-c.cos) > 1e-12 {
			t.Errorf("fromCosineScore(%v) = %v, want %v", c.s, got, c.cos)
		}
	}
}

// TestValidation checks the refusals that happen before any statement is
// sent: nothing reaches the database.
func TestValidation(t *testing.T) {
	ctx := context.Background()
	f := newFakeRunner().answer("getEmbedder", embedderRecord())
	s := newStore(f)
	tool := func(mod func(*graph.Tool)) graph.Tool {
		tl := graph.Tool{ToolSummary: graph.ToolSummary{ID: "x"}, Embedding: []float32{1, 0, 0, 0}}
		mod(&tl)
		return tl
	}
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"empty id", func() error { _, err := s.UpsertTool(ctx, tool(func(t *graph.Tool) { t.ID = " " })); return err }, fault.ErrInvalid},
		{"bad status", func() error {
			_, err := s.UpsertTool(ctx, tool(func(t *graph.Tool) { t.Status = "retired" }))
			return err
		}, fault.ErrInvalid},
		{"bad relation", func() error {
			_, err := s.UpsertTool(ctx, tool(func(t *graph.Tool) { t.Relations = []graph.Relation{{Kind: "LIKES", Target: "y"}} }))
			return err
		}, fault.ErrInvalid},
		{"relation without target", func() error {
			_, err := s.UpsertTool(ctx, tool(func(t *graph.Tool) { t.Relations = []graph.Relation{{Kind: graph.RelDependsOn}} }))
			return err
		}, fault.ErrInvalid},
		{"entity without name", func() error {
			_, err := s.UpsertTool(ctx, tool(func(t *graph.Tool) { t.Entities = []graph.EntityRef{{Name: " "}} }))
			return err
		}, fault.ErrInvalid},
		{"bad manifest", func() error {
			_, err := s.UpsertTool(ctx, tool(func(t *graph.Tool) { t.Manifest = []byte("{") }))
			return err
		}, fault.ErrInvalid},
		{"short embedding", func() error {
			_, err := s.UpsertTool(ctx, tool(func(t *graph.Tool) { t.Embedding = []float32{1} }))
			return err
		}, graph.ErrDimension},
		{"set bad status", func() error { return s.SetStatus(ctx, "x", "sleeping", "") }, fault.ErrInvalid},
		{"bad related kind", func() error { _, err := s.Related(ctx, "x", "LIKES", 1, graph.Filter{}); return err }, fault.ErrInvalid},
		{"bad embedder", func() error { return s.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m"}) }, fault.ErrInvalid},
		{"usage without tool", func() error { return s.RecordUsage(ctx, []graph.UsageEvent{{}}) }, fault.ErrInvalid},
		{"usage wrong dimension", func() error {
			return s.RecordUsage(ctx, []graph.UsageEvent{{ToolID: "x", QueryEmbedding: []float32{1}}})
		}, graph.ErrDimension},
		{"vector wrong dimension", func() error { _, err := s.VectorSearch(ctx, []float32{1}, 3, graph.Filter{}); return err }, graph.ErrDimension},
		{"config without URI", func() error { _, err := Open(ctx, Config{}); return err }, fault.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.run(); !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
		})
	}
	for _, c := range f.calls {
		if c.Statement != "getEmbedder" {
			t.Errorf("a refused call sent %s", c)
		}
	}
}

// TestNoEmbedderDimension: vectors are refused until an embedder is recorded.
func TestNoEmbedderDimension(t *testing.T) {
	s := newStore(newFakeRunner())
	if _, err := s.VectorSearch(context.Background(), []float32{1}, 1, graph.Filter{}); !errors.Is(err, graph.ErrDimension) {
		t.Errorf("VectorSearch without embedder: err = %v, want ErrDimension", err)
	}
}

// TestMeanVectorCache: the mean is read from the database at most once a
// meanVectorTTL, and a write through the store refreshes it once the cached
// value is meanVectorMinAge old.
func TestMeanVectorCache(t *testing.T) {
	f := newFakeRunner()
	f.answer("activeEmbeddings", record{"embedding": list(2.0, 0.0)})
	f.answer("activeEmbeddings", record{"embedding": list(0.0, 3.0)})
	s := newStore(f)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	s.now = func() time.Time { return now }
	reads := func() int {
		n := 0
		for _, c := range f.calls {
			if c.Statement == "activeEmbeddings" {
				n++
			}
		}
		return n
	}
	step := func(at time.Duration, stale bool, want []float32, wantReads int) {
		t.Helper()
		now = t0.Add(at)
		if stale {
			s.staleMean()
		}
		got, err := s.MeanVector(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || reads() != wantReads {
			t.Fatalf("at %v: mean %v after %d reads, want %v after %d", at, got, reads(), want, wantReads)
		}
	}
	step(0, false, []float32{1, 0}, 1)
	step(time.Second, false, []float32{1, 0}, 1)                 // cached
	step(2*time.Second, true, []float32{1, 0}, 1)                // stale, but younger than meanVectorMinAge
	step(6*time.Second, false, []float32{0, 1}, 2)               // stale and old enough: read again
	step(30*time.Second, false, []float32{0, 1}, 2)              // fresh again
	step(6*time.Second+meanVectorTTL, false, []float32{0, 1}, 3) // expired
}
