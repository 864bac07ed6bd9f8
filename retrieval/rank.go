package retrieval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/toolsmith/toolsmith/graph"
)

// candidate gathers one tool's raw signals before normalisation.
type candidate struct {
	sum        graph.ToolSummary
	semantic   float64 // cosine; valid when hasSem
	centred    float64 // cosine after centring (centreSemantic); valid when hasCentred
	spread     float64 // |t − m|, the tool vector's length after centring; valid when hasCentred
	phrase     float64 // the best query phrase's cosine (scorePhrases); valid when hasPhrase
	hasPhrase  bool
	hasSem     bool
	hasCentred bool
	keyword    float64 // bm25-like, > 0 when matched
	usage      float64 // cosine to the usage centroid; valid when hasUsage
	hasUsage   bool
	votes      float64 // neighbours' kNN vote: summed similarity of the neighbours above the evidence floor
	voteExcess float64 // their summed excess over the floor, in [0,k]
	votesBelow float64 // the summed similarity of the neighbours below the floor
	queryLog   float64 // bm25 against the tool's served queries (queryLog)
	verb       bool    // the query names the tool's verb
	history    float64 // recency in (0,1]
	graph      float64 // entity boost (+) or damping (−)
	subword    float64 // character n-gram TF-IDF cosine (addSubword)
	pairing    float64 // learned pairing with a top hit, in [0,1) (addPairings)
	popularity float64 // the scheduled analytics' prior, in [0,1]
	nearest    float64 // the best similarity of its past queries among the query's k nearest; valid when votes+votesBelow > 0
	admitted   bool    // a near-paraphrase of a past query admits it (Options.Admit)
	entities   []string
}

// signalsFor says which sources a strategy consults.
type sources struct {
	semantic, keyword, usage, history, pairings, entities bool
}

func sourcesFor(st Strategy) sources {
	switch st {
	case StrategySemantic:
		return sources{semantic: true}
	case StrategyKeyword:
		return sources{keyword: true}
	case StrategySession:
		return sources{semantic: true, keyword: true, usage: true, history: true, pairings: true, entities: true}
	default: // hybrid, category
		return sources{semantic: true, keyword: true, usage: true, history: true, entities: true}
	}
}

// rank gathers candidates from every source the strategy uses, scores them
// and returns the best k with the entities found.
func (s *Service) rank(ctx context.Context, q Query, k int) ([]Hit, []FoundEntity, error) {
	src := sourcesFor(q.Strategy)
	f := filterFor(q)
	n := max(s.opts.Candidates, k)
	cands := map[string]*candidate{}
	get := func(sum graph.ToolSummary) *candidate {
		c, ok := cands[sum.ID]
		if !ok {
			c = &candidate{sum: sum}
			cands[sum.ID] = c
		}
		return c
	}

	// One model for the whole search, however SetModel swaps meanwhile.
	model := s.model.Load()
	w := s.weightsFor(model, q.Strategy)
	var phraseWork *phraseJob
	if w.Phrase != 0 && src.semantic && q.Strategy != StrategySemantic && !q.WholeQuery {
		// The windows are embedded while the rest of the ranking runs.
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		phraseWork = s.startPhrases(pctx, q.Text)
	}

	var qv []float32
	if src.semantic || src.usage {
		var err error
		if qv, err = s.queryVector(ctx, q.Text); err != nil {
			return nil, nil, err
		}
	}
	sv := model.semanticVector(qv) // the vector compared with tool vectors
	// The three index searches are independent: run them concurrently so
	// a search costs the slowest of them, not their sum.
	var semHits, kwHits, useHits []graph.Hit
	var semErr, kwErr, useErr error
	var wg sync.WaitGroup
	if src.semantic {
		wg.Add(1)
		go func() { defer wg.Done(); semHits, semErr = s.store.VectorSearch(ctx, sv, n, f) }()
	}
	if src.keyword {
		wg.Add(1)
		go func() { defer wg.Done(); kwHits, kwErr = s.store.TextSearch(ctx, q.Text, n, f) }()
	}
	if src.usage {
		wg.Add(1)
		go func() { defer wg.Done(); useHits, useErr = s.store.UsageSearch(ctx, qv, n, f) }()
	}
	wg.Wait()
	if semErr == nil && src.semantic && s.opts.Feedback > 0 && len(semHits) > 0 {
		semHits, semErr = s.feedback(ctx, sv, semHits, n, f)
	}
	switch {
	case semErr != nil:
		return nil, nil, fmt.Errorf("retrieval: vector search: %w", semErr)
	case kwErr != nil:
		return nil, nil, fmt.Errorf("retrieval: text search: %w", kwErr)
	case useErr != nil:
		return nil, nil, fmt.Errorf("retrieval: usage search: %w", useErr)
	}
	for _, h := range semHits {
		c := get(h.Tool)
		c.semantic, c.hasSem = h.Score, true
	}
	for _, h := range kwHits {
		get(h.Tool).keyword = h.Score
	}
	// Usage evidence reorders the tools the query itself makes plausible;
	// it does not bring in others (a tool used often must not enter an
	// unrelated query's results), except through a near-paraphrase of a
	// query it served (Options.Admit). A near-paraphrase admits its tool
	// wherever the query's own signals put it: one that is already a
	// candidate but below the Plausible best is admitted as well as one
	// the sources did not return.
	floor := s.evidenceFloor(semHits)
	for _, h := range useHits {
		if c, ok := cands[h.Tool.ID]; ok {
			c.usage, c.hasUsage = h.Score, true
		}
	}
	var usage map[string]graph.Usage
	if src.usage && s.exemplars != nil {
		if err := s.followMemory(ctx, false); err != nil {
			return nil, nil, err
		}
		votes := s.exemplars.vote(qv, s.opts.Neighbours, floor)
		admit := map[string]float64{}
		for id, v := range votes {
			if c, ok := cands[id]; ok {
				c.votes, c.voteExcess, c.votesBelow, c.nearest = v.sum, v.excess, v.below, v.best
				c.admitted = v.best >= s.opts.Admit
			} else if v.best >= s.opts.Admit {
				admit[id] = v.sum
			}
		}
		if err := s.addScored(ctx, admit, f, cands, get, func(c *candidate, v float64) {
			c.votes, c.voteExcess, c.votesBelow, c.nearest, c.admitted = v, votes[c.sum.ID].excess, votes[c.sum.ID].below, votes[c.sum.ID].best, true
		}); err != nil {
			return nil, nil, fmt.Errorf("retrieval: neighbour tools: %w", err)
		}
		if w.QueryLog != 0 {
			for id, v := range s.exemplars.logScores(q.Text) {
				if c, ok := cands[id]; ok {
					c.queryLog = v
				}
			}
		}
	}
	if src.history && q.Caller.SessionID != "" {
		if err := s.addHistory(ctx, q, f, get, src.pairings); err != nil {
			return nil, nil, err
		}
	}
	var found []FoundEntity
	if src.entities {
		var err error
		found, err = s.addEntities(ctx, q, f, cands, get)
		if err != nil {
			return nil, nil, err
		}
	}
	if len(cands) == 0 {
		return []Hit{}, found, nil
	}
	ids := make([]string, 0, len(cands))
	for id := range cands {
		ids = append(ids, id)
	}
	if src.usage { // success rates and centroid counts; single-signal strategies skip it
		var err error
		if usage, err = s.store.Usage(ctx, ids); err != nil {
			return nil, nil, fmt.Errorf("retrieval: usage: %w", err)
		}
	}
	if w.Subword != 0 && q.Strategy != StrategySemantic && q.Strategy != StrategyKeyword {
		s.addSubword(q.Text, cands)
	}
	var mean []float32 // the catalogue's mean vector, when the cosines are centred
	if s.opts.Normalisation == "z" && src.semantic {
		// z-scores need every candidate's cosine, not only those the
		// vector search returned.
		if err := s.fillSemantic(ctx, sv, f, cands); err != nil {
			return nil, nil, err
		}
		var err error
		if mean, err = s.centreSemantic(ctx, sv, f, cands); err != nil {
			return nil, nil, err
		}
	}
	if err := s.scorePhrases(ctx, phraseWork, f, cands, mean, model); err != nil {
		return nil, nil, err
	}
	qWords := normPhrase(q.Text)
	for _, c := range cands {
		// Planners ask by verb: a query that names a tool's verb
		// ("MAKE_RESERVATION", "make reservation") is about that verb.
		if vw := normPhrase(strings.ReplaceAll(c.sum.Verb, "_", " ")); strings.TrimSpace(vw) != "" && strings.Contains(qWords, vw) {
			c.verb = true
		}
	}
	if src.usage && w.Popularity > 0 {
		pop, err := s.popularity(ctx)
		if err != nil {
			return nil, nil, err
		}
		for id, c := range cands {
			c.popularity = pop[id]
		}
	}
	hits := s.score(cands, usage, w, q.Strategy, floor)
	if src.usage && w.Pairing > 0 { // the learning strategies (hybrid, category, session)
		var err error
		if hits, err = s.addPairings(ctx, q, f, sv, hits, cands, get, usage, w, floor); err != nil {
			return nil, nil, err
		}
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, found, nil
}

// addPairings is the pairing signal: the tools learned to pair with the
// best two hits (used together before) get their pairing strength, halved
// for the second hit's partners, and the candidates are scored again.
// Partners that were not candidates join through the caller's filter.
func (s *Service) addPairings(ctx context.Context, q Query, f graph.Filter, qv []float32, hits []Hit, cands map[string]*candidate,
	get func(graph.ToolSummary) *candidate, usage map[string]graph.Usage, w Weights, floor float64) ([]Hit, error) {
	changed := false
	var added []string
	for i, h := range hits[:min(2, len(hits))] {
		partners, err := s.store.LearnedPairs(ctx, h.Tool.ID, 5, f, s.opts.Now())
		if err != nil {
			return nil, fmt.Errorf("retrieval: learned pairings of %q: %w", h.Tool.ID, err)
		}
		for _, p := range partners {
			if _, ok := cands[p.Tool.ID]; !ok {
				added = append(added, p.Tool.ID)
			}
			c := get(p.Tool)
			if v := learnedStrength(p.Score) / float64(i+1); v > c.pairing {
				c.pairing, changed = v, true
			}
		}
	}
	if !changed {
		return hits, nil
	}
	if len(added) > 0 {
		if s.opts.Normalisation == "z" {
			if err := s.fillSemantic(ctx, qv, f, cands); err != nil {
				return nil, err
			}
			if _, err := s.centreSemantic(ctx, qv, f, cands); err != nil {
				return nil, err
			}
		}
		if usage != nil {
			more, err := s.store.Usage(ctx, added)
			if err != nil {
				return nil, fmt.Errorf("retrieval: usage: %w", err)
			}
			for id, u := range more {
				usage[id] = u
			}
		}
	}
	return s.score(cands, usage, w, q.Strategy, floor), nil
}

// relatedCuts are the similarities a candidate must reach, on one of four
// measures, for the open gate to reach it (Options.RelatedMargin below the
// query's best on that measure): its description's cosine to the query
// (sem) or to the query's best phrase (phrase: a query of two tasks is
// about the second one too), its usage centroid's (usage) and its nearest
// past query's among the query's k nearest (past). Each is compared with
// the best of its own kind, since they run on different levels: a
// centroid, the mean of many served queries, and a past query, a query
// like this one, both run above a description.
type relatedCuts struct {
	sem, phrase, usage, past float64
	off                      bool
}

// relatedCuts measures the cuts of one search's candidates.
func (s *Service) relatedCuts(cands map[string]*candidate) relatedCuts {
	r := relatedCuts{sem: math.Inf(-1), phrase: math.Inf(-1), usage: math.Inf(-1), past: math.Inf(-1), off: s.opts.RelatedMargin < 0}
	for _, c := range cands {
		if c.hasSem {
			r.sem = math.Max(r.sem, c.semantic)
		}
		if c.hasPhrase {
			r.phrase = math.Max(r.phrase, c.phrase)
		}
		if c.hasUsage {
			r.usage = math.Max(r.usage, c.usage)
		}
		if c.votes+c.votesBelow > 0 {
			r.past = math.Max(r.past, c.nearest)
		}
	}
	r.sem -= s.opts.RelatedMargin
	r.phrase -= s.opts.RelatedMargin
	r.usage -= s.opts.RelatedMargin
	r.past -= s.opts.RelatedMargin
	return r
}

// related says whether the open gate reaches c: its description (to the
// query or its best phrase), its usage centroid or one of its past queries
// among the query's nearest comes within Options.RelatedMargin of the best
// candidate's on the same measure.
// A candidate without a cosine (a keyword match only) is related, as are
// all when RelatedMargin < 0.
func (r relatedCuts) related(c *candidate) bool {
	if r.off || !c.hasSem {
		return true
	}
	return c.semantic >= r.sem || (c.hasPhrase && c.phrase >= r.phrase) || (c.hasUsage && c.usage >= r.usage) ||
		(c.votes+c.votesBelow > 0 && c.nearest >= r.past)
}

// evidenceFloor is the similarity a past query (a neighbour, or a tool's
// usage centroid) must reach for its evidence to count: the query's best
// cosine to a tool's description plus Options.NeighbourMargin, and at least
// Options.NeighbourFloor. A past query counts when it is closer to this
// query than the catalogue's best description is; a query unlike anything
// served before gets no usage evidence, however much history there is.
func (s *Service) evidenceFloor(semHits []graph.Hit) float64 {
	best := math.Inf(-1)
	for _, h := range semHits {
		best = math.Max(best, h.Score)
	}
	if math.IsInf(best, -1) {
		return s.opts.NeighbourFloor
	}
	return math.Max(s.opts.NeighbourFloor, best+s.opts.NeighbourMargin)
}

// feedback is pseudo-relevance feedback (Rocchio) in embedding space: the
// query vector moves towards the mean of its best matches' vectors, which
// pulls in tools described like the likely answer rather than like the
// question, and the vector search runs again with it.
func (s *Service) feedback(ctx context.Context, qv []float32, hits []graph.Hit, n int, f graph.Filter) ([]graph.Hit, error) {
	m := min(s.opts.FeedbackDocs, len(hits))
	moved := slices.Clone(graph.Normalize(qv))
	for _, h := range hits[:m] {
		t, err := s.store.GetTool(ctx, h.Tool.ID)
		if err != nil {
			return nil, fmt.Errorf("feedback vector of %q: %w", h.Tool.ID, err)
		}
		if len(t.Embedding) != len(moved) {
			return hits, nil
		}
		v := graph.Normalize(t.Embedding)
		for i := range moved {
			moved[i] += float32(s.opts.Feedback/float64(m)) * v[i]
		}
	}
	return s.store.VectorSearch(ctx, moved, n, f)
}

// addHistory turns the session's recent tools into the history signal
// (recency 1/(1+rank of last use)) and, for the session strategy, adds the
// tools commonly paired with them as candidates.
func (s *Service) addHistory(ctx context.Context, q Query, f graph.Filter, get func(graph.ToolSummary) *candidate, pairings bool) error {
	evs, err := s.store.SessionHistory(ctx, q.Caller.SessionID, s.opts.HistoryLimit)
	if err != nil {
		return fmt.Errorf("retrieval: session history: %w", err)
	}
	// Recency rank of each distinct tool, newest first.
	type use struct {
		rank    int
		success bool
	}
	uses := map[string]use{}
	var order []string
	for _, ev := range evs {
		if _, ok := uses[ev.ToolID]; ok {
			continue
		}
		uses[ev.ToolID] = use{rank: len(order) + 1, success: ev.Success}
		order = append(order, ev.ToolID)
	}
	if len(order) == 0 {
		return nil
	}
	// One query for every summary; the filter keeps only visible tools.
	hf := f
	hf.IDs = order
	page, err := s.store.ListTools(ctx, graph.ListQuery{Limit: len(order), Filter: hf})
	if err != nil {
		return fmt.Errorf("retrieval: session tools: %w", err)
	}
	for _, t := range page.Items {
		if !visible(f, &t) {
			continue
		}
		u := uses[t.ID]
		recency := 1 / float64(u.rank)
		if !u.success {
			recency /= 2
		}
		c := get(t)
		c.history = math.Max(c.history, recency)
		if pairings {
			rel, err := s.pairings(ctx, t.ID, 3, f)
			if err != nil {
				return err
			}
			for _, h := range rel {
				pc := get(h.Tool)
				pc.history = math.Max(pc.history, recency*0.5*math.Max(h.Score, 0.5))
			}
		}
	}
	return nil
}

// addScored sets a usage-evidence score (the neighbours' vote, the query
// log's bm25) on the tools it names; tools that are not candidates yet are
// fetched in one query through the caller's filter, so invisible tools
// never enter.
func (s *Service) addScored(ctx context.Context, scores map[string]float64, f graph.Filter, cands map[string]*candidate, get func(graph.ToolSummary) *candidate, set func(*candidate, float64)) error {
	if len(scores) == 0 {
		return nil
	}
	var missing []string
	for id, v := range scores {
		if c, ok := cands[id]; ok {
			set(c, v)
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	mf := f
	mf.IDs = missing
	page, err := s.store.ListTools(ctx, graph.ListQuery{Limit: len(missing), Filter: mf})
	if err != nil {
		return err
	}
	for _, t := range page.Items {
		if visible(f, &t) {
			set(get(t), scores[t.ID])
		}
	}
	return nil
}

// visible applies a filter's pushed-down fields and Allow to a summary.
func visible(f graph.Filter, t *graph.ToolSummary) bool {
	if t.Status != graph.StatusActive {
		return false
	}
	if len(f.Categories) > 0 {
		ok := false
		for _, c := range f.Categories {
			ok = ok || c == t.Category
		}
		if !ok {
			return false
		}
	}
	return f.Allow == nil || f.Allow(t)
}

// minMax normalises values to [0,1]: (v − min)/(max − min) over the
// candidates that have the signal. A single value or a flat set has no
// spread to normalise, so it keeps its raw value clamped to [0,1] (a lone
// weak cosine stays weak).
// Candidates without the signal get 0. Min-max suits cosine-like signals,
// which cluster in a narrow band whose absolute level says little.
func minMax(vals map[string]float64) map[string]float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	out := make(map[string]float64, len(vals))
	for id, v := range vals {
		if hi-lo < 1e-12 {
			out[id] = math.Max(0, math.Min(1, v))
		} else {
			out[id] = (v - lo) / (hi - lo)
		}
	}
	return out
}

// zScores standardises a signal over the candidate set: (v − mean)/sd,
// with candidates missing from vals taking the lowest value present. Unlike
// min-max it does not let one outlier stretch the scale for the rest, so
// signals with different spreads combine by their weights. A flat set
// scores 0.
func zScores(vals map[string]float64, cands map[string]*candidate) map[string]float64 {
	out := make(map[string]float64, len(cands))
	if len(vals) == 0 {
		return out
	}
	lo := math.Inf(1)
	for _, v := range vals {
		lo = math.Min(lo, v)
	}
	var sum, sq float64
	for id := range cands {
		v, ok := vals[id]
		if !ok {
			v = lo
		}
		sum += v
		sq += v * v
	}
	n := float64(len(cands))
	mean := sum / n
	sd := math.Sqrt(math.Max(sq/n-mean*mean, 0))
	if sd < 1e-12 {
		return out
	}
	for id := range cands {
		v, ok := vals[id]
		if !ok {
			v = lo
		}
		out[id] = (v - mean) / sd
	}
	return out
}

// fillSemantic gives every candidate that the vector search did not return
// its cosine, with a vector search restricted to those ids.
func (s *Service) fillSemantic(ctx context.Context, qv []float32, f graph.Filter, cands map[string]*candidate) error {
	var ids []string
	for id, c := range cands {
		if !c.hasSem {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 || qv == nil {
		return nil
	}
	f.IDs = ids
	hits, err := s.store.VectorSearch(ctx, qv, len(ids), f)
	if err != nil {
		return fmt.Errorf("retrieval: vector search: %w", err)
	}
	for _, h := range hits {
		if c, ok := cands[h.Tool.ID]; ok {
			c.semantic, c.hasSem = h.Score, true
		}
	}
	return nil
}

// centreSemantic sets each candidate's centred cosine, the cosine between
// the query and the tool vector minus the mean tool vector m:
// (q·t − q·m) / |t − m|, with |t − m|² = 1 − 2·t·m + |m|² for unit t. Text
// embeddings share a common direction that lifts every cosine alike; taking
// it out lets the differences between tools decide (evaluation/TUNING.md,
// third round). t·m for the candidates comes from one vector search
// restricted to them. It returns the mean it centred on (the phrase signal
// centres with it too), nil when the store has no active tool vectors.
func (s *Service) centreSemantic(ctx context.Context, qv []float32, f graph.Filter, cands map[string]*candidate) ([]float32, error) {
	if qv == nil {
		return nil, nil
	}
	mean, err := s.store.MeanVector(ctx)
	if err != nil {
		return nil, fmt.Errorf("retrieval: mean vector: %w", err)
	}
	if len(mean) != len(qv) {
		return nil, nil
	}
	var mm float64
	for _, x := range mean {
		mm += float64(x) * float64(x)
	}
	mm = math.Sqrt(mm)
	if mm < 1e-9 {
		return nil, nil
	}
	var ids []string
	for id, c := range cands {
		if c.hasSem {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	f.IDs = ids
	hits, err := s.store.VectorSearch(ctx, mean, len(ids), f)
	if err != nil {
		return nil, fmt.Errorf("retrieval: vector search: %w", err)
	}
	qm := dot64(graph.Normalize(qv), mean)
	for _, h := range hits {
		c, ok := cands[h.Tool.ID]
		if !ok {
			continue
		}
		tm := h.Score * mm // VectorSearch normalises the mean: score = t·m/|m|
		if d := 1 - 2*tm + mm*mm; d > 1e-12 {
			c.spread = math.Sqrt(d)
			c.centred, c.hasCentred = (c.semantic-qm)/c.spread, true
		}
	}
	return mean, nil
}

// rankNorm maps values to (c+1)/(c+rank), rank 1 = highest: reciprocal-rank
// fusion's curve scaled so the best gets 1. It ignores score gaps, which
// makes sources with incomparable score scales combine evenly.
func rankNorm(vals map[string]float64, c float64) map[string]float64 {
	ids := make([]string, 0, len(vals))
	for id := range vals {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if vals[ids[i]] != vals[ids[j]] {
			return vals[ids[i]] > vals[ids[j]]
		}
		return ids[i] < ids[j]
	})
	out := make(map[string]float64, len(ids))
	for r, id := range ids {
		out[id] = (c + 1) / (c + float64(r+1))
	}
	return out
}

// score normalises each signal within the candidate set and combines them.
// The signals learned from use (usage centroid, neighbours, query log,
// popularity, pairing) count only for the Options.Plausible best
// candidates by the query's own signals, and for tools a near-paraphrase
// admitted, and only when this query has evidence for the tool (plausible):
// they reorder what the query makes plausible. floor is the evidence floor
// (evidenceFloor) a usage centroid must pass to count as evidence.
func (s *Service) score(cands map[string]*candidate, usage map[string]graph.Usage, w Weights, st Strategy, floor float64) []Hit {
	sem, useAny, phr := map[string]float64{}, map[string]float64{}, map[string]float64{}
	maxKw, maxGraph := 0.0, 0.0
	for id, c := range cands {
		if c.hasPhrase {
			phr[id] = c.phrase
		}
		if c.hasSem {
			sem[id] = c.semantic
			if c.hasCentred {
				sem[id] = c.centred
			}
		}
		if c.hasUsage {
			useAny[id] = c.usage
		}
		maxKw = math.Max(maxKw, c.keyword)
		maxGraph = math.Max(maxGraph, math.Abs(c.graph))
	}
	semN, phrN := minMax(sem), minMax(phr)
	useAll := minMax(useAny)
	below := make(map[string][2]float64, len(cands)) // neighbours and centroid as they count with the gate open
	var kwN, subN map[string]float64
	switch s.opts.Normalisation {
	case "z":
		kw, sub := map[string]float64{}, map[string]float64{}
		for id, c := range cands {
			kw[id], sub[id] = c.keyword, c.subword
		}
		semN, kwN, subN, phrN = zScores(sem, cands), zScores(kw, cands), zScores(sub, cands), zScores(phr, cands)
	case "rank":
		kw := map[string]float64{}
		for id, c := range cands {
			if c.keyword > 0 {
				kw[id] = c.keyword
			}
		}
		semN, kwN, phrN = rankNorm(sem, s.opts.RankConstant), rankNorm(kw, s.opts.RankConstant), rankNorm(phr, s.opts.RankConstant)
	}
	if subN == nil {
		// The subword cosine lies in [0,1] with a natural zero, like bm25.
		maxSub := 0.0
		for _, c := range cands {
			maxSub = math.Max(maxSub, c.subword)
		}
		subN = map[string]float64{}
		for id, c := range cands {
			if maxSub > 0 {
				subN[id] = c.subword / maxSub
			}
		}
	}
	switch st {
	case StrategySemantic:
		w = Weights{Semantic: 1}
	case StrategyKeyword:
		w = Weights{Keyword: 1}
	}
	hits := make([]Hit, 0, len(cands))
	for id, c := range cands {
		var b Breakdown
		b.Semantic = Signal{Raw: c.semantic, Norm: semN[id]}
		b.Phrase = Signal{Raw: c.phrase, Norm: phrN[id]}
		// bm25 has a natural zero (no match), so it is scaled by the best
		// score rather than min-maxed: a weak lone match stays weak.
		b.Subword = Signal{Raw: c.subword, Norm: subN[id]}
		if kwN != nil {
			b.Keyword = Signal{Raw: c.keyword, Norm: kwN[id]}
		} else if maxKw > 0 {
			b.Keyword = Signal{Raw: c.keyword, Norm: c.keyword / maxKw}
		}
		u := usage[id]
		// Usage centroid similarity counts in proportion to the evidence
		// behind it: n/(n+prior) of n served queries.
		conf := float64(u.CentroidN) / (float64(u.CentroidN) + s.opts.UsagePrior)
		// It counts only as far as the gate is open, as the min-max over
		// every candidate with a centroid. While the gate is closed a
		// centroid above the evidence floor marks the tool as one this query
		// has evidence for (plausible), but adds nothing itself: the mean of
		// many served queries shares the direction every query has, so its
		// cosine runs above a single description's, and measured from the
		// floor it lifted a used tool over the cold tools the query was for
		// (sparse history, evaluation/TUNING.md). The neighbours, single past
		// queries measured from the same floor, carry the evidence then.
		b.Usage = Signal{Raw: c.usage}
		below[id] = [2]float64{math.Min(1, (c.votes+c.votesBelow)/float64(s.opts.Neighbours)), useAll[id] * conf}
		// The kNN vote is normalised absolutely, as the mean excess of the
		// neighbours' similarity over the evidence floor (in [0,1]):
		// scaling by the best vote would make a lone weak neighbour look as
		// strong as an exact paraphrase, and a neighbour barely above the
		// floor is barely evidence. As far as the gate is open (every
		// candidate has history, below) it becomes the mean similarity of
		// all k neighbours.
		b.Neighbours = Signal{Raw: c.votes + c.votesBelow, Norm: math.Min(1, c.voteExcess/float64(s.opts.Neighbours))}
		// The query log's bm25 is used as it is: it has a natural zero and an
		// absolute scale through idf, which is small while few tools have
		// served queries, so a young log cannot swamp the other signals
		// (z-scores would inflate a lone weak match to a large score).
		b.QueryLog = Signal{Raw: c.queryLog, Norm: c.queryLog}
		if c.verb {
			b.Verb = Signal{Raw: 1, Norm: 1}
		}
		b.History = Signal{Raw: c.history, Norm: c.history}
		// Bayesian success rate: unused tools score the prior.
		rate := (float64(u.Successes) + s.opts.SuccessPrior*s.opts.SuccessPriorN) / (float64(u.Uses) + s.opts.SuccessPriorN)
		b.Success = Signal{Raw: rate, Norm: rate}
		if maxGraph > 0 {
			b.Graph = Signal{Raw: c.graph, Norm: c.graph / maxGraph}
		}
		cx := complexityPenalty(c.sum.Complexity)
		b.Complexity = Signal{Raw: cx, Norm: cx}
		b.Pairing = Signal{Raw: c.pairing, Norm: c.pairing}
		b.Popularity = Signal{Raw: c.popularity, Norm: c.popularity}

		hits = append(hits, Hit{Tool: c.sum, Breakdown: b, Entities: c.entities})
	}
	learn, coverage, topServed := s.plausible(hits, w, cands, usage, floor)
	rel := s.relatedCuts(cands)
	// How far usage evidence may count beyond the gate: not at all while
	// fewer than half of the plausible candidates have served queries (a
	// lone used tool has no competitor to be weighed against), fully when
	// all have (then every candidate's evidence is on the same footing).
	// Nor at all when the query's own best candidate has served nothing:
	// it cannot be weighed on that footing, so opening the gate would rank
	// it below tools for their history elsewhere, and history on other
	// tools would turn a cold tool's substitution into a refusal. Then the ranking is the zero-shot one, but for the tools this
	// query has evidence for.
	open := math.Max(0, 2*coverage-1)
	if !topServed {
		open = 0
	}
	for i := range hits {
		b := &hits[i].Breakdown
		id := hits[i].Tool.ID
		// The open gate puts every candidate's evidence on the same
		// footing, but only for the tools the query is about: a tool
		// neither whose description nor whose served queries come near
		// this query is not lifted by history from elsewhere, however
		// dense (in a small catalogue every tool has history and the
		// plausible set is most of it).
		reach := open
		if !rel.related(cands[id]) {
			reach = 0
		}
		// The query log and popularity compare a tool with the others by
		// what each has served, and tools that served nothing yet cannot
		// answer: they count in proportion to the share of plausible
		// candidates that have served queries (1 when all have).
		b.QueryLog.Norm *= coverage
		b.Popularity.Norm *= coverage
		// As far as the gate is open, neighbours and the centroid count as
		// before it: every neighbour's similarity, min-max over the
		// candidates' centroids.
		b.Neighbours.Norm += reach * (below[id][0] - b.Neighbours.Norm)
		b.Usage.Norm += reach * (below[id][1] - b.Usage.Norm)
		hits[i].Score = weigh(b, w, learn[id], reach, s.opts.SuccessPrior)
	}
	s.noOvertaking(hits, cands, w.Success, s.opts.SuccessPrior)
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Tool.ID < hits[j].Tool.ID
	})
	return hits
}

// noOvertaking keeps use from lifting a tool over one the query is far
// more about: a candidate whose description's cosine to the query (or to
// its best phrase, whichever is higher) is Options.UsageMargin or more
// above another's stays above it however much the other learned from
// use. The lifted tool's learned signals (usage centroid, neighbours,
// query log, pairing, popularity, a success rate above the prior) are
// scaled down, all alike, until its score is just below the better
// match's; its own signals are untouched, so use still reorders the tools
// a query is about, and a tool lifted into the first places of a query
// it is not about stays under the tools it is about. Candidates are read
// from the most like the query down, so each cap is a final score.
func (s *Service) noOvertaking(hits []Hit, cands map[string]*candidate, wSuccess, prior float64) {
	if s.opts.UsageMargin < 0 || len(hits) < 2 {
		return
	}
	about := func(h *Hit) float64 {
		c := cands[h.Tool.ID]
		if c == nil || !c.hasSem {
			return math.Inf(1) // a keyword match only: nothing to compare
		}
		if c.hasPhrase {
			return math.Max(c.semantic, c.phrase)
		}
		return c.semantic
	}
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return about(&hits[order[a]]) > about(&hits[order[b]]) })
	for k, i := range order {
		h := &hits[i]
		b := &h.Breakdown
		lifted := []*Signal{&b.Usage, &b.Neighbours, &b.QueryLog, &b.Pairing, &b.Popularity}
		learned := 0.0
		for _, sig := range lifted {
			learned += math.Max(0, sig.Weighted)
		}
		succ := math.Max(0, b.Success.Weighted-wSuccess*prior)
		learned += succ
		if learned <= 0 {
			continue
		}
		capScore := math.Inf(1)
		mine := about(h)
		for _, j := range order[:k] {
			if about(&hits[j]) >= mine+s.opts.UsageMargin {
				capScore = math.Min(capScore, hits[j].Score)
			}
		}
		if h.Score < capScore {
			continue
		}
		const below = 1e-6
		f := math.Max(0, 1-(h.Score-(capScore-below))/learned)
		for _, sig := range lifted {
			if sig.Weighted > 0 {
				sig.Weighted *= f
			}
		}
		if succ > 0 {
			b.Success.Weighted = wSuccess*prior + succ*f
		}
		h.Score = h.Score - learned*(1-f)
	}
}

// weigh applies the weights to a breakdown's normalised signals and returns
// the score. Without learn (outside the plausible set, or no evidence for
// this query) the signals learned from use that raise a tool (usage
// centroid, neighbours, query log, pairing, popularity, a success rate above
// the prior) count only as far as the gate is open (open, in [0,1]: 0 while
// few candidates have history or the query's own best candidate has none,
// when they count as for a tool never used);
// failures count against a tool everywhere.
func weigh(b *Breakdown, w Weights, learn bool, open, prior float64) float64 {
	if !learn {
		for _, sig := range []*Signal{&b.Usage, &b.Neighbours, &b.QueryLog, &b.Pairing, &b.Popularity} {
			sig.Norm *= open
		}
		if b.Success.Norm > prior {
			b.Success.Norm = prior + open*(b.Success.Norm-prior)
		}
	}
	b.Semantic.Weighted = w.Semantic * b.Semantic.Norm
	b.Phrase.Weighted = w.Phrase * b.Phrase.Norm
	b.Keyword.Weighted = w.Keyword * b.Keyword.Norm
	b.Subword.Weighted = w.Subword * b.Subword.Norm
	b.Usage.Weighted = w.Usage * b.Usage.Norm
	b.Neighbours.Weighted = w.Neighbours * b.Neighbours.Norm
	b.QueryLog.Weighted = w.QueryLog * b.QueryLog.Norm
	b.Verb.Weighted = w.Verb * b.Verb.Norm
	b.History.Weighted = w.History * b.History.Norm
	b.Success.Weighted = w.Success * b.Success.Norm
	b.Graph.Weighted = w.Graph * b.Graph.Norm
	b.Complexity.Weighted = -w.Complexity * b.Complexity.Norm
	b.Pairing.Weighted = w.Pairing * b.Pairing.Norm
	b.Popularity.Weighted = w.Popularity * b.Popularity.Norm
	score := b.Semantic.Weighted + b.Phrase.Weighted + b.Keyword.Weighted + b.Subword.Weighted + b.Usage.Weighted + b.Neighbours.Weighted + b.QueryLog.Weighted + b.Verb.Weighted + b.History.Weighted +
		b.Success.Weighted + b.Graph.Weighted + b.Complexity.Weighted + b.Pairing.Weighted + b.Popularity.Weighted
	return score
}

// plausible returns the candidates whose learned signals count fully: among
// the Options.Plausible best by the query's own signals (semantic, phrase,
// keyword, subword, verb, session history, graph, complexity) and those a
// near-paraphrase of a past query admitted, the ones this query has
// evidence for. Plausible < 0 puts every candidate in the plausible set.
// It also returns the share of the plausible set that has served queries,
// and whether the best candidate by the query's own signals has.
func (s *Service) plausible(hits []Hit, w Weights, cands map[string]*candidate, usage map[string]graph.Usage, floor float64) (map[string]bool, float64, bool) {
	learn := make(map[string]bool, len(hits))
	served := 0 // plausible candidates that have served queries
	// Evidence for this query: a past query above the floor voted for the
	// tool, or its usage centroid is above the floor. Without it, what the
	// tool learned elsewhere (its query log, popularity, success) says
	// nothing about this query.
	evidence := func(id string) bool {
		c := cands[id]
		return c.votes > 0 || (c.hasUsage && c.usage >= floor)
	}
	own := func(b *Breakdown) float64 {
		return w.Semantic*b.Semantic.Norm + w.Phrase*b.Phrase.Norm + w.Keyword*b.Keyword.Norm + w.Subword*b.Subword.Norm +
			w.Verb*b.Verb.Norm + w.History*b.History.Norm + w.Graph*b.Graph.Norm - w.Complexity*b.Complexity.Norm
	}
	if s.opts.Plausible < 0 || len(hits) <= s.opts.Plausible {
		top, best := "", math.Inf(-1)
		for _, h := range hits {
			learn[h.Tool.ID] = evidence(h.Tool.ID)
			if usage[h.Tool.ID].CentroidN > 0 {
				served++
			}
			if v := own(&h.Breakdown); v > best || (v == best && h.Tool.ID < top) {
				top, best = h.Tool.ID, v
			}
		}
		return learn, float64(served) / float64(max(1, len(hits))), usage[top].CentroidN > 0
	}
	order := make([]int, len(hits))
	scores := make([]float64, len(hits))
	for i := range hits {
		order[i], scores[i] = i, own(&hits[i].Breakdown)
	}
	sort.Slice(order, func(a, b int) bool {
		if scores[order[a]] != scores[order[b]] {
			return scores[order[a]] > scores[order[b]]
		}
		return hits[order[a]].Tool.ID < hits[order[b]].Tool.ID
	})
	for r, i := range order {
		id := hits[i].Tool.ID
		learn[id] = (r < s.opts.Plausible || cands[id].admitted) && evidence(id)
		if r < s.opts.Plausible && usage[id].CentroidN > 0 {
			served++
		}
	}
	return learn, float64(served) / float64(s.opts.Plausible), usage[hits[order[0]].Tool.ID].CentroidN > 0
}

// complexityPenalty maps complexity to [0,1]: low 0, medium ½, high 1.
func complexityPenalty(c string) float64 {
	switch c {
	case "medium":
		return 0.5
	case "high":
		return 1
	}
	return 0
}

// dot64 is a·b in float64 over the shorter of the two.
func dot64(a, b []float32) float64 {
	var s float64
	for i := range min(len(a), len(b)) {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
