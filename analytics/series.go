package analytics

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Series names the Sampler writes.
const (
	SeriesSearch   = "search"    // searches: count, latency sum (ms) and histogram
	SeriesGapsOpen = "gaps.open" // open gaps: one sample a flush (sum/count is the mean)
	// SeriesFulfilPrefix starts "fulfil:<branch>:<status>", counted by the
	// minute a novel-verb run closed in.
	SeriesFulfilPrefix = "fulfil:"
)

// SeriesStore is what the Sampler writes to and reads from, and where
// samplers in several processes claim the minutes of their shared samples.
type SeriesStore interface {
	graph.Series
	graph.Gaps
	ClaimSpan(ctx context.Context, name string, until time.Time) (time.Time, bool, error)
}

// SharedSpan is the span name (graph.Notices.ClaimSpan) under which
// samplers claim the minutes of the shared samples.
const SharedSpan = "analytics.shared"

// Sampler keeps the operations time series the console's dashboard draws:
// it counts searches as they happen (it is a retrieval observer) and, at
// each Flush, writes them with a sample of the open gaps and the
// fulfilments that closed since the last flush, then compacts the series
// (graph.Series: bounded, downsampled as it ages). Run one Sampler a
// process: searches add up across processes, while gaps and fulfilments
// are read from shared state, so only a sampler told SampleShared(true)
// writes those (cmd/toolsmith: the processes that run a worker). Several
// such samplers split the work through the store: a flush claims the span
// from the last claimed time to its own (SharedSpan) and counts the
// fulfilments that closed in it, so spans never overlap and no fulfilment
// is counted twice or skipped; the first claim of each minute also
// samples the open gaps, one sample a minute system-wide.
type Sampler struct {
	store     SeriesStore
	runs      RunLister
	retention graph.Retention
	now       func() time.Time

	mu       sync.Mutex
	searches map[time.Time]graph.SeriesPoint
	noShared bool
}

// SampleShared says whether this sampler writes the shared samples (open
// gaps, fulfilments) besides its own searches; it does by default.
func (s *Sampler) SampleShared(on bool) *Sampler {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noShared = !on
	return s
}

// NewSampler returns a sampler over store; runs may be nil (no fulfilments).
func NewSampler(store SeriesStore, runs RunLister, r graph.Retention) *Sampler {
	if store == nil {
		panic("analytics: nil series store")
	}
	return &Sampler{store: store, runs: runs, retention: r, now: time.Now, searches: map[time.Time]graph.SeriesPoint{}}
}

// WithRuns sets where fulfilments are read (Temporal's visibility).
func (s *Sampler) WithRuns(runs RunLister) *Sampler {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = runs
	return s
}

// WithClock sets the sampler's clock (tests).
func (s *Sampler) WithClock(now func() time.Time) *Sampler {
	s.now = now
	return s
}

// Search implements retrieval.Observer: one search and its latency.
func (s *Sampler) Search(_ string, d time.Duration, _ bool) {
	ms := float64(d) / float64(time.Millisecond)
	at := graph.Truncate(s.now(), graph.ResMinute)
	hist := make([]float64, len(graph.LatencyBucketsMs))
	hist[graph.HistBucket(ms)] = 1
	s.mu.Lock()
	defer s.mu.Unlock()
	p := graph.SeriesPoint{Series: SeriesSearch, Res: graph.ResMinute, At: at}
	if old, ok := s.searches[at]; ok {
		p = old
	}
	s.searches[at] = p.Merge(graph.SeriesPoint{Count: 1, Sum: ms, Hist: hist})
}

// Embedding implements retrieval.Observer (embeddings are not charted).
func (s *Sampler) Embedding(time.Duration) {}

// Flush writes what was counted since the last flush and compacts the
// series. A sampler that writes the shared samples also counts the
// fulfilments that closed since the last flush of any such sampler (at
// most a day back; a minute on the first flush ever) and, on the first
// flush of the minute system-wide, samples the open gaps.
func (s *Sampler) Flush(ctx context.Context) error {
	now := s.now().UTC()
	s.mu.Lock()
	pts := make([]graph.SeriesPoint, 0, len(s.searches)+8)
	for _, p := range s.searches {
		pts = append(pts, p)
	}
	clear(s.searches)
	lister, shared := s.runs, !s.noShared
	s.mu.Unlock()

	if shared {
		more, err := s.sampleShared(ctx, lister, now)
		if err != nil {
			s.requeue(pts)
			return err
		}
		pts = append(pts, more...)
	}
	if err := s.store.AddSeriesPoints(ctx, pts); err != nil {
		s.requeue(pts)
		return fmt.Errorf("analytics: write series: %w", err)
	}
	if _, err := s.store.CompactSeries(ctx, now, s.retention); err != nil {
		return fmt.Errorf("analytics: compact series: %w", err)
	}
	return nil
}

// sampleShared returns the shared samples of the span that ends at now
// when this sampler claims it, and none when another claimed past now.
// Everything is read before the claim, so a failed read leaves the span to
// the next flush (here or in another process); an unavailable run listing
// does too.
func (s *Sampler) sampleShared(ctx context.Context, lister RunLister, now time.Time) ([]graph.SeriesPoint, error) {
	minute := graph.Truncate(now, graph.ResMinute)
	gaps, err := s.store.ListGaps(ctx, graph.GapQuery{Status: graph.GapOpen, Limit: 100000})
	if err != nil {
		return nil, fmt.Errorf("analytics: sample gaps: %w", err)
	}
	var runs []Run
	if lister != nil {
		if runs, err = lister.NovelVerbRuns(ctx, now.Add(-24*time.Hour), 5000); err != nil {
			return nil, nil // fulfilments unavailable: leave the span unclaimed
		}
	}
	since, ok, err := s.store.ClaimSpan(ctx, SharedSpan, now)
	if err != nil {
		return nil, fmt.Errorf("analytics: claim the shared samples: %w", err)
	}
	if !ok {
		return nil, nil // another sampler claimed past now
	}
	var pts []graph.SeriesPoint
	if since.Before(minute) { // the minute's first claim (or the first ever)
		pts = append(pts, graph.SeriesPoint{Series: SeriesGapsOpen, Res: graph.ResMinute, At: minute, Count: 1, Sum: float64(len(gaps))})
	}
	if since.IsZero() {
		since = now.Add(-time.Minute)
	}
	since = maxTime(since, now.Add(-24*time.Hour))
	var closed []graph.SeriesPoint
	for _, r := range runs {
		if r.Close.IsZero() || r.Close.Before(since) || !r.Close.Before(now) {
			continue
		}
		closed = append(closed, graph.SeriesPoint{Series: SeriesFulfilPrefix + r.Branch + ":" + r.Status, Res: graph.ResMinute,
			At: graph.Truncate(r.Close, graph.ResMinute), Count: 1})
	}
	return append(pts, graph.RollUp(closed, graph.ResMinute)...), nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// requeue keeps unwritten search counts for the next flush.
func (s *Sampler) requeue(pts []graph.SeriesPoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range pts {
		if p.Series != SeriesSearch {
			continue
		}
		if old, ok := s.searches[p.At]; ok {
			p = old.Merge(p)
		}
		s.searches[p.At] = p
	}
}

// Run flushes every interval until ctx ends (and once more then).
func (s *Sampler) Run(ctx context.Context, every time.Duration, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if err := s.Flush(context.WithoutCancel(ctx)); err != nil && onErr != nil {
				onErr(err)
			}
			return
		case <-t.C:
			if err := s.Flush(ctx); err != nil && onErr != nil {
				onErr(err)
			}
		}
	}
}

// SeriesAt reads points at res over [since, now): the points stored at res
// and the finer ones not yet rolled up, rolled up to res. q names its
// series or gives a prefix, not both (the two are alternatives: together
// they would read only the named series that also start with the prefix),
// and its Since is not in the future (CheckSince); otherwise a
// ValidationError names the fields (series, prefix, since). Neither
// reads every series.
func SeriesAt(ctx context.Context, store graph.Series, q graph.SeriesQuery) ([]graph.SeriesPoint, error) {
	if len(q.Series) > 0 && q.Prefix != "" {
		v := &fault.ValidationError{Malformed: true}
		v.Add("series", "names the series, and prefix selects them by name: give one of series and prefix, not both")
		v.Add("prefix", "selects series by name, and series names them: give one of series and prefix, not both")
		return nil, v
	}
	if err := CheckSince(q.Since, time.Now()); err != nil {
		return nil, err
	}
	var all []graph.SeriesPoint
	for _, res := range []string{graph.ResMinute, graph.ResHour, graph.ResDay} {
		sub := q
		sub.Res = res
		pts, err := store.SeriesPoints(ctx, sub)
		if err != nil {
			return nil, fmt.Errorf("analytics: series: %w", err)
		}
		all = append(all, pts...)
		if res == q.Res {
			break
		}
	}
	return graph.RollUp(all, q.Res), nil
}
