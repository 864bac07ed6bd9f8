package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Strategy names a retrieval strategy.
type Strategy string

// Strategies.
const (
	StrategyHybrid   Strategy = "hybrid"
	StrategySemantic Strategy = "semantic"
	StrategyKeyword  Strategy = "keyword"
	StrategyCategory Strategy = "category"
	StrategySession  Strategy = "session"
)

// Strategies lists every strategy, default first.
var Strategies = []Strategy{StrategyHybrid, StrategySemantic, StrategyKeyword, StrategyCategory, StrategySession}

// ParseStrategy reads a strategy name; "" means hybrid. The upper-case
// spellings (SEMANTIC_ONLY, CATEGORY_FILTERED, SESSION_AWARE) are accepted.
func ParseStrategy(s string) (Strategy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "hybrid":
		return StrategyHybrid, nil
	case "semantic", "semantic_only":
		return StrategySemantic, nil
	case "keyword":
		return StrategyKeyword, nil
	case "category", "category_filtered":
		return StrategyCategory, nil
	case "session", "session_aware":
		return StrategySession, nil
	}
	return "", fault.Malformed("strategy", "must be one of hybrid, semantic, keyword, category, session; got %q", s)
}

// MaxTools bounds Query.MaxTools.
const MaxTools = 20

// MaxQueryBytes bounds a query's text and its context, each. Ranking costs
// time in proportion to the text's length (embedding, phrases, entities), so
// an unbounded query let one anonymous request hold a core for seconds; a
// verb's description and context are bounded below it (fulfil), so every
// verb's fulfilment query fits.
const MaxQueryBytes = 8192

// MaxRelated bounds Related's max.
const MaxRelated = 10

// Weights are the hybrid ranking weights. Every signal is normalised to
// [0,1] before weighting (see Breakdown), so a weight is the most a signal
// can add to a score. Complexity is subtracted: low 0, medium ½, high 1 times
// the weight.
type Weights struct {
	Semantic float64 `json:"semantic"`
	// Phrase is the cosine to the query's best-matching phrase (a window of
	// Options.PhraseWords words), for queries too long for one embedding
	// to keep their task in view.
	Phrase     float64 `json:"phrase"`
	Keyword    float64 `json:"keyword"`
	Subword    float64 `json:"subword"`
	Usage      float64 `json:"usage"`
	Neighbours float64 `json:"neighbours"`
	QueryLog   float64 `json:"queryLog"`
	Verb       float64 `json:"verb"`
	History    float64 `json:"history"`
	Success    float64 `json:"success"`
	Graph      float64 `json:"graph"`
	Complexity float64 `json:"complexity"`
	// Pairing boosts the tools learned to pair with the best two hits
	// (tools used together): what a multi-tool request needs next.
	Pairing float64 `json:"pairing"`
	// Popularity is the scheduled analytics' prior: log-scaled uses over
	// the most used tool's (0 until the analytics first ran).
	Popularity float64 `json:"popularity"`
}

// DefaultWeights are the tuned hybrid weights; see docs/api.md for the
// signals and the evaluation log (evaluation/TUNING.md) for how they were
// chosen.
func DefaultWeights() Weights {
	return Weights{Semantic: 1, Phrase: 1, Keyword: 0.4, Subword: 0.3, Usage: 7, Neighbours: 16, QueryLog: 0.8, Verb: 2, History: 1.5, Success: 0.35, Graph: 2.5, Complexity: 0.7, Popularity: 1}
}

// Defaults of the gate on usage evidence (Options.Plausible,
// NeighbourFloor, NeighbourMargin, Admit); evaluation/TUNING.md, thirteenth
// round, says how they were chosen, and its round on sparse hot queries why
// the margin came down from 0.1 once the centroid stopped counting while the
// gate is closed.
const (
	DefaultPlausible       = 30
	DefaultNeighbourFloor  = 0.5
	DefaultNeighbourMargin = 0.05
	DefaultAdmit           = 0.65
	// DefaultRelatedMargin is Options.RelatedMargin's default
	// (evaluation/TUNING.md, twenty-fourth round).
	DefaultRelatedMargin = 0.2
	// DefaultUsageMargin is Options.UsageMargin's default
	// (evaluation/TUNING.md, twenty-ninth round).
	DefaultUsageMargin = 0.25
)

// DefaultFeedback is Options.Feedback's default (see evaluation/TUNING.md).
const DefaultFeedback = -1

// Options configure a Service. Zero fields take the documented defaults.
type Options struct {
	// Weights for the hybrid and category strategies; zero value = DefaultWeights.
	Weights *Weights
	// SessionWeights for the session strategy; default = Weights with History
	// tripled and pairings of recently used tools added as candidates.
	SessionWeights *Weights
	// Normalisation of the semantic, keyword and subword signals within the
	// candidate set: "z" (default: z-scores, every candidate's cosine
	// included), "minmax" (semantic and usage min-maxed, keyword and subword
	// scaled by their best score) or "rank" (reciprocal rank, (c+1)/(c+rank)
	// with c = RankConstant). The default weights are tuned for "z".
	Normalisation string
	// RankConstant is c of rank normalisation (default 10).
	RankConstant float64
	// Candidates is how many hits each source contributes (default 50).
	Candidates int
	// UsagePrior is the number of served queries at which a usage centroid
	// counts fully: confidence = n/(n+UsagePrior) (default 3).
	UsagePrior float64
	// SuccessPrior is the prior success rate and SuccessPriorN its strength in
	// pseudo-uses, so unused tools score the prior, not zero (default 0.8, 5).
	SuccessPrior  float64
	SuccessPriorN float64
	// HistoryLimit is how many session events the history signal reads (default 20).
	HistoryLimit int
	// EntityThreshold is the cosine above which a query or context embedding
	// matches an entity name (default 0.75); 0 keeps the default, <0 disables.
	EntityThreshold float64
	// CacheSize, CacheBytes and CacheTTL bound the result cache (defaults
	// 1024 results, 32 MiB of estimated result size and 5m); CacheSize < 0
	// disables it, CacheBytes < 0 lifts the size bound.
	CacheSize  int
	CacheBytes int
	CacheTTL   time.Duration
	// EmbedCacheSize bounds the query-embedding LRU (default 4096); <0 disables.
	EmbedCacheSize int
	// Exemplars bounds the in-process memory of past successful queries:
	// their embeddings behind the neighbours signal and their words behind
	// the query-log signal (default 20000 of each; <0 disables both).
	Exemplars int
	// FollowEvery is how often a search reads the served queries that
	// were written to the store since the memory last looked, by this
	// process or another (a worker's executions, another replica): default
	// 2s. < 0: searches never read it; the memory then catches up only
	// when this process records events (RecordEvents, RecordUsage).
	FollowEvery time.Duration
	// Neighbours is k of the neighbours signal's kNN vote (default 3).
	Neighbours int
	// Plausible is how many of a query's best candidates by its own
	// signals (semantic, phrase, keyword, subword, verb) the signals
	// learned from use may reorder (default DefaultPlausible; < 0: all).
	// A tool used often thus never enters an unrelated query's results.
	Plausible int
	// NeighbourFloor and NeighbourMargin set the evidence floor: a past
	// query (a neighbour) or a usage centroid counts only when its cosine
	// to the query is at least the query's best cosine to a tool plus
	// NeighbourMargin (0 = DefaultNeighbourMargin; < -1 drops the
	// relative part), and at least NeighbourFloor (default
	// DefaultNeighbourFloor).
	NeighbourFloor  float64
	NeighbourMargin float64
	// RelatedMargin bounds what the open gate reaches (dense history, when
	// every plausible candidate has served queries): the signals learned
	// from use count there only for a candidate whose description, usage
	// centroid or nearest past query comes within RelatedMargin of the best
	// candidate's on the same measure; for the others they count only
	// where this query has evidence, as while the gate is closed. 0 =
	// DefaultRelatedMargin; < 0: no bound.
	RelatedMargin float64
	// UsageMargin keeps use from lifting a tool over one the query is far
	// more about: a candidate whose description's cosine to the query (or
	// to its best phrase) is UsageMargin or more above another's stays
	// above it, however close the other's past queries come (the other's
	// learned signals are scaled down to fit under it). 0 =
	// DefaultUsageMargin; < 0: no bound.
	UsageMargin float64
	// Admit is the similarity at which a past query admits the tool that
	// served it although the query's own signals do not rank it among
	// the Plausible best: a near-paraphrase is evidence enough (default
	// DefaultAdmit; > 1 never).
	Admit float64
	// Feedback is the weight of pseudo-relevance feedback (Rocchio) on the
	// semantic search: the query vector moves towards the mean vector of
	// its FeedbackDocs best matches and the vector search runs again.
	// 0 means the default (see DefaultFeedback); < 0 disables it.
	Feedback     float64
	FeedbackDocs int
	// TeachMargin is how much less like a query its tool may be than the
	// active tool most like it, for a success outside an admin's import to
	// teach the query (teaches; 0 = DefaultTeachMargin; < 0: no margin,
	// the similarity floor ReportFloor alone).
	TeachMargin float64
	// PhraseWords is the window of the phrase signal, in words (default
	// DefaultPhraseWords); queries of at most PhraseWords+2 words have no
	// phrases. < 0 disables the signal.
	PhraseWords int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Observer, when set, is told every search's latency and cache outcome
	// and every query embedding's latency (metrics).
	Observer Observer
}

// Observer receives what the service measures; it must be cheap and safe
// for concurrent use.
type Observer interface {
	Search(strategy string, d time.Duration, cacheHit bool)
	Embedding(d time.Duration)
}

func (o Options) withDefaults() Options {
	if o.Weights == nil {
		w := DefaultWeights()
		o.Weights = &w
	}
	if o.SessionWeights == nil {
		w := *o.Weights
		w.History = 3 * w.History
		o.SessionWeights = &w
	}
	if o.Normalisation == "" {
		o.Normalisation = "z"
	}
	if o.RankConstant <= 0 {
		o.RankConstant = 10
	}
	if o.Candidates <= 0 {
		o.Candidates = 50
	}
	if o.Feedback == 0 {
		o.Feedback = DefaultFeedback
	}
	if o.TeachMargin == 0 {
		o.TeachMargin = DefaultTeachMargin
	}
	if o.FeedbackDocs <= 0 {
		o.FeedbackDocs = 3
	}
	if o.UsagePrior <= 0 {
		o.UsagePrior = 3
	}
	if o.SuccessPrior <= 0 {
		o.SuccessPrior = 0.8
	}
	if o.SuccessPriorN <= 0 {
		o.SuccessPriorN = 5
	}
	if o.HistoryLimit <= 0 {
		o.HistoryLimit = 20
	}
	if o.EntityThreshold == 0 {
		o.EntityThreshold = 0.75
	}
	if o.CacheSize == 0 {
		o.CacheSize = 1024
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 32 << 20
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = 5 * time.Minute
	}
	if o.EmbedCacheSize == 0 {
		o.EmbedCacheSize = 4096
	}
	if o.Exemplars == 0 {
		o.Exemplars = 20000
	}
	if o.FollowEvery == 0 {
		o.FollowEvery = 2 * time.Second
	}
	if o.Neighbours <= 0 {
		o.Neighbours = 3
	}
	if o.Plausible == 0 {
		o.Plausible = DefaultPlausible
	}
	if o.NeighbourFloor == 0 {
		o.NeighbourFloor = DefaultNeighbourFloor
	}
	if o.NeighbourMargin == 0 {
		o.NeighbourMargin = DefaultNeighbourMargin
	}
	if o.Admit == 0 {
		o.Admit = DefaultAdmit
	}
	if o.UsageMargin == 0 {
		o.UsageMargin = DefaultUsageMargin
	}
	if o.RelatedMargin == 0 {
		o.RelatedMargin = DefaultRelatedMargin
	}
	if o.PhraseWords == 0 {
		o.PhraseWords = DefaultPhraseWords
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Service is the retrieval orchestrator. It is safe for concurrent use.
type Service struct {
	store graph.Store
	emb   embed.Embedder
	opts  Options
	cache *resultCache
	qvecs *lru[[]float32]

	vocabMu sync.Mutex
	vocab   *vocabulary // nil until first use or after a change

	tokMu      sync.Mutex
	tokens     map[string]int // tool id → estimated manifest tokens
	tokFill    sync.Mutex     // one bulk fill of tokens at a time (fillTokens)
	tokFilled  uint64         // 1 + the change seq (catBase+len(catLog)) of the last fill, 0: none; under tokMu
	catalogues *lru[catalogue]
	exemplars  *exemplars // nil when disabled
	memMu      sync.Mutex // serialises loadMemory and followMemory
	memLoaded  atomic.Bool
	memSeq     int64        // the last served query in the memory (graph.ServedQuery.Seq); under memMu
	memRead    atomic.Int64 // when followMemory last read the store, in Unix nanoseconds
	grams      gramCache    // per-tool grams of the subword signal
	priors     priorCache
	model      atomic.Pointer[Model] // the promoted learned model (SetModel); nil: none

	// catLog is the ids of changed tools, in order (Invalidate), under
	// tokMu; entry i is change catBase+i+1. Cached catalogues apply the
	// changes after their own seq.
	catLog  []string
	catBase uint64
}

// New builds a Service over a store and the embedder the store's vectors
// come from.
func New(store graph.Store, emb embed.Embedder, opts Options) *Service {
	if store == nil {
		panic("retrieval: nil store")
	}
	if emb == nil {
		panic("retrieval: nil embedder")
	}
	opts = opts.withDefaults()
	s := &Service{store: store, emb: emb, opts: opts, tokens: map[string]int{}}
	if opts.CacheSize > 0 {
		s.cache = newResultCache(opts.CacheSize, max(opts.CacheBytes, 0), opts.CacheTTL, opts.Now)
	}
	if opts.Exemplars > 0 {
		s.exemplars = newExemplars(opts.Exemplars)
	}
	if opts.EmbedCacheSize > 0 {
		s.qvecs = newLRU[[]float32](opts.EmbedCacheSize)
	}
	return s
}

// Query is one search request.
type Query struct {
	Text     string   `json:"q"`
	Context  string   `json:"context,omitempty"`
	Strategy Strategy `json:"strategy,omitempty"`
	// MaxTools is the number of ranked tools (1..20, default 5; the phase's
	// configuration may lower it).
	MaxTools        int    `json:"maxTools,omitempty"`
	Category        string `json:"category,omitempty"`
	Phase           Phase  `json:"phase,omitempty"`
	IncludeExamples bool   `json:"includeExamples"`
	// Caller decides visibility; its SessionID feeds the history signal.
	Caller access.Caller `json:"-"`
	// Exclude leaves these tools out of the search, as if they were not in
	// the catalogue (the leave-one-out evaluation uses it).
	Exclude []string `json:"-"`
	// WholeQuery ranks by the query as a whole, without the phrase signal.
	// The fulfilment decision uses it (FulfilmentQuery): it asks whether
	// one tool fits the whole verb, and a phrase's match speaks for a part
	// of it (evaluation/TUNING.md, eighth round).
	WholeQuery bool `json:"-"`
}

// FulfilmentQuery is the search a novel verb's fulfilment decides on: the
// hybrid ranking of the verb's query as a whole, FulfilmentCandidates
// deep. The workflow's searcher (activities.RetrievalSearcher) and the
// leave-one-out evaluation both search with it, so the decision measured is
// the decision made.
func FulfilmentQuery(text, context string, caller access.Caller, exclude []string) Query {
	return Query{Text: text, Context: context, Strategy: StrategyHybrid, MaxTools: FulfilmentCandidates,
		Caller: caller, Exclude: exclude, WholeQuery: true}
}

// Signal is one component of a hit's score.
type Signal struct {
	// Raw is the signal as its source reported it (cosine, bm25, recency …).
	Raw float64 `json:"raw"`
	// Norm is Raw on the scale its weight applies to: z-scores over the
	// candidates for semantic, keyword and subword (Options.Normalisation
	// "z", the default), bm25 as it is for the query log, and [0,1] for the
	// others (see the package documentation).
	Norm float64 `json:"norm"`
	// Weighted is Norm × weight: what the signal added to Score.
	Weighted float64 `json:"weighted"`
}

// Breakdown explains a hit's score signal by signal.
type Breakdown struct {
	Semantic   Signal `json:"semantic"`
	Phrase     Signal `json:"phrase"`
	Keyword    Signal `json:"keyword"`
	Subword    Signal `json:"subword"`
	Usage      Signal `json:"usage"`
	Neighbours Signal `json:"neighbours"`
	QueryLog   Signal `json:"queryLog"`
	Verb       Signal `json:"verb"`
	History    Signal `json:"history"`
	Success    Signal `json:"success"`
	Graph      Signal `json:"graph"`
	Complexity Signal `json:"complexity"`
	Pairing    Signal `json:"pairing"`
	Popularity Signal `json:"popularity"`
}

// Hit is a ranked tool.
type Hit struct {
	Tool      graph.ToolSummary `json:"tool"`
	Score     float64           `json:"score"`
	Breakdown Breakdown         `json:"breakdown"`
	// Entities lists the found entities that connect this tool (graph signal).
	Entities []string `json:"entities,omitempty"`
}

// Metadata describes how a result was produced.
type Metadata struct {
	Strategy            Strategy `json:"retrievalStrategy"`
	RetrievalTimeMs     float64  `json:"retrievalTimeMs"`
	TotalToolsAvailable int      `json:"totalToolsAvailable"`
	ToolsRetrieved      int      `json:"toolsRetrieved"`
	CacheHit            bool     `json:"cacheHit"`
	Phase               Phase    `json:"phase,omitempty"`
	TokensUsed          int      `json:"tokensUsed"`
	TokensAllManifests  int      `json:"tokensAllManifests"`
	// TokenReduction is 1 − TokensUsed/TokensAllManifests (0 when nothing is visible).
	TokenReduction float64 `json:"tokenReduction"`
	TokenBudget    int     `json:"tokenBudget"`
	// TokenEstimator names the token heuristic (see EstimateTokens).
	TokenEstimator string `json:"tokenEstimator"`
}

// Result is a search's outcome: ranked hits with their breakdowns, the
// entities found in query and context, and the assembled context.
type Result struct {
	Hits     []Hit          `json:"hits"`
	Entities []FoundEntity  `json:"entities"`
	Context  AssembledTools `json:"context"`
	Metadata Metadata       `json:"metadata"`
}

// Search ranks the tools visible to q.Caller for q and assembles the
// context of q.Phase.
func (s *Service) Search(ctx context.Context, q Query) (Result, error) {
	start := time.Now()
	if err := normaliseQuery(&q); err != nil {
		return Result{}, err
	}
	// Usage written since the memory last looked clears the cache, so it
	// is read before a cached result is served.
	if err := s.followMemory(ctx, false); err != nil {
		return Result{}, err
	}
	key := cacheKey(q)
	if s.cache != nil {
		if r, ok := s.cache.get(key); ok {
			r.Metadata.CacheHit = true
			r.Metadata.RetrievalTimeMs = ms(time.Since(start))
			if s.opts.Observer != nil {
				s.opts.Observer.Search(string(q.Strategy), time.Since(start), true)
			}
			return r, nil
		}
	}
	cfg := PhaseConfigFor(q.Phase, q.MaxTools, q.IncludeExamples)
	model := s.model.Load()
	hits, found, err := s.rank(ctx, q, q.MaxTools)
	if err != nil {
		return Result{}, err
	}
	res := Result{Hits: hits, Entities: found}
	if err := s.assemble(ctx, q, cfg, &res); err != nil {
		return Result{}, err
	}
	res.Metadata.Strategy = q.Strategy
	res.Metadata.Phase = q.Phase
	res.Metadata.ToolsRetrieved = len(res.Hits)
	res.Metadata.RetrievalTimeMs = ms(time.Since(start))
	// A result ranked while SetModel swapped the model is not cached: the
	// swap cleared the cache of the old model's results.
	if s.cache != nil && s.model.Load() == model {
		ids := make([]string, 0, len(res.Hits)+len(res.Context.Index))
		for _, h := range res.Hits {
			ids = append(ids, h.Tool.ID)
		}
		s.cache.put(key, cacheMeta{strategy: q.Strategy, userID: q.Caller.UserID, sessionID: q.Caller.SessionID, tools: ids}, res)
	}
	if s.opts.Observer != nil {
		s.opts.Observer.Search(string(q.Strategy), time.Since(start), false)
	}
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func normaliseQuery(q *Query) error {
	q.Text = strings.TrimSpace(q.Text)
	q.Context = strings.TrimSpace(q.Context)
	if err := checkQueryText("q", q.Text); err != nil {
		return err
	}
	if err := checkText("context", q.Context); err != nil {
		return err
	}
	st, err := ParseStrategy(string(q.Strategy))
	if err != nil {
		return err
	}
	q.Strategy = st
	if q.MaxTools == 0 {
		q.MaxTools = 5
	}
	if q.MaxTools < 0 || q.MaxTools > MaxTools {
		return fault.Malformed("maxTools", "must be between 1 and %d, got %d", MaxTools, q.MaxTools)
	}
	ph, err := ParsePhase(string(q.Phase))
	if err != nil {
		return err
	}
	q.Phase = ph
	if q.Strategy == StrategyCategory && strings.TrimSpace(q.Category) == "" {
		return fault.Malformed("category", "is required by the category strategy")
	}
	return nil
}

// checkQueryText refuses a search's text (trimmed) that is empty, or that
// checkText refuses, naming field: the edges call it q, queryText, intent
// or query.
func checkQueryText(field, text string) error {
	if text == "" {
		return fault.Malformed(field, "is required")
	}
	if len(text) > MaxQueryBytes {
		return fault.Malformed(field, "must be at most %d bytes, got %d: a search is for an intent, not a document", MaxQueryBytes, len(text))
	}
	return checkText(field, text)
}

// checkText refuses a search's text or context over MaxQueryBytes or with
// a control character other than tab, newline and carriage return (the
// check tool texts, verb descriptions and usage events use,
// tool.ControlAt): a search's text is shown in analytics, the audit log
// and gaps, so it is printable, as a verb's description is.
func checkText(field, text string) error {
	if len(text) > MaxQueryBytes {
		return fault.Malformed(field, "must be at most %d bytes, got %d", MaxQueryBytes, len(text))
	}
	if j := tool.ControlAt(text); j >= 0 {
		return fault.Malformed(field, "must not contain control characters, got %U at byte %d", []rune(text[j:])[0], j)
	}
	return nil
}

// queryVector embeds text once per distinct text (LRU).
func (s *Service) queryVector(ctx context.Context, text string) ([]float32, error) {
	if s.qvecs != nil {
		if v, ok := s.qvecs.get(text); ok {
			return v, nil
		}
	}
	embStart := time.Now()
	v, err := s.emb.EmbedQuery(ctx, text)
	if s.opts.Observer != nil && err == nil {
		s.opts.Observer.Embedding(time.Since(embStart))
	}
	if err != nil {
		return nil, fmt.Errorf("retrieval: embed query: %w", err)
	}
	v = graph.Normalize(v)
	if s.qvecs != nil {
		s.qvecs.put(text, v)
	}
	return v, nil
}

// cachedVectors returns the unit embeddings of texts (query phrases, the
// queries of usage events) through the query-embedding cache: the ones it
// does not hold are embedded in one batch and cached. what names the texts
// in errors.
func (s *Service) cachedVectors(ctx context.Context, texts []string, what string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	var at []int
	for i, t := range texts {
		if s.qvecs != nil {
			if v, ok := s.qvecs.get(t); ok {
				out[i] = v
				continue
			}
		}
		missing = append(missing, t)
		at = append(at, i)
	}
	if len(missing) == 0 {
		return out, nil
	}
	vs, err := s.emb.EmbedDocuments(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("retrieval: embed %s: %w", what, err)
	}
	if len(vs) != len(missing) {
		return nil, fmt.Errorf("retrieval: embed %s: %d vectors for %d texts", what, len(vs), len(missing))
	}
	for j, v := range vs {
		v = graph.Normalize(v)
		if s.qvecs != nil {
			s.qvecs.put(missing[j], v)
		}
		out[at[j]] = v
	}
	return out, nil
}

// filterFor is the store filter of a query: the caller's visibility, plus
// the category when one is given.
func filterFor(q Query) graph.Filter {
	f := q.Caller.Filter()
	if c := strings.TrimSpace(q.Category); c != "" {
		f.Categories = []string{c}
	}
	if len(q.Exclude) > 0 {
		out := make(map[string]bool, len(q.Exclude))
		for _, id := range q.Exclude {
			out[id] = true
		}
		allow := f.Allow
		f.Allow = func(t *graph.ToolSummary) bool { return !out[t.ID] && (allow == nil || allow(t)) }
	}
	return f
}

// ManifestOptions select the optional parts of a ManifestView: examples, relationships and analytics.
type ManifestOptions struct {
	IncludeExamples      bool
	IncludeRelationships bool
	IncludeAnalytics     bool
}

// ManifestView is a tool's manifest as the retrieval API returns it.
type ManifestView struct {
	ToolID        string            `json:"toolId"`
	Summary       graph.ToolSummary `json:"summary"`
	Manifest      map[string]any    `json:"manifest"`
	Examples      []any             `json:"examples"`
	Relationships map[string]any    `json:"relationships,omitempty"`
	Analytics     *Analytics        `json:"analytics,omitempty"`
}

// Analytics is a tool's usage evidence.
type Analytics struct {
	Uses        int       `json:"uses"`
	Successes   int       `json:"successes"`
	SuccessRate float64   `json:"successRate"`
	LastUsed    time.Time `json:"lastUsed,omitempty"`
	QueriesSeen int       `json:"queriesSeen"`
}

// Manifest returns a tool's manifest if the caller may see it. A tool the
// caller may not see is reported exactly like a missing one (ErrNotFound),
// so that its existence does not leak. Only active tools are served.
func (s *Service) Manifest(ctx context.Context, id string, caller access.Caller, o ManifestOptions) (ManifestView, error) {
	t, err := s.visibleTool(ctx, id, caller)
	if err != nil {
		return ManifestView{}, err
	}
	mv := manifestView(t, o.IncludeExamples)
	if o.IncludeRelationships {
		mv.Relationships = map[string]any{}
		for name, kind := range map[string]graph.RelKind{"commonPairings": graph.RelPairsWith, "dependencies": graph.RelDependsOn, "alternatives": graph.RelAlternative} {
			rel, err := s.visibleRelations(ctx, t, kind, caller)
			if err != nil {
				return ManifestView{}, err
			}
			mv.Relationships[name] = rel
		}
	}
	if o.IncludeAnalytics {
		u, err := s.store.Usage(ctx, []string{id})
		if err != nil {
			return ManifestView{}, fmt.Errorf("retrieval: usage %q: %w", id, err)
		}
		a := Analytics{}
		if x, ok := u[id]; ok {
			a = Analytics{Uses: x.Uses, Successes: x.Successes, LastUsed: x.LastUsed, QueriesSeen: x.CentroidN}
			if x.Uses > 0 {
				a.SuccessRate = float64(x.Successes) / float64(x.Uses)
			}
		}
		mv.Analytics = &a
	}
	return mv, nil
}

func (s *Service) visibleTool(ctx context.Context, id string, caller access.Caller) (graph.Tool, error) {
	t, err := s.store.GetTool(ctx, id)
	return access.VisibleTool(id, t, err, caller)
}

// RelationKind is a relationship type of the retrieval API.
type RelationKind string

// Relationship types between tools.
const (
	RelDependencies RelationKind = "dependencies"
	RelPairings     RelationKind = "pairings"
	RelAlternatives RelationKind = "alternatives"
)

// ParseRelationKind reads a relationshipType parameter ("" = pairings).
func ParseRelationKind(s string) (RelationKind, error) {
	switch RelationKind(strings.ToLower(strings.TrimSpace(s))) {
	case "", RelPairings:
		return RelPairings, nil
	case RelDependencies:
		return RelDependencies, nil
	case RelAlternatives:
		return RelAlternatives, nil
	}
	return "", fault.Malformed("relationshipType", "must be dependencies, pairings or alternatives; got %q", s)
}

func (k RelationKind) graphKind() graph.RelKind {
	switch k {
	case RelDependencies:
		return graph.RelDependsOn
	case RelAlternatives:
		return graph.RelAlternative
	default:
		return graph.RelPairsWith
	}
}

// RelatedTool is one related tool with its manifest.
type RelatedTool struct {
	ToolID            string  `json:"toolId"`
	RelationshipScore float64 `json:"relationshipScore"`
	// Source, for pairings, is "declared" (the manifest says so) or
	// "learned" (the tools were used together).
	Source   string         `json:"source,omitempty"`
	Manifest map[string]any `json:"manifest"`
}

// Related returns up to max (1..10, default 3) tools related to id by kind
// that the caller may see. The source tool must itself be visible.
func (s *Service) Related(ctx context.Context, id string, kind RelationKind, max int, caller access.Caller) ([]RelatedTool, error) {
	if max == 0 {
		max = 3
	}
	if max < 1 || max > MaxRelated {
		return nil, fault.Malformed("maxResults", "must be between 1 and %d, got %d", MaxRelated, max)
	}
	if _, err := s.visibleTool(ctx, id, caller); err != nil {
		return nil, err
	}
	var hits []pairHit
	if kind == RelPairings {
		var err error
		if hits, err = s.pairings(ctx, id, max, caller.Filter()); err != nil {
			return nil, err
		}
	} else {
		plain, err := s.store.Related(ctx, id, kind.graphKind(), max, caller.Filter())
		if err != nil {
			return nil, fmt.Errorf("retrieval: related %q: %w", id, err)
		}
		for _, h := range plain {
			hits = append(hits, pairHit{Hit: h})
		}
	}
	out := make([]RelatedTool, 0, len(hits))
	for _, h := range hits {
		if !caller.Allows(&h.Tool) { // defence in depth: stores apply Allow too
			continue
		}
		t, err := s.store.GetTool(ctx, h.Tool.ID)
		if err != nil {
			return nil, fmt.Errorf("retrieval: related %q: %w", h.Tool.ID, err)
		}
		score := h.Score
		if kind != RelPairings && score == 0 {
			score = 1
		}
		out = append(out, RelatedTool{ToolID: h.Tool.ID, RelationshipScore: score, Source: h.Source, Manifest: manifestMap(t)})
	}
	return out, nil
}

// Best returns the single best match for text and its cosine distance
// (1 − cosine between the query and the tool's embedding), for
// POST /api/v1/tools/search (a distance below 0.5 is a confident match).
// ErrNotFound when the caller sees no tool at all. A text the search
// refuses (empty, too long, a control character) is malformed, naming
// the request's queryText.
func (s *Service) Best(ctx context.Context, text string, caller access.Caller) (Hit, float64, error) {
	if err := checkQueryText("queryText", strings.TrimSpace(text)); err != nil {
		return Hit{}, 0, err
	}
	hits, _, err := s.Rank(ctx, Query{Text: text, MaxTools: 1, Caller: caller})
	if err != nil {
		return Hit{}, 0, err
	}
	if len(hits) == 0 {
		return Hit{}, 0, fmt.Errorf("retrieval: best match for %q: %w", text, fault.ErrNotFound)
	}
	h := hits[0]
	qv, err := s.queryVector(ctx, strings.TrimSpace(text))
	if err != nil {
		return Hit{}, 0, err
	}
	t, err := s.store.GetTool(ctx, h.Tool.ID)
	if err != nil {
		return Hit{}, 0, fmt.Errorf("retrieval: best match %q: %w", h.Tool.ID, err)
	}
	return h, 1 - graph.Cosine(qv, t.Embedding), nil
}

// Invalidate is the registry's change hook (registry.WithOnChange): a tool
// was registered, updated or deprecated. A new or changed tool may belong in
// any cached result, so the whole result cache goes, with the entity
// vocabulary (the tool may bring entities) and the tool's token estimate;
// the cached catalogues note the change and re-read only that tool on
// their next use.
func (s *Service) Invalidate(toolID string) {
	if s.cache != nil {
		s.cache.clear()
	}
	s.vocabMu.Lock()
	s.vocab = nil
	s.vocabMu.Unlock()
	s.tokMu.Lock()
	delete(s.tokens, toolID)
	s.catLog = append(s.catLog, toolID)
	if len(s.catLog) > maxCatChanges {
		drop := len(s.catLog) - maxCatChanges/2
		s.catLog = slices.Clone(s.catLog[drop:])
		s.catBase += uint64(drop)
	}
	s.tokMu.Unlock()
}

// Scope names what InvalidateCache clears.
type Scope string

// Cache invalidation scopes.
const (
	ScopeAll      Scope = "all"
	ScopeUser     Scope = "user"
	ScopeTool     Scope = "tool"
	ScopeStrategy Scope = "strategy"
)

// InvalidateRequest is the admin endpoint's body.
type InvalidateRequest struct {
	Scope    Scope  `json:"scope"`
	UserID   string `json:"userId,omitempty"`
	ToolID   string `json:"toolId,omitempty"`
	Strategy string `json:"strategy,omitempty"`
}

// InvalidateCache clears cache entries by scope and returns how many went.
func (s *Service) InvalidateCache(r InvalidateRequest) (int, error) {
	var match func(cacheMeta) bool
	switch r.Scope {
	case ScopeAll:
		match = func(cacheMeta) bool { return true }
	case ScopeUser:
		if r.UserID == "" {
			return 0, fault.Malformed("userId", "is required when scope is user")
		}
		match = func(m cacheMeta) bool { return m.userID == r.UserID }
	case ScopeTool:
		if r.ToolID == "" {
			return 0, fault.Malformed("toolId", "is required when scope is tool")
		}
		match = func(m cacheMeta) bool { return slices.Contains(m.tools, r.ToolID) }
	case ScopeStrategy:
		if r.Strategy == "" {
			return 0, fault.Malformed("strategy", "is required when scope is strategy")
		}
		st, err := ParseStrategy(r.Strategy)
		if err != nil {
			return 0, err
		}
		match = func(m cacheMeta) bool { return m.strategy == st }
	default:
		return 0, fault.Malformed("scope", "must be all, user, tool or strategy; got %q", r.Scope)
	}
	if s.cache == nil {
		return 0, nil
	}
	return s.cache.remove(match), nil
}

// Rank ranks tools for q without the result cache or context assembly: the
// ranking half of Search, for evaluation and for callers that only want ids.
func (s *Service) Rank(ctx context.Context, q Query) ([]Hit, []FoundEntity, error) {
	if err := normaliseQuery(&q); err != nil {
		return nil, nil, err
	}
	return s.rank(ctx, q, q.MaxTools)
}
