package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.Series = (*Store)(nil)

// Series points (graph.Series):
//
//	(:SeriesPoint {key, series, res, at, record})
//
// key is series|res|at (Unix nanoseconds); record holds the JSON point.
// Points are merged in Go inside the write transaction (read, add, write),
// as the SQLite store does.
const (
	cypherConstraintSeries = `CREATE CONSTRAINT series_point_key IF NOT EXISTS FOR (p:SeriesPoint) REQUIRE p.key IS UNIQUE`
	cypherSeriesGet        = `UNWIND $keys AS k
MATCH (p:SeriesPoint {key: k})
RETURN p.record AS record`
	cypherSeriesPut = `UNWIND $points AS x
MERGE (p:SeriesPoint {key: x.key})
SET p.series = x.series, p.res = x.res, p.at = x.at, p.record = x.record`
	cypherSeriesPoints = `MATCH (p:SeriesPoint)
WHERE p.res = $res AND (size($series) = 0 OR p.series IN $series) AND ($prefix = '' OR p.series STARTS WITH $prefix)
  AND ($since = 0 OR p.at >= $since) AND ($until = 0 OR p.at < $until)
RETURN p.record AS record
ORDER BY p.series, p.at
LIMIT $limit`
	cypherSeriesDelete = `MATCH (p:SeriesPoint)
WHERE p.res = $res AND p.at < $before
DELETE p
RETURN count(*) AS n`
)

func pointKey(p graph.SeriesPoint) string {
	return p.Series + "|" + p.Res + "|" + strconv.FormatInt(p.At.UnixNano(), 10)
}

// AddSeriesPoints implements graph.Series.
func (s *Store) AddSeriesPoints(ctx context.Context, pts []graph.SeriesPoint) error {
	for i, p := range pts {
		if err := graph.ValidatePoint(p); err != nil {
			return fmt.Errorf("neo4j: add series points: point %d: %w", i, err)
		}
	}
	if len(pts) == 0 {
		return nil
	}
	err := s.r.write(ctx, func(tx txRunner) error { return addPoints(ctx, tx, pts) })
	if err != nil {
		return wrapErr("add series points", err)
	}
	return nil
}

// addPoints merges pts (several may share a bucket) with what is stored
// and writes the sums, inside tx.
func addPoints(ctx context.Context, tx txRunner, pts []graph.SeriesPoint) error {
	merged := map[string]graph.SeriesPoint{}
	var keys []string
	for _, p := range pts {
		p.At = p.At.UTC()
		k := pointKey(p)
		if old, ok := merged[k]; ok {
			merged[k] = old.Merge(p)
			continue
		}
		keys = append(keys, k)
		merged[k] = p
	}
	recs, err := tx.run(ctx, cypherSeriesGet, map[string]any{"keys": keys})
	if err != nil {
		return err
	}
	for _, r := range recs {
		old, err := decodePoint(r)
		if err != nil {
			return err
		}
		k := pointKey(old)
		merged[k] = old.Merge(merged[k])
	}
	rows := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		p := merged[k]
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		rows = append(rows, map[string]any{"key": k, "series": p.Series, "res": p.Res, "at": p.At.UnixNano(), "record": string(b)})
	}
	_, err = tx.run(ctx, cypherSeriesPut, map[string]any{"points": rows})
	return err
}

func decodePoint(r record) (graph.SeriesPoint, error) {
	raw, err := getString(r, "record")
	if err != nil {
		return graph.SeriesPoint{}, err
	}
	var p graph.SeriesPoint
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return graph.SeriesPoint{}, fmt.Errorf("decode series point: %w", err)
	}
	p.At = p.At.UTC()
	return p, nil
}

func seriesPoints(ctx context.Context, tx txRunner, q graph.SeriesQuery) ([]graph.SeriesPoint, error) {
	q.Limit = graph.Limit(q.Limit, graph.DefaultSeriesLimit, 0)
	names := q.Series
	if names == nil {
		names = []string{}
	}
	recs, err := tx.run(ctx, cypherSeriesPoints, map[string]any{"res": q.Res, "series": names, "prefix": q.Prefix,
		"since": nanosOrZero(q.Since), "until": nanosOrZero(q.Until), "limit": int64(q.Limit)})
	if err != nil {
		return nil, err
	}
	out := make([]graph.SeriesPoint, 0, len(recs))
	for _, r := range recs {
		p, err := decodePoint(r)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func nanosOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// SeriesPoints implements graph.Series.
func (s *Store) SeriesPoints(ctx context.Context, q graph.SeriesQuery) ([]graph.SeriesPoint, error) {
	var out []graph.SeriesPoint
	err := s.r.read(ctx, func(tx txRunner) error {
		var err error
		out, err = seriesPoints(ctx, tx, q)
		return err
	})
	if err != nil {
		return nil, wrapErr("series points", err)
	}
	return out, nil
}

// CompactSeries implements graph.Series.
func (s *Store) CompactSeries(ctx context.Context, now time.Time, r graph.Retention) (int, error) {
	removed := 0
	err := s.r.write(ctx, func(tx txRunner) error {
		removed = 0
		for _, step := range graph.CompactSteps(now, r) {
			if step.To != "" {
				old, err := seriesPoints(ctx, tx, graph.SeriesQuery{Res: step.From, Until: step.Before, Limit: 1 << 30})
				if err != nil {
					return err
				}
				if up := graph.RollUp(old, step.To); len(up) > 0 {
					if err := addPoints(ctx, tx, up); err != nil {
						return err
					}
				}
			}
			recs, err := tx.run(ctx, cypherSeriesDelete, map[string]any{"res": step.From, "before": step.Before.UnixNano()})
			if err != nil {
				return err
			}
			if len(recs) > 0 {
				n, err := getInt(recs[0], "n")
				if err != nil {
					return err
				}
				removed += int(n)
			}
		}
		return nil
	})
	if err != nil {
		return 0, wrapErr("compact series", err)
	}
	return removed, nil
}
