package retrain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/adapter"
	"github.com/toolsmith/toolsmith/tool"
)

// Options tune training; zero fields take the defaults.
type Options struct {
	// HeldOut is the share of the most recent served queries kept out of
	// training for the replay (default 0.2).
	HeldOut float64 `json:"heldOut,omitempty"`
	// Tune is the share of the rest (the most recent of it) on which the
	// weights are chosen, with an adapter trained without it (default 0.2).
	Tune float64 `json:"tune,omitempty"`
	// MaxEvents bounds how many recent served queries are read (default
	// 20000).
	MaxEvents int `json:"maxEvents,omitempty"`
	// Epochs of adapter training (default: the adapter's,
	// adapter.DefaultEpochs: 20, fewer when the pairs are many).
	Epochs int `json:"epochs,omitempty"`
	// Scales are the factors tried on the learned signals' weights (usage,
	// neighbours, query log); default 0.5, 1, 1.5, 2.
	Scales []float64 `json:"scales,omitempty"`
}

// Defaults of Options.
const (
	DefaultHeldOut   = 0.2
	DefaultTune      = 0.2
	DefaultMaxEvents = 20000
	// MinTune is the fewest tuning queries worth choosing weights on;
	// below it the scale stays 1.
	MinTune = 10
	// MaxRank is how deep a replay looks for the served tool (MRR counts
	// 0 beyond it).
	MaxRank = retrieval.MaxTools
)

// Validate checks options given by an operator; zero fields are defaults.
func (o Options) Validate() error {
	if o.HeldOut < 0 || o.HeldOut >= 1 {
		return fault.Invalid("options.heldOut", "must be at least 0 and below 1 (0 takes %.1f), got %g", DefaultHeldOut, o.HeldOut)
	}
	if o.Tune < 0 || o.Tune >= 1 {
		return fault.Invalid("options.tune", "must be at least 0 and below 1 (0 takes %.1f), got %g", DefaultTune, o.Tune)
	}
	if o.MaxEvents < 0 || o.MaxEvents > 1_000_000 {
		return fault.Invalid("options.maxEvents", "must be between 0 and 1000000 (0 takes %d), got %d", DefaultMaxEvents, o.MaxEvents)
	}
	if o.Epochs < 0 || o.Epochs > 200 {
		return fault.Invalid("options.epochs", "must be between 0 and 200 (0 takes 20, fewer for more than %d pairs), got %d", adapter.PairSteps/adapter.MaxEpochs, o.Epochs)
	}
	if len(o.Scales) > 10 {
		return fault.Invalid("options.scales", "at most 10 scales, got %d", len(o.Scales))
	}
	for i, sc := range o.Scales {
		if !(sc > 0 && sc <= 10) {
			return fault.Invalid(fmt.Sprintf("options.scales[%d]", i), "must be above 0 and at most 10, got %g", sc)
		}
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.HeldOut <= 0 || o.HeldOut >= 1 {
		o.HeldOut = DefaultHeldOut
	}
	if o.Tune <= 0 || o.Tune >= 1 {
		o.Tune = DefaultTune
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if len(o.Scales) == 0 {
		o.Scales = []float64{0.5, 1, 1.5, 2}
	}
	return o
}

// Service trains, evaluates, promotes and rolls back versions of the
// learned ranking model. It is safe for concurrent use.
type Service struct {
	store graph.Store
	emb   embed.Embedder
	live  *retrieval.Service
	rank  retrieval.Options
	now   func() time.Time
}

// New returns the service over a store (which keeps the model versions),
// the embedder of its vectors, and the live retrieval service it applies
// the promoted version to (nil: none in this process). rank are the live
// service's options: replays rank with them.
func New(store graph.Store, emb embed.Embedder, live *retrieval.Service, rank retrieval.Options) (*Service, error) {
	if store == nil || emb == nil {
		return nil, errors.New("retrain: nil store or embedder")
	}
	return &Service{store: store, emb: emb, live: live, rank: rank, now: time.Now}, nil
}

// caller sees every tool: replays measure the ranking, not visibility.
var caller = access.Caller{UserID: "retrain", Level: "owner", Groups: []string{access.Wildcard}}

// baseWeights are the weights the live service ranks with by default.
func (s *Service) baseWeights() retrieval.Weights {
	if s.rank.Weights != nil {
		return *s.rank.Weights
	}
	return retrieval.DefaultWeights()
}

// catalogue is the active tools with their manifests and vectors.
type catalogue struct {
	ids   []string
	index map[string]int
	vecs  [][]float32
	texts [][]string
}

func (s *Service) readCatalogue(ctx context.Context) (catalogue, error) {
	c := catalogue{index: map[string]int{}}
	after := ""
	for {
		page, err := s.store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000})
		if err != nil {
			return c, fmt.Errorf("retrain: list tools: %w", err)
		}
		for _, sum := range page.Items {
			t, err := s.store.GetTool(ctx, sum.ID)
			if err != nil {
				return c, fmt.Errorf("retrain: tool %q: %w", sum.ID, err)
			}
			if len(t.Embedding) == 0 {
				continue
			}
			var m tool.Manifest
			if err := json.Unmarshal(t.Manifest, &m); err != nil {
				return c, fmt.Errorf("retrain: manifest of %q: %w", sum.ID, err)
			}
			c.index[sum.ID] = len(c.ids)
			c.ids = append(c.ids, sum.ID)
			c.vecs = append(c.vecs, t.Embedding)
			c.texts = append(c.texts, adapter.CatalogueTexts(m))
		}
		if page.Next == "" {
			return c, nil
		}
		after = page.Next
	}
}

// normText is the form under which two queries count as the same.
func normText(q string) string { return strings.ToLower(strings.Join(strings.Fields(q), " ")) }

// withEmbeddings fills the embeddings the events lack.
func (s *Service) withEmbeddings(ctx context.Context, evs []graph.ServedQuery) error {
	var texts []string
	var at []int
	for i, e := range evs {
		if len(e.Embedding) == 0 {
			texts, at = append(texts, e.Query), append(at, i)
		}
	}
	vs, err := s.embedAll(ctx, texts)
	if err != nil {
		return err
	}
	for j, i := range at {
		evs[i].Embedding = vs[j]
	}
	return nil
}

func (s *Service) embedAll(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += 256 {
		j := min(i+256, len(texts))
		vs, err := s.emb.EmbedDocuments(ctx, texts[i:j])
		if err != nil {
			return nil, fmt.Errorf("retrain: embed: %w", err)
		}
		if len(vs) != j-i {
			return nil, fmt.Errorf("retrain: embed: %d vectors for %d texts", len(vs), j-i)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// events reads the served queries from seq after+1 up to upTo (0: all),
// oldest first, at most max of the newest, keeping the catalogue's tools.
func (s *Service) events(ctx context.Context, after, upTo int64, max int, c catalogue) ([]graph.ServedQuery, error) {
	var out []graph.ServedQuery
	for {
		page, err := s.store.ServedQueriesAfter(ctx, after, 1000)
		if err != nil {
			return nil, fmt.Errorf("retrain: served queries: %w", err)
		}
		for _, q := range page {
			if upTo > 0 && q.Seq > upTo {
				return trim(out, max), nil
			}
			if _, ok := c.index[q.ToolID]; ok && strings.TrimSpace(q.Query) != "" {
				out = append(out, q)
			}
			after = q.Seq
		}
		if len(page) < 1000 {
			return trim(out, max), nil
		}
		if len(out) > 2*max {
			out = trim(out, max)
		}
	}
}

func trim(evs []graph.ServedQuery, max int) []graph.ServedQuery {
	if len(evs) > max {
		return evs[len(evs)-max:]
	}
	return evs
}

// splitRecent cuts events (oldest first) into the older part and the most
// recent share frac (at least one when there are two or more), and drops
// from the older part every query whose text the recent part has: a
// held-out query is never trained on, not even as an earlier repeat.
func splitRecent(evs []graph.ServedQuery, frac float64) (older, recent []graph.ServedQuery) {
	if len(evs) < 2 {
		return evs, nil
	}
	n := int(math.Ceil(frac * float64(len(evs))))
	n = min(max(n, 1), len(evs)-1)
	recent = evs[len(evs)-n:]
	return withoutHeldTexts(evs[:len(evs)-n], recent), recent
}

// withoutHeldTexts returns the training events whose query text no
// held-out event has: a held-out query is never trained on, not even as an
// earlier repeat.
func withoutHeldTexts(train, held []graph.ServedQuery) []graph.ServedQuery {
	texts := map[string]bool{}
	for _, e := range held {
		texts[normText(e.Query)] = true
	}
	var out []graph.ServedQuery
	for _, e := range train {
		if !texts[normText(e.Query)] {
			out = append(out, e)
		}
	}
	return out
}

// trainAdapter learns the adapter from the catalogue texts and the
// events' queries (their served tools as targets).
func (s *Service) trainAdapter(ctx context.Context, c catalogue, cvecs [][]float32, ctgt []int, evs []graph.ServedQuery, o Options) (*adapter.Adapter, error) {
	pairs := make([]adapter.Pair, 0, len(cvecs)+len(evs))
	for i, v := range cvecs {
		pairs = append(pairs, adapter.Pair{Query: v, Target: ctgt[i]})
	}
	for _, e := range evs {
		pairs = append(pairs, adapter.Pair{Query: e.Embedding, Target: c.index[e.ToolID]})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a, _, err := adapter.Train(pairs, c.vecs, adapter.Options{Epochs: o.Epochs, Seed: 1})
	if err != nil {
		return nil, fmt.Errorf("retrain: %w", err)
	}
	return a, nil
}

// Train trains a candidate and stores it (status candidate): the adapter
// from the catalogue's texts and the training part of the recent served
// queries, the weights' scale on the most recent of that part with an
// adapter trained without it. The most recent share o.HeldOut is never
// trained on: Evaluate replays it.
func (s *Service) Train(ctx context.Context, o Options) (Version, error) {
	o = o.withDefaults()
	start := time.Now()
	c, err := s.readCatalogue(ctx)
	if err != nil {
		return Version{}, err
	}
	if len(c.ids) < 2 {
		return Version{}, fault.Invalid("catalogue", "needs at least two active tools with vectors to train on, has %d", len(c.ids))
	}
	// The window starts at the oldest of the newest MaxEvents served
	// queries, so the read does not scan the whole log.
	newest, err := s.store.ServedQueries(ctx, o.MaxEvents)
	if err != nil {
		return Version{}, fmt.Errorf("retrain: served queries: %w", err)
	}
	var from int64
	for i, q := range newest {
		if i == 0 || q.Seq < from {
			from = q.Seq
		}
	}
	var evs []graph.ServedQuery
	if len(newest) > 0 {
		if evs, err = s.events(ctx, from-1, 0, o.MaxEvents, c); err != nil {
			return Version{}, err
		}
	}
	train, held := splitRecent(evs, o.HeldOut)
	if err := s.withEmbeddings(ctx, train); err != nil {
		return Version{}, err
	}
	var ctexts []string
	var ctgt []int
	for i, ts := range c.texts {
		for _, t := range ts {
			ctexts, ctgt = append(ctexts, t), append(ctgt, i)
		}
	}
	cvecs, err := s.embedAll(ctx, ctexts)
	if err != nil {
		return Version{}, err
	}
	v := Version{
		ID: newID(s.now()), CreatedAt: s.now().UTC(), Status: StatusCandidate, Scale: 1,
		Counts: Counts{Tools: len(c.ids), CataloguePairs: len(ctexts), UsagePairs: len(train), Events: len(evs), HeldOut: len(held)},
	}
	if len(evs) > 0 {
		v.Split.From = evs[0].Seq
		v.Split.HeldOutUpTo = evs[len(evs)-1].Seq
		v.Split.TrainUpTo = v.Split.HeldOutUpTo
		if len(held) > 0 {
			v.Split.TrainUpTo = held[0].Seq - 1
		}
	}
	if cur, err := s.store.PromotedModelVersion(ctx); err == nil {
		v.Parent = cur.ID
	} else if !errors.Is(err, fault.ErrNotFound) {
		return Version{}, fmt.Errorf("retrain: promoted version: %w", err)
	}
	base := s.baseWeights()
	fit, tune := splitRecent(train, o.Tune)
	if len(tune) >= MinTune {
		v.Counts.Tune = len(tune)
		a, err := s.trainAdapter(ctx, c, cvecs, ctgt, fit, o)
		if err != nil {
			return Version{}, err
		}
		best := math.Inf(-1)
		for _, sc := range o.Scales {
			m := &retrieval.Model{Adapter: a, Weights: ptr(scaled(base, sc))}
			f, err := s.replay(ctx, newView(s.store, fit), m, tune, false)
			if err != nil {
				return Version{}, err
			}
			// Ties keep the scale nearer 1 (the tuned defaults).
			if f.MRR > best+1e-9 || (math.Abs(f.MRR-best) <= 1e-9 && math.Abs(sc-1) < math.Abs(v.Scale-1)) {
				best, v.Scale = f.MRR, sc
			}
		}
	}
	v.Weights = scaled(base, v.Scale)
	a, err := s.trainAdapter(ctx, c, cvecs, ctgt, train, o)
	if err != nil {
		return Version{}, err
	}
	v.Adapter, v.Dim = a, a.Dim
	// The record replays the training part through the fulfilment search
	// as this version will rank it, each query over the others' evidence.
	if v.Record, err = BuildRecord(ctx, s.store, s.emb, s.rank, &retrieval.Model{Adapter: a, Weights: &v.Weights}, train); err != nil {
		return Version{}, err
	}
	v.Counts.Recorded = v.Record.Len()
	v.TrainSeconds = time.Since(start).Seconds()
	if err := s.put(ctx, v); err != nil {
		return Version{}, err
	}
	v.Adapter = nil
	return v, nil
}

func ptr[T any](x T) *T { return &x }

// scaled multiplies the learned signals' weights by sc.
func scaled(w retrieval.Weights, sc float64) retrieval.Weights {
	w.Usage *= sc
	w.Neighbours *= sc
	w.QueryLog *= sc
	return w
}

func newID(t time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "rv-" + t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}

func (s *Service) put(ctx context.Context, v Version) error {
	mv, err := v.record()
	if err != nil {
		return err
	}
	if err := s.store.PutModelVersion(ctx, mv); err != nil {
		return fmt.Errorf("retrain: store version %q: %w", v.ID, err)
	}
	return nil
}

// replay ranks each distinct query of held with model m over the view and
// scores where the tools that served it land; with decide, it also makes
// the fulfilment decision on each (Figures.Substituted and Wrong).
func (s *Service) replay(ctx context.Context, v *view, m *retrieval.Model, held []graph.ServedQuery, decide bool) (Figures, error) {
	opts := s.rank
	opts.CacheSize, opts.FollowEvery, opts.Observer = -1, -1, nil
	svc := retrieval.New(v, s.emb, opts)
	svc.SetModel(m)
	served := map[string]map[string]bool{}
	var order []string
	text := map[string]string{}
	for _, e := range held {
		k := normText(e.Query)
		if served[k] == nil {
			served[k] = map[string]bool{}
			order = append(order, k)
			text[k] = e.Query
		}
		served[k][e.ToolID] = true
	}
	var f Figures
	tools := map[string]bool{}
	for _, e := range held {
		tools[e.ToolID] = true
	}
	f.Tools = len(tools)
	var rec *retrieval.Record
	if m != nil {
		rec = m.Record
	}
	rule := retrieval.DefaultSubstituteRule()
	for _, k := range order {
		hits, _, err := svc.Rank(ctx, retrieval.Query{Text: text[k], MaxTools: MaxRank, Caller: caller})
		if err != nil {
			return Figures{}, fmt.Errorf("retrain: replay %q: %w", text[k], err)
		}
		if decide {
			if err := decideOn(ctx, svc, rule, rec, text[k], served[k], &f); err != nil {
				return Figures{}, err
			}
		}
		for r, h := range hits {
			if served[k][h.Tool.ID] {
				f.MRR += 1 / float64(r+1)
				if r == 0 {
					f.R1++
				}
				if r < 5 {
					f.R5++
				}
				break
			}
		}
		f.N++
	}
	if f.N > 0 {
		f.R1, f.R5, f.MRR = f.R1/float64(f.N), f.R5/float64(f.N), f.MRR/float64(f.N)
		f.Substituted, f.Wrong = f.Substituted/float64(f.N), f.Wrong/float64(f.N)
	}
	return f, nil
}

// decideOn makes the decision a novel verb's workflow would make on query
// q (its fulfilment search, each candidate with the record rec) and
// counts it in f: substituted, and wrong when served has not the first.
func decideOn(ctx context.Context, svc *retrieval.Service, rule retrieval.SubstituteRule, rec *retrieval.Record, q string, served map[string]bool, f *Figures) error {
	hits, _, err := svc.Rank(ctx, retrieval.FulfilmentQuery(q, "", caller, nil))
	if err != nil {
		return fmt.Errorf("retrain: replay %q: %w", q, err)
	}
	cands := make([]retrieval.Candidate, len(hits))
	for i, h := range hits {
		cands[i] = h.Candidate()
		cands[i].Record, cands[i].Recorded = rec.Of(h.Tool.ID)
	}
	if len(hits) > 0 && rule.Substitute(cands) {
		f.Substituted++
		if !served[hits[0].Tool.ID] {
			f.Wrong++
		}
	}
	return nil
}

// Evaluation is a candidate's figures beside the current model's on the
// same held-out replay.
type Evaluation struct {
	ID        string  `json:"id"`
	Current   Figures `json:"current"`
	Candidate Figures `json:"candidate"`
	// CurrentVersion is the version the candidate was compared with (""
	// for the baseline).
	CurrentVersion string `json:"currentVersion,omitempty"`
}

// Evaluate replays the candidate's held-out queries through retrieval
// with the current model (the promoted version, or the baseline) and with
// the candidate, both over the evidence the candidate was trained on, and
// stores the figures on the candidate.
func (s *Service) Evaluate(ctx context.Context, id string) (Evaluation, error) {
	cand, err := s.Get(ctx, id)
	if err != nil {
		return Evaluation{}, err
	}
	var cur *retrieval.Model
	ev := Evaluation{ID: id}
	if p, err := s.store.PromotedModelVersion(ctx); err == nil {
		pv, err := fromStored(p)
		if err != nil {
			return Evaluation{}, err
		}
		cur, ev.CurrentVersion = pv.Model(), pv.ID
	} else if !errors.Is(err, fault.ErrNotFound) {
		return Evaluation{}, fmt.Errorf("retrain: promoted version: %w", err)
	}
	c, err := s.readCatalogue(ctx)
	if err != nil {
		return Evaluation{}, err
	}
	var train, held []graph.ServedQuery
	if cand.Split.HeldOutUpTo > 0 {
		evs, err := s.events(ctx, max(cand.Split.From-1, 0), cand.Split.HeldOutUpTo, max(cand.Counts.Events, 1), c)
		if err != nil {
			return Evaluation{}, err
		}
		for _, e := range evs {
			if e.Seq <= cand.Split.TrainUpTo {
				train = append(train, e)
			} else {
				held = append(held, e)
			}
		}
		train = withoutHeldTexts(train, held)
		if err := s.withEmbeddings(ctx, train); err != nil {
			return Evaluation{}, err
		}
	}
	vw := newView(s.store, train)
	if ev.Current, err = s.replay(ctx, vw, cur, held, true); err != nil {
		return Evaluation{}, err
	}
	if ev.Candidate, err = s.replay(ctx, vw, cand.Model(), held, true); err != nil {
		return Evaluation{}, err
	}
	seen, err := s.rolledBackSeen(ctx)
	if err != nil {
		return Evaluation{}, err
	}
	ev.Current.Fresh = fresh(held, seen)
	ev.Candidate.Fresh = ev.Current.Fresh
	// The catalogue's own texts, replayed over the same evidence: what the
	// newest uses cannot speak for.
	if own := catalogueQueries(c, MaxCatalogueQueries); len(own) > 0 {
		for _, side := range []struct {
			m *retrieval.Model
			f *Figures
		}{{cur, &ev.Current}, {cand.Model(), &ev.Candidate}} {
			fg, err := s.replay(ctx, vw, side.m, own, false)
			if err != nil {
				return Evaluation{}, err
			}
			side.f.Catalogue = &CatalogueFigures{R1: fg.R1, R5: fg.R5, MRR: fg.MRR, N: fg.N}
		}
	}
	cand.Current, cand.Candidate = &ev.Current, &ev.Candidate
	cand.Adapter = nil // the stored blob stays
	if err := s.put(ctx, cand); err != nil {
		return Evaluation{}, err
	}
	return ev, nil
}

// MaxCatalogueQueries bounds the catalogue replay: about a minute's
// ranking on two cores at 10,000 tools, twice.
const MaxCatalogueQueries = 600

// catalogueQueries are the catalogue's own texts as queries, each served
// by its tool: the first three of every tool's adapter.CatalogueTexts
// (its use cases first, then its short description and its description's
// sentences), at most max of them, the tools taken in the order of a hash
// of their ids (the same sample each time for the same catalogue).
func catalogueQueries(c catalogue, max int) []graph.ServedQuery {
	order := make([]int, len(c.ids))
	for i := range order {
		order[i] = i
	}
	hash := func(id string) uint32 {
		h := fnv.New32a()
		_, _ = h.Write([]byte(id))
		return h.Sum32()
	}
	sort.Slice(order, func(a, b int) bool { return hash(c.ids[order[a]]) < hash(c.ids[order[b]]) })
	var out []graph.ServedQuery
	for _, i := range order {
		texts := c.texts[i]
		if len(texts) > 3 {
			texts = texts[:3]
		}
		for _, t := range texts {
			if len(out) == max {
				return out
			}
			out = append(out, graph.ServedQuery{ToolID: c.ids[i], Query: t})
		}
	}
	return out
}

// rolledBackSeen is the newest served query (its Seq) that any version an
// operator rolled back from had seen, its held-out window's end; 0 when
// no version was rolled back.
func (s *Service) rolledBackSeen(ctx context.Context) (int64, error) {
	vs, err := s.store.ListModelVersions(ctx, MaxVersionsRead)
	if err != nil {
		return 0, fmt.Errorf("retrain: list versions: %w", err)
	}
	var seen int64
	for _, mv := range vs {
		if mv.Status != StatusRolledBack {
			continue
		}
		// Only the split is read: a version's record holds its per-tool
		// figures, which this needs none of.
		var v struct {
			Split Split `json:"split"`
		}
		if err := json.Unmarshal(mv.Record, &v); err != nil {
			return 0, fmt.Errorf("retrain: decode version %q: %w", mv.ID, err)
		}
		seen = max(seen, v.Split.HeldOutUpTo)
	}
	return seen, nil
}

// MaxVersionsRead bounds how many of the newest versions rolledBackSeen
// reads.
const MaxVersionsRead = 1000

// fresh counts the distinct queries of held (as replay counts them) with
// a use served after seen.
func fresh(held []graph.ServedQuery, seen int64) int {
	texts := map[string]bool{}
	for _, e := range held {
		if e.Seq > seen {
			texts[normText(e.Query)] = true
		}
	}
	return len(texts)
}

// Conclude records the gate's decision on a candidate: promoted (and
// applied) or rejected, with the reason.
func (s *Service) Conclude(ctx context.Context, id string, promote bool, reason string, g Gate) (Version, error) {
	v, err := s.Get(ctx, id)
	if err != nil {
		return Version{}, err
	}
	g = g.WithDefaults()
	v.Reason, v.Gate, v.Adapter = reason, &g, nil
	if !promote {
		v.Status = StatusRejected
		return v, s.put(ctx, v)
	}
	v.Status = StatusCandidate // PromoteModelVersion sets promoted
	if err := s.put(ctx, v); err != nil {
		return Version{}, err
	}
	if err := s.store.PromoteModelVersion(ctx, id, StatusSuperseded); err != nil {
		return Version{}, fmt.Errorf("retrain: promote %q: %w", id, err)
	}
	v.Status = StatusPromoted
	return v, s.Load(ctx)
}

// Get returns a version with its adapter.
func (s *Service) Get(ctx context.Context, id string) (Version, error) {
	mv, err := s.store.GetModelVersion(ctx, id)
	if err != nil {
		return Version{}, fmt.Errorf("retrain: version %q: %w", id, err)
	}
	return fromStored(mv)
}

// List returns up to limit versions, newest first, without adapters.
func (s *Service) List(ctx context.Context, limit int) ([]Version, error) {
	mvs, err := s.store.ListModelVersions(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("retrain: list versions: %w", err)
	}
	out := make([]Version, 0, len(mvs))
	for _, mv := range mvs {
		v, err := fromStored(mv)
		if err != nil {
			return nil, err
		}
		v.Record = nil // Get has it; a listing stays small
		out = append(out, v)
	}
	return out, nil
}

// Rollback makes version id the promoted one, or none (Baseline: the
// configured ranking); the version promoted before becomes rolled-back.
// It applies the result at once in this process.
func (s *Service) Rollback(ctx context.Context, id string) error {
	target := id
	if id == Baseline {
		target = ""
	}
	if err := s.store.PromoteModelVersion(ctx, target, StatusRolledBack); err != nil {
		if errors.Is(err, fault.ErrNotFound) {
			return fmt.Errorf("ranking version %q: %w", id, fault.ErrNotFound)
		}
		return fmt.Errorf("retrain: roll back to %q: %w", id, err)
	}
	return s.Load(ctx)
}

// Load applies the promoted version to the live retrieval service (none:
// the configured ranking). A restart calls it, so the promoted version
// survives one.
func (s *Service) Load(ctx context.Context) error {
	if s.live == nil {
		return nil
	}
	mv, err := s.store.PromotedModelVersion(ctx)
	if errors.Is(err, fault.ErrNotFound) {
		s.live.SetModel(nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("retrain: promoted version: %w", err)
	}
	v, err := fromStored(mv)
	if err != nil {
		return err
	}
	s.live.SetModel(v.Model())
	return nil
}

// PromotedID is the promoted version's id, or Baseline when none is.
func (s *Service) PromotedID(ctx context.Context) (string, error) {
	mv, err := s.store.PromotedModelVersion(ctx)
	if errors.Is(err, fault.ErrNotFound) {
		return Baseline, nil
	}
	if err != nil {
		return "", fmt.Errorf("retrain: promoted version: %w", err)
	}
	return mv.ID, nil
}

// DefaultFollowEvery is how often Follow checks which version is
// promoted: a promotion or rollback made by another process (a worker's
// retrain, another replica's admin route) applies here within it.
const DefaultFollowEvery = 30 * time.Second

// Follow keeps the live retrieval service on the promoted version until
// ctx ends: every interval it reads which version is promoted and loads it
// when that differs from the one applied. A failed read is reported to
// onError (when not nil) and tried again at the next tick.
func (s *Service) Follow(ctx context.Context, every time.Duration, onError func(error)) {
	if every <= 0 {
		every = DefaultFollowEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.refresh(ctx); err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
	}
}

// refresh loads the promoted version when it is not the one applied.
func (s *Service) refresh(ctx context.Context) error {
	if s.live == nil {
		return nil
	}
	want, err := s.PromotedID(ctx)
	if err != nil {
		return err
	}
	have := Baseline
	if m := s.live.Model(); m != nil {
		have = m.Version
	}
	if want == have {
		return nil
	}
	return s.Load(ctx)
}
