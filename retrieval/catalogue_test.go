package retrieval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

// listCountingStore counts the catalogue listings (ListTools without ids).
type listCountingStore struct {
	graph.Store
	lists int
}

func (c *listCountingStore) ListTools(ctx context.Context, q graph.ListQuery) (graph.ToolPage, error) {
	if len(q.Filter.IDs) == 0 {
		c.lists++
	}
	return c.Store.ListTools(ctx, q)
}

// catalogueView is what a search derives from the visible catalogue: the
// index, its Markdown and the token figures.
func catalogueView(t *testing.T, svc *retrieval.Service, q retrieval.Query) string {
	t.Helper()
	res, err := svc.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(struct {
		Index                      []retrieval.IndexEntry
		Total, All, Used, Detailed int
		Reduction                  float64
		Markdown                   string
	}{res.Context.Index, res.Metadata.TotalToolsAvailable, res.Metadata.TokensAllManifests, res.Metadata.TokensUsed,
		len(res.Context.Detailed), res.Metadata.TokenReduction, res.Context.Markdown()})
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// After tool changes (a new tool, a longer manifest, a deprecation, a
// visibility change, a category change, a repeated change), the catalogue
// a service updated incrementally gives every caller, category and phase
// the same context and token figures as a fresh service listing the
// store; and it does so without listing the catalogue again.
func TestCatalogueAfterChangesEqualsFullRecompute(t *testing.T) {
	ctx := context.Background()
	var ms []tool.Manifest
	for i := range 60 {
		ms = append(ms, retrievaltest.Manifest(fmt.Sprintf("t.%02d", i), "DO_THING", "misc", fmt.Sprintf("does thing number %d for the user", i)))
	}
	st := retrievaltest.Store(t, emb)
	retrievaltest.Register(t, st, emb, ms...)
	cs := &listCountingStore{Store: st}
	svc := retrieval.New(cs, emb, retrieval.Options{CacheSize: -1})
	callers := []access.Caller{
		{UserID: "u", Level: "user"},
		{UserID: "v", Level: "user", Roles: []string{"vet"}},
		{Level: "owner", Groups: []string{access.Wildcard}},
	}
	var queries []retrieval.Query
	for _, c := range callers {
		for _, cat := range []string{"", "misc", "other"} {
			for _, p := range []retrieval.Phase{retrieval.PhaseNone, retrieval.PhaseInitialPlanning, retrieval.PhaseToolSelection} {
				queries = append(queries, retrieval.Query{Text: "does thing number 7", Caller: c, Category: cat, Phase: p})
			}
		}
	}
	before := map[int]string{}
	for i, q := range queries {
		before[i] = catalogueView(t, svc, q)
	}
	compare := func(stage string) {
		t.Helper()
		fresh := retrieval.New(st, emb, retrieval.Options{CacheSize: -1})
		cs.lists = 0
		changed := 0
		for i, q := range queries {
			got, want := catalogueView(t, svc, q), catalogueView(t, fresh, q)
			if got != want {
				t.Fatalf("%s: query %d (caller %s, category %q, phase %q):\n got %s\nwant %s", stage, i, q.Caller.UserID, q.Category, q.Phase, got, want)
			}
			if got != before[i] {
				changed++
			}
			before[i] = got
		}
		if changed == 0 {
			t.Fatalf("%s: no result changed: the test measures nothing", stage)
		}
	}

	longer := ms[10]
	longer.Description += " and then a great deal more, described at length so that its manifest grows by many tokens"
	hidden := ms[30]
	hidden.PermissionsRequired = []string{"role:vet"}
	moved := ms[40]
	moved.Category = "other"
	again := ms[5]
	again.Description += " twice"
	retrievaltest.Register(t, st, emb,
		retrievaltest.Manifest("t.25b", "DO_THING", "misc", "does a brand new thing for the user"),
		retrievaltest.Manifest("t.99", "DO_THING", "other", "does the other thing for the user"),
		longer, hidden, moved, ms[5], again)
	if err := st.SetStatus(ctx, "t.20", graph.StatusDeprecated, "test"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t.25b", "t.99", "t.10", "t.30", "t.40", "t.05", "t.05", "t.20", "t.nothere"} {
		svc.Invalidate(id)
	}
	compare("after changes")
	if cs.lists != 0 {
		t.Errorf("the searches after the changes listed the catalogue %d times, want 0", cs.lists)
	}

	// More changes than the log keeps: the catalogue is listed again.
	for range 5000 {
		svc.Invalidate("t.01")
	}
	retrievaltest.Register(t, st, emb, retrievaltest.Manifest("t.00a", "DO_THING", "misc", "does yet another thing"))
	svc.Invalidate("t.00a")
	compare("after a long change log")
}
