package graph

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Resolutions of the operations time series, finest first. Points are
// recorded by the minute and downsampled as they age: minutes into hours,
// hours into days, and days are dropped (CompactSeries, with a Retention).
const (
	ResMinute = "minute"
	ResHour   = "hour"
	ResDay    = "day"
)

// LatencyBucketsMs are the upper bounds (milliseconds) of a point's
// latency histogram; the last bucket counts everything slower.
var LatencyBucketsMs = []float64{5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, math.Inf(1)}

// SeriesPoint is one bucket of one series: how many events (or gauge
// samples) it holds, their sum, and for latencies a histogram over
// LatencyBucketsMs. Points of the same series, resolution and time add up.
type SeriesPoint struct {
	Series string    `json:"series"`
	Res    string    `json:"res"`
	At     time.Time `json:"at"` // the bucket's start, UTC, truncated to Res
	Count  float64   `json:"count"`
	Sum    float64   `json:"sum"`
	// Hist, when set, has len(LatencyBucketsMs) counts.
	Hist []float64 `json:"hist,omitempty"`
}

// SeriesQuery selects points: of the named series (or every series whose
// name starts with Prefix), at one resolution, At in [Since, Until).
type SeriesQuery struct {
	Series []string
	Prefix string
	Res    string
	Since  time.Time // zero: no bound
	Until  time.Time // zero: no bound
	Limit  int       // <= 0 means 10000
}

// Retention is how long each resolution is kept before CompactSeries rolls
// it up (minutes into hours, hours into days) or drops it (days).
type Retention struct {
	Minutes time.Duration
	Hours   time.Duration
	Days    time.Duration
}

// DefaultRetention keeps 6 hours by the minute, 14 days by the hour and a
// year by the day: at most 360 + 336 + 365 points a series.
var DefaultRetention = Retention{Minutes: 6 * time.Hour, Hours: 14 * 24 * time.Hour, Days: 365 * 24 * time.Hour}

// Series stores the operations time series the console's dashboard draws.
// It is part of Store.
type Series interface {
	// AddSeriesPoints adds each point into its bucket (count, sum and
	// histogram add up), atomically. Points need a Series, a known Res, an
	// At truncated to it, and a Hist of len(LatencyBucketsMs) or none
	// (fault.ErrInvalid).
	AddSeriesPoints(ctx context.Context, pts []SeriesPoint) error
	// SeriesPoints returns matching points ordered by series, then time.
	SeriesPoints(ctx context.Context, q SeriesQuery) ([]SeriesPoint, error)
	// CompactSeries rolls minute points older than r.Minutes into their
	// hours, hour points older than r.Hours into their days, and drops day
	// points older than r.Days, in one transaction; it returns how many
	// points it removed.
	CompactSeries(ctx context.Context, now time.Time, r Retention) (int, error)
}

// Truncate is the start of t's bucket at res (UTC).
func Truncate(t time.Time, res string) time.Time {
	t = t.UTC()
	switch res {
	case ResHour:
		return t.Truncate(time.Hour)
	case ResDay:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return t.Truncate(time.Minute)
}

// ValidatePoint checks what both stores require of a point.
func ValidatePoint(p SeriesPoint) error {
	switch {
	case p.Series == "" || len(p.Series) > 200:
		return fmt.Errorf("series point: series must be 1-200 characters: %w", fault.ErrInvalid)
	case !slices.Contains([]string{ResMinute, ResHour, ResDay}, p.Res):
		return fmt.Errorf("series point %s: res must be minute, hour or day, got %q: %w", p.Series, p.Res, fault.ErrInvalid)
	case !p.At.Equal(Truncate(p.At, p.Res)):
		return fmt.Errorf("series point %s: at %s is not the start of its %s: %w", p.Series, p.At, p.Res, fault.ErrInvalid)
	case p.Hist != nil && len(p.Hist) != len(LatencyBucketsMs):
		return fmt.Errorf("series point %s: hist must have %d buckets: %w", p.Series, len(LatencyBucketsMs), fault.ErrInvalid)
	case math.IsNaN(p.Count) || math.IsNaN(p.Sum) || math.IsInf(p.Count, 0) || math.IsInf(p.Sum, 0):
		return fmt.Errorf("series point %s: count and sum must be finite: %w", p.Series, fault.ErrInvalid)
	}
	return nil
}

// Merge adds b into p (same series and bucket).
func (p SeriesPoint) Merge(b SeriesPoint) SeriesPoint {
	p.Count += b.Count
	p.Sum += b.Sum
	if b.Hist != nil {
		if p.Hist == nil {
			p.Hist = make([]float64, len(b.Hist))
		} else {
			p.Hist = slices.Clone(p.Hist)
		}
		for i := range b.Hist {
			p.Hist[i] += b.Hist[i]
		}
	}
	return p
}

// RollUp merges points into buckets of res, ordered by series then time.
func RollUp(pts []SeriesPoint, res string) []SeriesPoint {
	type key struct {
		series string
		at     time.Time
	}
	idx := map[key]int{}
	var out []SeriesPoint
	for _, p := range pts {
		k := key{p.Series, Truncate(p.At, res)}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, SeriesPoint{Series: p.Series, Res: res, At: k.at}.Merge(p))
			continue
		}
		out[i] = out[i].Merge(p)
	}
	slices.SortFunc(out, func(a, b SeriesPoint) int {
		if c := strings.Compare(a.Series, b.Series); c != 0 {
			return c
		}
		return a.At.Compare(b.At)
	})
	return out
}

// Quantile estimates the q-quantile (0..1) of a point's latencies in
// milliseconds: the upper bound of the histogram bucket it falls in (the
// last finite bound for the open bucket); 0 without samples.
func (p SeriesPoint) Quantile(q float64) float64 {
	var n float64
	for _, c := range p.Hist {
		n += c
	}
	if n == 0 {
		return 0
	}
	var cum float64
	for i, c := range p.Hist {
		cum += c
		if cum >= q*n {
			if math.IsInf(LatencyBucketsMs[i], 1) {
				return LatencyBucketsMs[i-1]
			}
			return LatencyBucketsMs[i]
		}
	}
	return LatencyBucketsMs[len(LatencyBucketsMs)-2]
}

// HistBucket is the index of the LatencyBucketsMs bucket of ms.
func HistBucket(ms float64) int {
	for i, b := range LatencyBucketsMs {
		if ms <= b {
			return i
		}
	}
	return len(LatencyBucketsMs) - 1
}
