package retrieval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// sizesStore answers ManifestRunes from the store, then runs after (a
// change landing while the bulk read was under way); noBulk answers with
// nothing, so every size is read one manifest at a time.
type sizesStore struct {
	graph.Store
	noBulk bool
	after  func()
	gets   int
	bulk   int
}

func (c *sizesStore) GetTool(ctx context.Context, id string) (graph.Tool, error) {
	c.gets++
	return c.Store.GetTool(ctx, id)
}

func (c *sizesStore) ManifestRunes(ctx context.Context) (map[string]int, error) {
	c.bulk++
	if c.noBulk {
		return map[string]int{}, nil
	}
	m, err := c.Store.ManifestRunes(ctx)
	if c.after != nil {
		c.after()
		c.after = nil
	}
	return m, err
}

// The first catalogue after a start takes every manifest's size from one
// bulk read, whether the warm-up or a search lists it first, and gives
// every caller, category and phase the same context and token figures
// as sizes read one manifest at a time, with non-ASCII manifests and a
// tool changed while the bulk read ran.
func TestFirstCatalogueReadsSizesAtOnce(t *testing.T) {
	ctx := context.Background()
	var ms []tool.Manifest
	for i := range 150 {
		cat := []string{"misc", "voyage"}[i%2]
		ms = append(ms, retrievaltest.Manifest(fmt.Sprintf("t.%03d", i), "DO_THING", cat,
			fmt.Sprintf("réservez 预订 🛫 <b>&</b> does thing number %d for the user %s", i, strings.Repeat("ü", i%7))))
	}
	ms[3].PermissionsRequired = []string{access.AnyOf([]string{"vet"}, nil)}
	st := retrievaltest.Store(t, emb)
	retrievaltest.Register(t, st, emb, ms...)
	var queries []retrieval.Query
	for _, c := range []access.Caller{{UserID: "u", Level: "user"}, {UserID: "v", Level: "user", Roles: []string{"vet"}}, {Level: "owner", Groups: []string{access.Wildcard}}} {
		for _, cat := range []string{"", "voyage"} {
			for _, p := range []retrieval.Phase{retrieval.PhaseNone, retrieval.PhaseInitialPlanning} {
				queries = append(queries, retrieval.Query{Text: "does thing number 7", Caller: c, Category: cat, Phase: p})
			}
		}
	}
	views := func(svc *retrieval.Service) []string {
		var out []string
		for _, q := range queries {
			out = append(out, catalogueView(t, svc, q))
		}
		return out
	}
	one := &sizesStore{Store: st, noBulk: true}
	want := views(retrieval.New(one, emb, retrieval.Options{CacheSize: -1}))
	if one.gets < len(ms) {
		t.Fatalf("sizes read one at a time: %d manifests read for %d tools; the test measures nothing", one.gets, len(ms))
	}

	for _, warm := range []bool{false, true} {
		bs := &sizesStore{Store: st}
		svc := retrieval.New(bs, emb, retrieval.Options{CacheSize: -1})
		if warm {
			if err := svc.WarmCatalogue(ctx, access.Caller{Level: "owner", Groups: []string{access.Wildcard}}); err != nil {
				t.Fatal(err)
			}
			if bs.bulk != 1 || bs.gets != 0 {
				t.Errorf("warm-up: %d bulk reads, %d manifests read; want 1 and 0", bs.bulk, bs.gets)
			}
		}
		if _, err := svc.Search(ctx, queries[0]); err != nil {
			t.Fatal(err)
		}
		if bs.bulk != 1 || bs.gets > 10 {
			t.Errorf("warm-up %v, first search: %d bulk reads, %d manifests read; want 1 and only the detailed ones", warm, bs.bulk, bs.gets)
		}
		if got := views(svc); !slices.Equal(got, want) {
			t.Errorf("warm-up %v: the catalogue from the bulk read differs from one read tool by tool:\n got %v\nwant %v", warm, got, want)
		}
	}

	// A tool that changes while the bulk read runs keeps its new size.
	bs := &sizesStore{Store: st}
	svc := retrieval.New(bs, emb, retrieval.Options{CacheSize: -1})
	bs.after = func() {
		m := ms[8]
		m.Description += strings.Repeat(" plus a much longer description ç", 20)
		retrievaltest.Register(t, st, emb, m)
		svc.Invalidate(m.ToolID)
	}
	if err := svc.WarmCatalogue(ctx, access.Caller{Level: "owner", Groups: []string{access.Wildcard}}); err != nil {
		t.Fatal(err)
	}
	if bs.after != nil {
		t.Fatal("the change did not land during the bulk read")
	}
	fresh := views(retrieval.New(&sizesStore{Store: st, noBulk: true}, emb, retrieval.Options{CacheSize: -1}))
	if got := views(svc); !slices.Equal(got, fresh) {
		t.Errorf("after a change during the bulk read:\n got %v\nwant %v", got, fresh)
	}
	if slices.Equal(fresh, want) {
		t.Error("the change did not change the catalogue: the test measures nothing")
	}
}
