package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/tool"
)

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func manifest(id string, extra ...string) json.RawMessage {
	module, _, _ := strings.Cut(id, ".")
	fields := []string{
		`"toolId":` + q(id),
		`"verb":"CONVERT_CURRENCY"`,
		`"name":"Converter ` + id + `"`,
		`"description":"Converts an amount between two currencies. Uses hourly rates."`,
		`"category":"finance"`,
		`"module":` + q(module),
		`"inputSchema":{"type":"object","properties":{"amount":{"type":"number"},"from":{"type":"string"},"to":{"type":"string"}},"required":["amount","from","to"]}`,
		`"outputSchema":{"type":"object","properties":{"converted":{"type":"number"},"rate":{"type":"number"}}}`,
	}
	// extra entries replace a field with the same key or are appended.
	for _, e := range extra {
		key, _, _ := strings.Cut(e, ":")
		replaced := false
		for i, f := range fields {
			if strings.HasPrefix(f, key+":") {
				fields[i], replaced = e, true
			}
		}
		if !replaced {
			fields = append(fields, e)
		}
	}
	return json.RawMessage("{" + strings.Join(fields, ",") + "}")
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

type harness struct {
	store   *memStore
	emb     *fakeEmbedder
	svc     *registry.Service
	changed []string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{store: newMemStore(), emb: &fakeEmbedder{dim: 16}}
	h.svc = registry.New(h.store, h.emb,
		registry.WithClock(func() time.Time { return fixedNow }),
		registry.WithOnChange(func(id string) { h.changed = append(h.changed, id) }))
	return h
}

func fieldPaths(err error) []string {
	var out []string
	for _, f := range fault.Fields(err) {
		out = append(out, f.Path)
	}
	return out
}

func TestRegister(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	res, err := h.svc.Register(ctx, registry.Request{
		Manifest: manifest("currency.convert"),
		UseCases: []string{"price a trip"},
		Examples: []tool.Example{{Scenario: "usd to eur", Input: json.RawMessage(`{"amount":1,"from":"USD","to":"EUR"}`)}},
	})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	want := registry.Result{ToolID: "currency.convert", Created: true, Revision: 1, Indexed: true, Embedded: true,
		EmbeddingModel: "fake-hash", ShortDescription: "Converts an amount between two currencies."}
	if res != want {
		t.Fatalf("Result = %+v, want %+v", res, want)
	}
	if !slices.Equal(h.changed, []string{"currency.convert"}) {
		t.Fatalf("onChange calls = %v", h.changed)
	}
	if h.store.info != (graph.EmbedderInfo{Model: "fake-hash", Dimension: 16}) {
		t.Fatalf("embedder not recorded: %+v", h.store.info)
	}
	got, err := h.svc.Get(ctx, "currency.convert")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !got.UpdatedAt.Equal(fixedNow) || got.Status != graph.StatusActive || len(got.Embedding) != 16 {
		t.Fatalf("stored tool: %+v", got.ToolSummary)
	}
	if !slices.Equal(got.RequiredParams, []string{"amount", "from", "to"}) || !slices.Equal(got.UseCases, []string{"price a trip"}) {
		t.Fatalf("projection: %+v", got)
	}
	m, err := tool.Parse(got.Manifest)
	if err != nil || len(m.Examples) != 1 || m.Examples[0].Scenario != "usd to eur" {
		t.Fatalf("top-level example not merged into manifest: %v %+v", err, m.Examples)
	}

	_, err = h.svc.Register(ctx, registry.Request{Manifest: manifest("currency.convert")})
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), `"currency.convert"`) {
		t.Fatalf("second Register = %v, want conflict naming the id", err)
	}
	if len(h.changed) != 1 || h.store.upserts != 1 {
		t.Fatalf("conflict wrote or notified: changed=%v upserts=%d", h.changed, h.store.upserts)
	}
}

func TestRegisterRejectsWithoutWriting(t *testing.T) {
	tests := []struct {
		name      string
		req       registry.Request
		kind      error
		wantPaths []string
	}{
		{"no manifest", registry.Request{}, fault.ErrMalformed, []string{"manifest"}},
		{"null manifest", registry.Request{Manifest: json.RawMessage(`null`)}, fault.ErrMalformed, []string{"manifest"}},
		{"syntax", registry.Request{Manifest: json.RawMessage(`{"toolId":`)}, fault.ErrMalformed, []string{"manifest"}},
		{"unknown field", registry.Request{Manifest: manifest("a.b", `"colour":"red"`)}, fault.ErrMalformed, []string{"manifest.colour"}},
		{"schema type typo", registry.Request{Manifest: manifest("currency.convert",
			`"inputSchema":{"type":"object","properties":{"amount":{"type":"numbr"}}}`)}, fault.ErrInvalid,
			[]string{"manifest.inputSchema.properties.amount.type"}},
		{"several rules", registry.Request{Manifest: manifest("currency.convert", `"verb":"convert"`, `"category":""`)}, fault.ErrInvalid,
			[]string{"manifest.verb", "manifest.category"}},
		{"own example", registry.Request{Manifest: manifest("currency.convert", `"examples":[{"input":{"amount":"x","from":"USD","to":"EUR"}}]`)},
			fault.ErrInvalid, []string{"manifest.examples[0].input.amount"}},
		{"top-level example", registry.Request{
			Manifest: manifest("currency.convert", `"examples":[{"input":{"amount":1,"from":"USD","to":"EUR"}}]`),
			Examples: []tool.Example{{Input: json.RawMessage(`{"amount":1,"from":"USD","to":"EUR"}`)}, {Input: json.RawMessage(`{"amount":"x","from":"USD","to":"EUR"}`)}},
		}, fault.ErrInvalid, []string{"examples[1].input.amount"}},
		{"top-level use case", registry.Request{Manifest: manifest("currency.convert"), UseCases: []string{" "}}, fault.ErrInvalid, []string{"manifest.useCases[0]"}},
		{"schema nested 1000 deep", registry.Request{Manifest: manifest("currency.convert",
			`"inputSchema":{"type":"object","properties":{"a":`+strings.Repeat(`{"type":"array","items":`, 1000)+`{}`+strings.Repeat(`}`, 1000)+`}}`)},
			fault.ErrInvalid, []string{"manifest.inputSchema"}},
		{"too many use cases", registry.Request{Manifest: manifest("currency.convert",
			`"useCases":["a"`+strings.Repeat(`,"a"`, tool.MaxListItems)+`]`)}, fault.ErrInvalid, []string{"manifest.useCases"}},
		{"too many top-level use cases", registry.Request{Manifest: manifest("currency.convert"),
			UseCases: slices.Repeat([]string{"a"}, tool.MaxListItems+1)}, fault.ErrInvalid, []string{"useCases"}},
		{"too many top-level examples", registry.Request{Manifest: manifest("currency.convert"),
			Examples: make([]tool.Example, tool.MaxExamples+1)}, fault.ErrInvalid, []string{"examples"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			_, err := h.svc.Register(context.Background(), tc.req)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("Register = %v, want %v", err, tc.kind)
			}
			if got := fieldPaths(err); !slices.Equal(got, tc.wantPaths) {
				t.Fatalf("paths = %q, want %q (%v)", got, tc.wantPaths, err)
			}
			if h.store.count() != 0 || len(h.emb.batches()) != 0 || len(h.changed) != 0 {
				t.Fatalf("rejected request had effects: tools=%d embeds=%v changed=%v", h.store.count(), h.emb.batches(), h.changed)
			}
		})
	}
}

func TestRegisterFailuresWriteNothing(t *testing.T) {
	t.Run("embedder down", func(t *testing.T) {
		h := newHarness(t)
		h.emb.fail = func([]string) error { return errEmbedDown }
		_, err := h.svc.Register(context.Background(), registry.Request{Manifest: manifest("currency.convert")})
		if !errors.Is(err, fault.ErrUnavailable) || !errors.Is(err, errEmbedDown) {
			t.Fatalf("Register = %v, want unavailable wrapping the cause", err)
		}
		if h.store.count() != 0 || len(h.changed) != 0 {
			t.Fatal("embedding failure wrote or notified")
		}
	})
	t.Run("store fails", func(t *testing.T) {
		h := newHarness(t)
		boom := errors.New("disk full")
		h.store.failNext = boom
		_, err := h.svc.Register(context.Background(), registry.Request{Manifest: manifest("currency.convert")})
		if !errors.Is(err, boom) {
			t.Fatalf("Register = %v, want the store error", err)
		}
		if h.store.count() != 0 || len(h.changed) != 0 {
			t.Fatal("store failure notified")
		}
	})
	t.Run("store built with another embedder", func(t *testing.T) {
		h := newHarness(t)
		h.store.info = graph.EmbedderInfo{Model: "other", Dimension: 16}
		_, err := h.svc.Register(context.Background(), registry.Request{Manifest: manifest("currency.convert")})
		if !errors.Is(err, graph.ErrEmbedderMismatch) || registry.Info(err).Code != "embedder_mismatch" {
			t.Fatalf("Register = %v, want embedder mismatch", err)
		}
		if h.store.count() != 0 {
			t.Fatal("mismatched embedder wrote")
		}
	})
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	if _, err := h.svc.Register(ctx, registry.Request{Manifest: manifest("currency.convert")}); err != nil {
		t.Fatal(err)
	}

	_, err := h.svc.Update(ctx, "currency.missing", registry.Request{Manifest: manifest("currency.missing")})
	if !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("Update unknown = %v, want not found", err)
	}
	_, err = h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: manifest("currency.other", `"verb":"bad"`)})
	if got := fieldPaths(err); !slices.Equal(got, []string{"manifest.toolId", "manifest.verb"}) {
		t.Fatalf("id mismatch paths = %q (%v)", got, err)
	}

	embeds := len(h.emb.batches())
	res, err := h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: manifest("currency.convert")})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Unchanged || res.Indexed || res.Embedded || res.Revision != 1 || len(h.emb.batches()) != embeds || h.store.upserts != 1 {
		t.Fatalf("identical update: %+v, embeds %d→%d, upserts %d", res, embeds, len(h.emb.batches()), h.store.upserts)
	}

	// A version bump does not change the embedding text: the vector is reused.
	res, err = h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: manifest("currency.convert", `"version":"1.1.0"`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unchanged || !res.Indexed || res.Embedded || res.Created || res.Revision != 2 || len(h.emb.batches()) != embeds {
		t.Fatalf("version bump: %+v", res)
	}

	// A new description is re-embedded; an omitted body id takes the URL's.
	body := manifest("currency.convert", `"description":"Exchanges money at live rates."`)
	body = json.RawMessage(strings.Replace(string(body), `"toolId":"currency.convert",`, "", 1))
	res, err = h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: body})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Embedded || res.Revision != 3 || res.ShortDescription != "Exchanges money at live rates." {
		t.Fatalf("description change: %+v", res)
	}

	// ForceReindex re-embeds an identical manifest.
	res, err = h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: body, ForceReindex: true})
	if err != nil || !res.Embedded || res.Revision != 4 {
		t.Fatalf("force reindex: %+v %v", res, err)
	}
	if want := []string{"currency.convert", "currency.convert", "currency.convert", "currency.convert"}; !slices.Equal(h.changed, want) {
		t.Fatalf("onChange = %v, want %v", h.changed, want)
	}
}

func TestDeprecate(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	if _, err := h.svc.Register(ctx, registry.Request{Manifest: manifest("currency.convert")}); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.Deprecate(ctx, "currency.convert", "replaced by fx.convert"); err != nil {
		t.Fatalf("Deprecate: %v", err)
	}
	got, err := h.svc.Get(ctx, "currency.convert")
	if err != nil || got.Status != graph.StatusDeprecated {
		t.Fatalf("after deprecate: %v %q", err, got.Status)
	}
	hist, err := h.svc.History(ctx, "currency.convert")
	if err != nil || len(hist) != 2 || hist[1].Reason != "replaced by fx.convert" {
		t.Fatalf("history: %v %+v", err, hist)
	}
	if err := h.svc.Deprecate(ctx, "nope.nope", "x"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("Deprecate unknown = %v", err)
	}
	// Re-submitting the active manifest re-activates the tool.
	res, err := h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: manifest("currency.convert")})
	if err != nil || res.Unchanged || res.Embedded {
		t.Fatalf("reactivate: %+v %v", res, err)
	}
	if got, _ := h.svc.Get(ctx, "currency.convert"); got.Status != graph.StatusActive {
		t.Fatalf("status after reactivation = %q", got.Status)
	}
	if _, err := h.svc.Get(ctx, "nope.nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("Get unknown = %v", err)
	}
}

func TestBatchRegister(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	if _, err := h.svc.Register(ctx, registry.Request{Manifest: manifest("fx.existing")}); err != nil {
		t.Fatal(err)
	}
	reqs := []registry.Request{
		{Manifest: manifest("fx.a")},
		{Manifest: manifest("fx.b", `"verb":"nope"`)},
		{Manifest: manifest("fx.a")},
		{Manifest: manifest("fx.existing")},
		{Manifest: json.RawMessage(`{`)},
		{Manifest: manifest("fx.c")},
	}
	var progress []int
	res := h.svc.BatchRegister(ctx, reqs, registry.BatchOptions{Progress: func(done, total int) {
		if total != len(reqs) {
			t.Errorf("progress total = %d", total)
		}
		progress = append(progress, done)
	}})
	want := []struct {
		id, status, code string
	}{
		{"fx.a", registry.StatusCreated, ""},
		{"fx.b", registry.StatusFailed, "validation_failed"},
		{"fx.a", registry.StatusFailed, "conflict"},
		{"fx.existing", registry.StatusFailed, "conflict"},
		{"", registry.StatusFailed, "bad_request"},
		{"fx.c", registry.StatusCreated, ""},
	}
	for i, w := range want {
		r := res[i]
		code := ""
		if r.Error != nil {
			code = r.Error.Code
		}
		if r.Index != i || r.ToolID != w.id || r.Status != w.status || code != w.code {
			t.Errorf("item %d = %+v (error %+v), want %+v", i, r, r.Error, w)
		}
	}
	if f := res[1].Error.Fields; len(f) != 1 || f[0].Path != "manifest.verb" {
		t.Errorf("item 1 fields = %+v", f)
	}
	if !slices.Equal(progress, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("progress = %v", progress)
	}
	// One Register call, then one batch embedding call for the two valid items.
	if got := h.emb.batches(); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("embedding batches = %v", got)
	}
	if h.store.count() != 3 {
		t.Errorf("store holds %d tools, want 3", h.store.count())
	}
}

func TestBatchRegisterChunksAndUpsertIsIdempotent(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	var reqs []registry.Request
	for i := range 130 {
		reqs = append(reqs, registry.Request{Manifest: manifest(fmt.Sprintf("bulk.t%03d", i))})
	}
	// The second chunk fails: its 64 items fail, the others are written.
	h.emb.fail = func(texts []string) error {
		if strings.Contains(texts[0], "bulk.t064") {
			return errEmbedDown
		}
		return nil
	}
	res := h.svc.BatchRegister(ctx, reqs, registry.BatchOptions{Upsert: true})
	if got := h.emb.batches(); !slices.Equal(got, []int{64, 64, 2}) {
		t.Fatalf("embedding batches = %v, want [64 64 2]", got)
	}
	for i, r := range res {
		wantStatus := registry.StatusCreated
		if i >= 64 && i < 128 {
			wantStatus = registry.StatusFailed
		}
		if r.Status != wantStatus {
			t.Fatalf("item %d status %q, want %q (%+v)", i, r.Status, wantStatus, r.Error)
		}
		if wantStatus == registry.StatusFailed && r.Error.Code != "unavailable" {
			t.Fatalf("item %d code %q", i, r.Error.Code)
		}
	}
	h.emb.fail = nil
	res = h.svc.BatchRegister(ctx, reqs, registry.BatchOptions{Upsert: true})
	counts := map[string]int{}
	for _, r := range res {
		counts[r.Status]++
	}
	if counts[registry.StatusUnchanged] != 66 || counts[registry.StatusCreated] != 64 {
		t.Fatalf("second load statuses = %v", counts)
	}
	res = h.svc.BatchRegister(ctx, reqs, registry.BatchOptions{Upsert: true})
	for _, r := range res {
		if r.Status != registry.StatusUnchanged || r.Revision != 1 {
			t.Fatalf("third load item %+v, want unchanged at revision 1", r)
		}
	}
	// A changed item in upsert mode is "updated".
	reqs[0] = registry.Request{Manifest: manifest("bulk.t000", `"description":"Something else entirely."`)}
	res = h.svc.BatchRegister(ctx, reqs[:1], registry.BatchOptions{Upsert: true})
	if res[0].Status != registry.StatusUpdated || res[0].Revision != 2 {
		t.Fatalf("changed item: %+v", res[0])
	}
}

func TestInfo(t *testing.T) {
	tests := []struct {
		err  error
		code string
	}{
		{fault.Malformed("x", "bad"), "bad_request"},
		{fmt.Errorf("wrap: %w", fault.Invalid("x", "bad")), "validation_failed"},
		{fmt.Errorf("x: %w", fault.ErrConflict), "conflict"},
		{fmt.Errorf("x: %w", fault.ErrNotFound), "not_found"},
		{fmt.Errorf("x: %w", fault.ErrUnavailable), "unavailable"},
		{errors.New("boom"), "internal"},
	}
	for _, tc := range tests {
		if got := registry.Info(tc.err); got.Code != tc.code || got.Message != tc.err.Error() {
			t.Errorf("Info(%v) = %+v, want code %q", tc.err, got, tc.code)
		}
	}
	if registry.Info(nil) != nil {
		t.Error("Info(nil) != nil")
	}
}

func TestConcurrentRegisterOfOneIDHasOneWinner(t *testing.T) {
	h := newHarness(t)
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := h.svc.Register(context.Background(), registry.Request{Manifest: manifest("currency.convert")})
			errs <- err
		}()
	}
	wins, conflicts := 0, 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			wins++
		case errors.Is(err, fault.ErrConflict):
			conflicts++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if wins != 1 || conflicts != n-1 || h.store.upserts != 1 {
		t.Fatalf("wins=%d conflicts=%d upserts=%d", wins, conflicts, h.store.upserts)
	}
}

func TestBatchRegisterUsesOneTransactionAndIsolatesStoreFailures(t *testing.T) {
	ctx := context.Background()
	mem := newMemStore()
	st := batchStore{mem}
	var afterBatch []int
	svc := registry.New(st, &fakeEmbedder{dim: 16}, registry.WithAfterBatch(func(n int) { afterBatch = append(afterBatch, n) }))
	var reqs []registry.Request
	for i := range 70 {
		reqs = append(reqs, registry.Request{Manifest: manifest(fmt.Sprintf("bulk.t%03d", i))})
	}
	res := svc.BatchRegister(ctx, reqs, registry.BatchOptions{})
	for _, r := range res {
		if r.Status != registry.StatusCreated {
			t.Fatalf("item %+v", r)
		}
	}
	if !slices.Equal(mem.batches, []int{64, 6}) {
		t.Fatalf("UpsertTools batches = %v, want [64 6]", mem.batches)
	}
	if !slices.Equal(afterBatch, []int{70}) {
		t.Fatalf("the after-batch hook saw %v, want one call with 70 items", afterBatch)
	}

	// The store refuses one tool: the transaction fails, the registry retries
	// item by item, and only that item fails.
	mem.reject = map[string]bool{"bulk.x002": true}
	mem.batches = nil
	reqs = reqs[:0]
	for i := range 4 {
		reqs = append(reqs, registry.Request{Manifest: manifest(fmt.Sprintf("bulk.x%03d", i))})
	}
	res = svc.BatchRegister(ctx, reqs, registry.BatchOptions{})
	for i, r := range res {
		want := registry.StatusCreated
		if i == 2 {
			want = registry.StatusFailed
		}
		if r.Status != want {
			t.Fatalf("item %d: %+v (%+v)", i, r, r.Error)
		}
	}
	if !slices.Equal(mem.batches, []int{4}) || mem.count() != 73 {
		t.Fatalf("batches %v, tools %d", mem.batches, mem.count())
	}
}

// TestUpdateRechecksKeptLists: an update that omits useCases keeps the
// stored ones, and those are held to today's bounds: a tool stored with
// more use cases than the bound (before it) is refused naming them, not
// rewritten with them; clearing them explicitly is accepted.
func TestUpdateRechecksKeptLists(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	legacy, err := tool.Parse(manifest("currency.convert"))
	if err != nil {
		t.Fatal(err)
	}
	tool.Normalize(&legacy)
	legacy.UseCases = slices.Repeat([]string{"convert money"}, tool.MaxListItems+50)
	if _, err := h.store.UpsertTool(ctx, tool.ToGraph(legacy, h.emb.vec(tool.EmbeddingText(legacy)))); err != nil {
		t.Fatal(err)
	}
	before := h.store.count()
	_, err = h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: manifest("currency.convert", `"name":"Renamed"`)})
	if !errors.Is(err, fault.ErrInvalid) || !slices.Equal(fieldPaths(err), []string{"manifest.useCases"}) {
		t.Fatalf("Update keeping %d use cases = %v, want 422 on manifest.useCases", len(legacy.UseCases), err)
	}
	if got, _ := h.store.GetTool(ctx, "currency.convert"); got.Name == "Renamed" || h.store.count() != before || len(h.changed) != 0 {
		t.Fatalf("the refused update wrote: name %q, changed %v", got.Name, h.changed)
	}
	if _, err := h.svc.Update(ctx, "currency.convert", registry.Request{Manifest: manifest("currency.convert", `"name":"Renamed"`, `"useCases":[]`)}); err != nil {
		t.Fatalf("Update clearing the use cases = %v", err)
	}
}
