package retrain

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/adapter"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

func TestGateDecide(t *testing.T) {
	g := Gate{Margin: 0.01, MinHeldOut: 20}
	cur := Figures{R1: 0.5, R5: 0.8, MRR: 0.6, N: 40, Tools: 5, Substituted: 0.4, Wrong: 0.04}
	for _, c := range []struct {
		name string
		cand Figures
		want bool
		why  string
	}{
		{"no better", Figures{R1: 0.5, R5: 0.8, MRR: 0.6, N: 40, Tools: 5}, false, "no better"},
		{"better below the margin", Figures{R1: 0.5, R5: 0.8, MRR: 0.605, N: 40, Tools: 5}, false, "no better"},
		{"worse", Figures{R1: 0.4, R5: 0.7, MRR: 0.5, N: 40, Tools: 5}, false, "no better"},
		{"better by the margin", Figures{R1: 0.55, R5: 0.8, MRR: 0.61, N: 40, Tools: 5}, true, "better"},
		{"too few held out", Figures{R1: 1, R5: 1, MRR: 1, N: 19, Tools: 5}, false, "not enough held-out queries"},
		{"one tool's queries", Figures{R1: 1, R5: 1, MRR: 1, N: 400, Tools: 1}, false, "served by 1 tools"},
		{"better MRR, worse R@5", Figures{R1: 0.7, R5: 0.75, MRR: 0.7, N: 40, Tools: 5}, false, "fall below"},
		{"better, more wrong runs", Figures{R1: 0.55, R5: 0.8, MRR: 0.61, N: 40, Tools: 5, Substituted: 0.5, Wrong: 0.06}, false, "wrong tool"},
		{"better, as few wrong runs", Figures{R1: 0.55, R5: 0.8, MRR: 0.61, N: 40, Tools: 5, Substituted: 0.5, Wrong: 0.05}, true, "better"},
		// After an operator rolled back from a version, only queries served
		// after everything it had seen speak for a change.
		{"better, but a rolled-back version saw most of it", Figures{R1: 0.55, R5: 0.8, MRR: 0.61, N: 40, Tools: 5, Fresh: 19}, false, "rolled back"},
		{"better, with enough new use since a rollback", Figures{R1: 0.55, R5: 0.8, MRR: 0.61, N: 40, Tools: 5, Fresh: 20}, true, "better"},
		// The catalogue's own texts must rank no worse, give or take the margin.
		{"better, the catalogue's texts as well ranked", Figures{R1: 0.55, R5: 0.8, MRR: 0.61, N: 40, Tools: 5, Catalogue: &CatalogueFigures{R1: 0.895, R5: 0.97, N: 300}}, true, "better"},
		{"better on the newest uses, the catalogue's texts worse", Figures{R1: 0.55, R5: 0.8, MRR: 0.61, N: 40, Tools: 5, Catalogue: &CatalogueFigures{R1: 0.85, R5: 0.97, N: 300}}, false, "catalogue's own texts rank worse"},
	} {
		if c.cand.Catalogue != nil {
			c.cand.Fresh = c.cand.N
			cur := cur
			cur.Catalogue = &CatalogueFigures{R1: 0.9, R5: 0.97, N: 300}
			got, why := g.Decide(cur, c.cand)
			if got != c.want || !strings.Contains(why, c.why) {
				t.Errorf("%s: Decide = %v %q, want %v (%q)", c.name, got, why, c.want, c.why)
			}
			continue
		}
		if c.cand.Fresh == 0 {
			c.cand.Fresh = c.cand.N // no version was rolled back
		}
		got, why := g.Decide(cur, c.cand)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: Decide = %v %q, want %v (%q)", c.name, got, why, c.want, c.why)
		}
	}
	// Zero fields take the defaults.
	if d := (Gate{}).WithDefaults(); d.Margin != DefaultMargin || d.MinHeldOut != DefaultMinHeldOut || d.MinTools != DefaultMinTools {
		t.Fatalf("defaults: %+v", d)
	}
	if ok, _ := (Gate{}).Decide(cur, Figures{R1: 1, R5: 1, MRR: 1, N: DefaultMinHeldOut - 1, Tools: 5}); ok {
		t.Fatal("the default gate promoted on too few held-out queries")
	}
}

func TestAdapterCodec(t *testing.T) {
	a := &adapter.Adapter{Dim: 3, Delta: []float32{1, -2, 3.5, 0, 0, 1e-7, -0, 4, 5}, Tools: true}
	b, err := decodeAdapter(encodeAdapter(a))
	if err != nil || b.Dim != 3 || !b.Tools || fmt.Sprint(b.Delta) != fmt.Sprint(a.Delta) {
		t.Fatalf("round trip: %+v %v", b, err)
	}
	for _, bad := range [][]byte{nil, []byte("TSA\x01"), append(encodeAdapter(a), 0)} {
		if _, err := decodeAdapter(bad); err == nil {
			t.Fatalf("decoded %q", bad)
		}
	}
}

func TestSplitRecent(t *testing.T) {
	var evs []graph.ServedQuery
	for i := range 10 {
		evs = append(evs, graph.ServedQuery{ToolID: "t", Query: fmt.Sprintf("q%d", i%7), Seq: int64(i + 1)})
	}
	older, recent := splitRecent(evs, 0.2)
	if len(recent) != 2 || recent[0].Seq != 9 || recent[1].Seq != 10 {
		t.Fatalf("recent: %+v", recent)
	}
	// q1 and q2 are held out (seq 9, 10), so their earlier repeats (seq 2, 3) are not trained on.
	for _, e := range older {
		if e.Query == "q1" || e.Query == "q2" || e.Seq > 8 {
			t.Fatalf("older part has %+v", e)
		}
	}
	if len(older) != 6 {
		t.Fatalf("older: %d events", len(older))
	}
	if o, r := splitRecent(evs[:1], 0.2); len(o) != 1 || r != nil {
		t.Fatalf("one event: %v %v", o, r)
	}
}

// fixture is a catalogue and served queries whose words the manifests
// lack, so use teaches the ranking something.
type fixture struct {
	store graph.Store
	emb   retrievaltest.Words
	live  *retrieval.Service
	svc   *Service
}

var owner = access.Caller{UserID: "u", Level: "owner", Groups: []string{access.Wildcard}}

func newFixture(t *testing.T, queries int) fixture {
	t.Helper()
	emb := retrievaltest.Words{Dim: 64}
	st := retrievaltest.Store(t, emb)
	var ms []tool.Manifest
	for _, d := range []struct{ id, verb, desc string }{
		{"weather.forecast", "GET_FORECAST", "Forecast the weather for a city."},
		{"fx.convert", "CONVERT_CURRENCY", "Convert an amount between currencies."},
		{"mail.send", "SEND_EMAIL", "Send an email message to a recipient."},
		{"cal.book", "BOOK_MEETING", "Book a meeting in a calendar."},
		{"doc.translate", "TRANSLATE_TEXT", "Translate a text into another language."},
		{"maps.route", "PLAN_ROUTE", "Plan a route between two places."},
	} {
		ms = append(ms, retrievaltest.Manifest(d.id, d.verb, "misc", d.desc))
	}
	retrievaltest.Register(t, st, emb, ms...)
	live := retrieval.New(st, emb, retrieval.Options{})
	cities := []string{"paris", "oslo", "rome", "lima", "kyiv", "cairo", "quito", "hanoi", "accra", "bern", "doha", "riga"}
	var evs []retrieval.Event
	for i := range queries {
		c := cities[i%len(cities)]
		switch i % 3 {
		case 0:
			evs = append(evs, retrieval.Event{ToolID: "weather.forecast", Query: fmt.Sprintf("umbrella needed in %s %d", c, i), Success: true})
		case 1:
			evs = append(evs, retrieval.Event{ToolID: "fx.convert", Query: fmt.Sprintf("how many yen for my %s dollars %d", c, i), Success: true})
		default:
			evs = append(evs, retrieval.Event{ToolID: "maps.route", Query: fmt.Sprintf("drive from %s to the airport %d", c, i), Success: true})
		}
	}
	if len(evs) > 0 {
		if err := live.RecordEvents(context.Background(), owner, evs); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := New(st, emb, live, retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{store: st, emb: emb, live: live, svc: svc}
}

func TestTrainEvaluateConclude(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 60)
	v, err := f.svc.Train(ctx, Options{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != StatusCandidate || v.Counts.Tools != 6 || v.Counts.Events != 60 || v.Counts.HeldOut != 12 ||
		v.Counts.UsagePairs != 48 || v.Counts.Tune == 0 || v.Dim != 64 || v.Parent != "" {
		t.Fatalf("trained: %+v", v)
	}
	if v.Split.TrainUpTo >= v.Split.HeldOutUpTo {
		t.Fatalf("split: %+v", v.Split)
	}
	ev, err := f.svc.Evaluate(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out replay: current %+v, candidate %+v (scale %.1f)", ev.Current, ev.Candidate, v.Scale)
	// The catalogue's own texts were replayed too: each tool's first three
	// (use cases, short description), 6 tools.
	if c := ev.Candidate.Catalogue; c == nil || ev.Current.Catalogue == nil || c.N == 0 || c.N > 18 || c.R5 <= 0 {
		t.Fatalf("catalogue replay: current %+v, candidate %+v", ev.Current.Catalogue, c)
	}
	if ev.Current.N != 12 || ev.Candidate.N != 12 || ev.CurrentVersion != "" || ev.Candidate.Fresh != 12 || ev.Current.Fresh != 12 {
		t.Fatalf("evaluation: %+v", ev)
	}
	for _, fg := range []Figures{ev.Current, ev.Candidate} {
		if fg.Wrong < 0 || fg.Wrong > fg.Substituted || fg.Substituted > 1 {
			t.Fatalf("decision figures: %+v", fg)
		}
	}
	stored, err := f.svc.Get(ctx, v.ID)
	if err != nil || stored.Candidate == nil || !reflect.DeepEqual(*stored.Candidate, ev.Candidate) || stored.Adapter == nil {
		t.Fatalf("stored after evaluation: %+v %v", stored, err)
	}
	// The record is learned from the training part and stored with the
	// version (the decision reads it once the version is promoted).
	if v.Counts.Recorded == 0 || stored.Record.Len() != v.Counts.Recorded || stored.Record.Rate <= 0 {
		t.Fatalf("record: %d tools counted, stored %+v", v.Counts.Recorded, stored.Record)
	}
	first := 0
	for _, e := range stored.Record.Tools {
		if e.Right > e.First {
			t.Fatalf("record entry %+v: right more often than first", e)
		}
		first += e.First
	}
	if first == 0 || first > v.Counts.UsagePairs {
		t.Fatalf("record: %d first places for %d training queries", first, v.Counts.UsagePairs)
	}

	// Rejected: nothing applied.
	if _, err := f.svc.Conclude(ctx, v.ID, false, "no better", Gate{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.svc.Get(ctx, v.ID); got.Status != StatusRejected || got.Reason != "no better" || got.Gate == nil {
		t.Fatalf("rejected: %+v", got)
	}
	if f.live.Model() != nil {
		t.Fatal("a rejected version was applied")
	}

	// A second candidate, promoted: applied here, and by a restart.
	v2, err := f.svc.Train(ctx, Options{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Conclude(ctx, v2.ID, true, "better", Gate{}); err != nil {
		t.Fatal(err)
	}
	if m := f.live.Model(); m == nil || m.Version != v2.ID || m.Adapter == nil || m.Weights == nil || m.Record.Len() == 0 || f.live.Record() != m.Record {
		t.Fatalf("live model after promotion: %+v", m)
	}
	restarted := retrieval.New(f.store, f.emb, retrieval.Options{})
	rs, err := New(f.store, f.emb, restarted, retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if m := restarted.Model(); m == nil || m.Version != v2.ID || m.Adapter.Dim != 64 || m.Record.Len() != v2.Counts.Recorded {
		t.Fatalf("restart loaded %+v", m)
	}
	// The next candidate names its parent, and is compared with it.
	v3, err := f.svc.Train(ctx, Options{Epochs: 3})
	if err != nil || v3.Parent != v2.ID {
		t.Fatalf("third: %+v %v", v3, err)
	}
	if ev, err := f.svc.Evaluate(ctx, v3.ID); err != nil || ev.CurrentVersion != v2.ID {
		t.Fatalf("third's evaluation: %+v %v", ev, err)
	}

	// Roll back to the baseline, then to the rejected first version.
	if err := f.svc.Rollback(ctx, Baseline); err != nil {
		t.Fatal(err)
	}
	if f.live.Model() != nil {
		t.Fatal("baseline still applies a model")
	}
	if got, _ := f.svc.Get(ctx, v2.ID); got.Status != StatusRolledBack {
		t.Fatalf("v2 after rollback: %s", got.Status)
	}
	if err := f.svc.Rollback(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	if m := f.live.Model(); m == nil || m.Version != v.ID {
		t.Fatalf("after rollback to %s: %+v", v.ID, m)
	}
	if err := f.svc.Rollback(ctx, "rv-missing"); !errors.Is(err, fault.ErrNotFound) && !strings.Contains(err.Error(), "not found") {
		t.Fatalf("rollback to a missing version: %v", err)
	}
	list, err := f.svc.List(ctx, 10)
	if err != nil || len(list) != 3 || list[0].ID != v3.ID || list[0].Record != nil || list[0].Counts.Recorded == 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
	// An operator rolled back from v2: a candidate of the same uses has
	// no held-out query v2 had not seen, so the gate keeps the rollback;
	// new uses count again.
	v4, err := f.svc.Train(ctx, Options{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	ev4, err := f.svc.Evaluate(ctx, v4.ID)
	if err != nil || ev4.Candidate.N != 12 || ev4.Candidate.Fresh != 0 {
		t.Fatalf("after a rollback, the same uses: %+v %v; want no fresh held-out query", ev4, err)
	}
	if ok, why := (Gate{MinHeldOut: 10}).Decide(ev4.Current, ev4.Candidate); ok || !strings.Contains(why, "rolled back") {
		t.Fatalf("the gate on the same uses after a rollback: %v %q", ok, why)
	}
	var more []retrieval.Event
	for i := range 20 {
		more = append(more, retrieval.Event{ToolID: "weather.forecast", Query: fmt.Sprintf("will it snow tomorrow %d", i), Success: true})
	}
	if err := f.live.RecordEvents(ctx, owner, more); err != nil {
		t.Fatal(err)
	}
	v5, err := f.svc.Train(ctx, Options{Epochs: 3})
	if err != nil {
		t.Fatal(err)
	}
	if ev5, err := f.svc.Evaluate(ctx, v5.ID); err != nil || ev5.Candidate.Fresh == 0 {
		t.Fatalf("after new uses: %+v %v; want fresh held-out queries", ev5, err)
	}
}

// TestBuildRecordLeavesEachQueryOut: a served query is replayed without
// its own use (nor a repeat of its text) in the memory it is ranked with,
// so the record counts where the search puts it as it would for a new
// query like it, not its own tool.
func TestBuildRecordLeavesEachQueryOut(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 0)
	// Served by the currency tool, worded like the weather tool: over its
	// own use it would rank the currency tool first (and read right).
	q := "forecast the weather for a city"
	evs := []graph.ServedQuery{{ToolID: "fx.convert", Query: q}, {ToolID: "fx.convert", Query: "Forecast  the weather for a CITY"}}
	if err := f.live.RecordEvents(ctx, owner, []retrieval.Event{{ToolID: "fx.convert", Query: q, Success: true}, {ToolID: "fx.convert", Query: q, Success: true}}); err != nil {
		t.Fatal(err)
	}
	r, err := BuildRecord(ctx, f.store, f.emb, retrieval.Options{}, nil, evs)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Tools["weather.forecast"]; got != (retrieval.RecordEntry{First: 1}) || len(r.Tools) != 1 {
		t.Fatalf("record %+v: want the weather tool first once and wrong, nothing else", r.Tools)
	}
	if lo, ok := r.Of("weather.forecast"); !ok || lo >= 0 {
		t.Fatalf("weather tool's log odds %v %v, want below 0", lo, ok)
	}
	// The same search over the query's own use, without the bound on
	// overtaking a far better match (retrieval.Options.UsageMargin), puts
	// its tool first: what the record would have counted without leaving
	// it out.
	unbound := retrieval.New(f.store, f.emb, retrieval.Options{UsageMargin: -1})
	hits, _, err := unbound.Rank(ctx, retrieval.FulfilmentQuery(q, "", owner, nil))
	if err != nil || len(hits) == 0 || hits[0].Tool.ID != "fx.convert" {
		t.Fatalf("over its own use the first is %v (%v), want fx.convert", hits, err)
	}
}

// TestReplayNeverSeesHeldOut: the replay's memory holds the training
// events only, so a held-out query is ranked without itself as evidence.
func TestReplayNeverSeesHeldOut(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 30)
	c, err := f.svc.readCatalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.svc.events(ctx, 0, 0, 100, c)
	if err != nil {
		t.Fatal(err)
	}
	train, held := splitRecent(evs, 0.2)
	vw := newView(f.store, train)
	seen, _ := vw.ServedQueries(ctx, 1000)
	texts := map[string]bool{}
	for _, q := range seen {
		texts[q.Query] = true
	}
	for _, h := range held {
		if texts[h.Query] {
			t.Fatalf("held-out %q is in the replay's memory", h.Query)
		}
	}
	if len(seen) != len(train) {
		t.Fatalf("view serves %d of %d training events", len(seen), len(train))
	}
	u, err := vw.Usage(ctx, []string{"weather.forecast", "mail.send"})
	if err != nil || u["weather.forecast"].CentroidN == 0 || u["weather.forecast"].CentroidN >= 10 || u["mail.send"].CentroidN != 0 {
		t.Fatalf("view usage: %+v %v", u, err)
	}
}

func TestTrainNeedsACatalogue(t *testing.T) {
	emb := retrievaltest.Words{Dim: 16}
	st := retrievaltest.Store(t, emb)
	svc, err := New(st, emb, nil, retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Train(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "catalogue") {
		t.Fatalf("train on an empty catalogue: %v", err)
	}
}

// TestTrainReadsTheNewestWindow: with MaxEvents below the log's size the
// candidate trains on the newest events only, and its evaluation replays
// the same held-out part.
func TestTrainReadsTheNewestWindow(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 60)
	v, err := f.svc.Train(ctx, Options{Epochs: 2, MaxEvents: 30})
	if err != nil {
		t.Fatal(err)
	}
	if v.Counts.Events != 30 || v.Counts.HeldOut != 6 || v.Split.From != 31 || v.Split.HeldOutUpTo != 60 || v.Split.TrainUpTo != 54 {
		t.Fatalf("window: %+v %+v", v.Counts, v.Split)
	}
	ev, err := f.svc.Evaluate(ctx, v.ID)
	if err != nil || ev.Candidate.N != 6 || ev.Current.N != 6 {
		t.Fatalf("evaluation: %+v %v", ev, err)
	}
}

// TestAnotherProcessFollows: a promotion or rollback made through one
// process's service reaches another process's live ranking over the same
// store at its next check (Follow's tick calls refresh), and a check that
// finds nothing new changes nothing.
func TestAnotherProcessFollows(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 60)
	otherLive := retrieval.New(f.store, f.emb, retrieval.Options{})
	other, err := New(f.store, f.emb, otherLive, retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.svc.Train(ctx, Options{Epochs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Conclude(ctx, v.ID, true, "better", Gate{}); err != nil {
		t.Fatal(err)
	}
	if otherLive.Model() != nil {
		t.Fatal("the other process applied the promotion before checking")
	}
	if err := other.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	m := otherLive.Model()
	if m == nil || m.Version != v.ID {
		t.Fatalf("after a check the other process applies %+v; want %s", m, v.ID)
	}
	if err := other.refresh(ctx); err != nil || otherLive.Model() != m {
		t.Fatalf("a check with nothing new reloaded the model (%v)", err)
	}
	if err := f.svc.Rollback(ctx, Baseline); err != nil {
		t.Fatal(err)
	}
	if err := other.refresh(ctx); err != nil || otherLive.Model() != nil {
		t.Fatalf("after a rollback to the baseline the other process applies %+v (%v)", otherLive.Model(), err)
	}
	// Follow returns when its context ends.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	other.Follow(cctx, time.Millisecond, func(err error) { t.Errorf("follow: %v", err) })
}

// TestReplayCountsWrongRuns: the replay makes the fulfilment decision a
// novel verb's workflow would make on each held-out query and counts the
// substitutions of a tool that did not serve it.
func TestReplayCountsWrongRuns(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 0)
	held := []graph.ServedQuery{
		// Worded as the weather tool's description, served by the currency tool.
		{ToolID: "fx.convert", Query: "Forecast the weather for a city."},
		{ToolID: "doc.translate", Query: "Translate a text into another language."},
	}
	fg, err := f.svc.replay(ctx, newView(f.store, nil), nil, held, true)
	if err != nil {
		t.Fatal(err)
	}
	if fg.N != 2 || fg.Substituted != 1 || fg.Wrong != 0.5 {
		t.Fatalf("replay %+v: want both substituted, one of them wrong", fg)
	}
	// The replay passes the model's record to the decision, but a search
	// without usage evidence is read by the zero-shot part, which reads no
	// record: the same figures, even for a tool use found often wrong.
	rec := retrieval.NewRecord(map[string]retrieval.RecordEntry{"weather.forecast": {First: 20, Right: 1}, "doc.translate": {First: 20, Right: 20}})
	if g, err := f.svc.replay(ctx, newView(f.store, nil), &retrieval.Model{Record: rec}, held, true); err != nil || g.Substituted != fg.Substituted {
		t.Fatalf("zero-shot replay with a record: %+v %v; the zero-shot part reads no record", g, err)
	}
}
