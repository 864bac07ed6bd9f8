package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.Pairings = (*Store)(nil)

// LearnPairs implements graph.Pairings in one write transaction; evidence
// about a tool that is not registered is dropped (no edge without both
// nodes, and no PairSession either).
func (s *Store) LearnPairs(ctx context.Context, evidence []graph.PairEvidence) error {
	for _, e := range evidence {
		if _, _, err := graph.OrderPair(e); err != nil {
			return fmt.Errorf("neo4j: learn pairs: %w", err)
		}
	}
	if len(evidence) == 0 {
		return nil
	}
	err := s.r.write(ctx, func(tx txRunner) error {
		for _, e := range evidence {
			a, b, _ := graph.OrderPair(e)
			at := e.At
			if at.IsZero() {
				at = s.clock()
			}
			// A pair counts once per caller's session: a session repeated
			// cannot inflate it.
			key, err := json.Marshal([]string{a, b, e.Caller, e.Session})
			if err != nil {
				return err
			}
			who := map[string]any{"a": a, "b": b, "caller": e.Caller, "session": e.Session}
			recs, err := tx.run(ctx, cypherPairSessions, who)
			if err != nil {
				return err
			}
			var sessions, seen int64
			if len(recs) > 0 {
				if sessions, err = getInt(recs[0], "sessions"); err != nil {
					return err
				}
				if seen, err = getInt(recs[0], "seen"); err != nil {
					return err
				}
			}
			if seen > 0 {
				continue
			}
			if _, err := tx.run(ctx, cypherPutPairSession, map[string]any{
				"key": string(key), "a": a, "b": b, "caller": e.Caller, "session": e.Session, "at": at.UnixNano(),
			}); err != nil {
				return err
			}
			newCaller := int64(0)
			if sessions == 0 {
				newCaller = 1
			}
			recs, err = tx.run(ctx, cypherGetLearnedPair, map[string]any{"a": a, "b": b})
			if err != nil {
				return err
			}
			w, n, callers, last := 0.0, int64(0), int64(0), at
			if len(recs) > 0 {
				if w, err = getFloat(recs[0], "weight"); err != nil {
					return err
				}
				if n, err = getInt(recs[0], "count"); err != nil {
					return err
				}
				if callers, err = getInt(recs[0], "callers"); err != nil {
					return err
				}
				u, err := getInt(recs[0], "updatedAt")
				if err != nil {
					return err
				}
				last = time.Unix(0, u)
			}
			w = graph.DecayPair(w, last, at) + 1
			if at.Before(last) {
				at = last
			}
			if _, err := tx.run(ctx, cypherPutLearnedPair, map[string]any{"a": a, "b": b, "weight": w, "count": n + 1, "callers": callers + newCaller, "updatedAt": at.UnixNano()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrapErr("learn pairs", err)
	}
	return nil
}

// LearnedPairs implements graph.Pairings.
func (s *Store) LearnedPairs(ctx context.Context, id string, limit int, f graph.Filter, asOf time.Time) ([]graph.Hit, error) {
	limit = graph.Limit(limit, graph.DefaultRelatedLimit, 0)
	if asOf.IsZero() {
		asOf = s.clock()
	}
	out := []graph.Hit{}
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherLearnedPairs, filterParams(f, map[string]any{"id": id, "quorum": int64(graph.PairQuorum)}))
		if err != nil {
			return err
		}
		for _, r := range recs {
			sum, ok, err := allowedSummary(r, f)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			w, err := getFloat(r, "weight")
			if err != nil {
				return err
			}
			u, err := getInt(r, "updatedAt")
			if err != nil {
				return err
			}
			out = append(out, graph.Hit{Tool: sum, Score: graph.DecayPair(w, time.Unix(0, u), asOf)})
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("learned pairs", err)
	}
	graph.SortHits(out)
	return out[:min(limit, len(out))], nil
}
