package neo4j

import (
	"context"
	"fmt"
	"sort"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// toolUsage accumulates one tool's share of a RecordUsage batch.
type toolUsage struct {
	uses, successes int64
	lastUsed        int64
	sum             []float32
	n               int64
}

var _ graph.RunClaims = (*Store)(nil)

// RecordUsage applies events in one write transaction: counts, session
// history and usage centroids. An unknown tool or a wrong embedding
// dimension rejects the whole batch.
func (s *Store) RecordUsage(ctx context.Context, events []graph.UsageEvent) error {
	if len(events) == 0 {
		return nil
	}
	for _, e := range events {
		if e.ToolID == "" {
			return fmt.Errorf("neo4j: record usage: empty tool id: %w", fault.ErrInvalid)
		}
		if e.QueryEmbedding != nil {
			if err := s.checkDim(ctx, fmt.Sprintf("record usage of %q", e.ToolID), e.QueryEmbedding); err != nil {
				return err
			}
		}
	}
	var ids []string
	seen := map[string]bool{}
	for _, e := range events {
		if !seen[e.ToolID] {
			seen[e.ToolID] = true
			ids = append(ids, e.ToolID)
		}
	}
	sort.Strings(ids)
	now := graph.Nanos(s.now().UTC())
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherUsageLock, map[string]any{"ids": ids})
		if err != nil {
			return err
		}
		acc := make(map[string]*toolUsage, len(recs))
		for _, r := range recs {
			id, err := getString(r, "id")
			if err != nil {
				return err
			}
			u := &toolUsage{}
			if u.sum, err = getVector(r, "usageSum"); err != nil {
				return err
			}
			if u.n, err = getInt(r, "centroidN"); err != nil {
				return err
			}
			acc[id] = u
		}
		for _, id := range ids {
			if acc[id] == nil {
				return fmt.Errorf("record usage of %q: %w", id, fault.ErrNotFound)
			}
		}
		recs, err = tx.run(ctx, cypherUsageSequence, map[string]any{"n": int64(len(events))})
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("usage sequence: %d records", len(recs))
		}
		first, err := getInt(recs[0], "first")
		if err != nil {
			return err
		}
		evs := make([]map[string]any, len(events))
		for i, e := range events {
			at := now
			if !e.At.IsZero() {
				at = graph.Nanos(e.At)
			}
			u := acc[e.ToolID]
			u.uses++
			if e.Success {
				u.successes++
			}
			if at > u.lastUsed {
				u.lastUsed = at
			}
			if e.Success && e.QueryEmbedding != nil {
				if u.sum == nil {
					u.sum = make([]float32, len(e.QueryEmbedding))
				}
				for j, x := range e.QueryEmbedding {
					u.sum[j] += x
				}
				u.n++
			}
			var qvec []float32
			if e.Success {
				qvec = e.QueryEmbedding
			}
			evs[i] = map[string]any{
				"toolId": e.ToolID, "sessionId": e.SessionID, "userId": e.UserID, "query": e.Query, "queryEmbedding": vectorParam(qvec),
				"success": e.Success, "latencyMs": e.LatencyMs, "at": at, "ordinal": first + int64(i), "origin": e.Origin,
			}
		}
		tools := make([]map[string]any, len(ids))
		for i, id := range ids {
			u := acc[id]
			var centroid []float32
			if u.n > 0 {
				centroid = graph.Normalize(u.sum)
			}
			tools[i] = map[string]any{
				"id": id, "uses": u.uses, "successes": u.successes, "lastUsed": u.lastUsed,
				"usageSum": vectorParam(u.sum), "usageCentroid": vectorParam(centroid), "centroidN": u.n,
			}
		}
		if _, err := tx.run(ctx, cypherUsageUpdate, map[string]any{"tools": tools}); err != nil {
			return fmt.Errorf("update: %w", err)
		}
		if _, err := tx.run(ctx, cypherUsageEvents, map[string]any{"events": evs}); err != nil {
			return fmt.Errorf("events: %w", err)
		}
		return nil
	})
	if err != nil {
		return wrapErr("record usage", err)
	}
	return nil
}

// Usage returns the usage evidence of the given tools; tools never used are
// absent from the map.
func (s *Store) Usage(ctx context.Context, ids []string) (map[string]graph.Usage, error) {
	out := map[string]graph.Usage{}
	if len(ids) == 0 {
		return out, nil
	}
	err := s.r.read(ctx, func(tx txRunner) error {
		clear(out)
		recs, err := tx.run(ctx, cypherUsage, map[string]any{"ids": ids})
		if err != nil {
			return err
		}
		for _, r := range recs {
			var u graph.Usage
			if u.ToolID, err = getString(r, "id"); err != nil {
				return err
			}
			uses, err := getInt(r, "uses")
			if err != nil {
				return err
			}
			succ, err := getInt(r, "successes")
			if err != nil {
				return err
			}
			last, err := getInt(r, "lastUsed")
			if err != nil {
				return err
			}
			n, err := getInt(r, "centroidN")
			if err != nil {
				return err
			}
			u.Uses, u.Successes, u.LastUsed, u.CentroidN = int(uses), int(succ), graph.FromNanos(last), int(n)
			if n > 0 {
				c, err := getVector(r, "centroid")
				if err != nil {
					return err
				}
				if c != nil {
					u.Centroid = graph.Normalize(c)
				}
			}
			out[u.ToolID] = u
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("usage", err)
	}
	return out, nil
}

// ServedQueries returns the latest successful events with a query text,
// newest first; limit <= 0 means 100.
func (s *Store) ServedQueries(ctx context.Context, limit int) ([]graph.ServedQuery, error) {
	limit = graph.Limit(limit, graph.DefaultEventsLimit, 0)
	return s.servedQueries(ctx, "served queries", cypherServedQueries, map[string]any{"limit": int64(limit)})
}

// ServedQueriesAfter returns the served queries after Seq after, oldest
// first (see graph.Store). Seq is the event's ordinal + 1.
func (s *Store) ServedQueriesAfter(ctx context.Context, after int64, limit int) ([]graph.ServedQuery, error) {
	limit = graph.Limit(limit, graph.DefaultEventsLimit, 0)
	return s.servedQueries(ctx, "served queries after", cypherServedQueriesAfter, map[string]any{"after": max(after, 0), "limit": int64(limit)})
}

func (s *Store) servedQueries(ctx context.Context, op, cypher string, params map[string]any) ([]graph.ServedQuery, error) {
	var out []graph.ServedQuery
	err := s.r.read(ctx, func(tx txRunner) error {
		out = []graph.ServedQuery{}
		recs, err := tx.run(ctx, cypher, params)
		if err != nil {
			return err
		}
		for _, r := range recs {
			var q graph.ServedQuery
			if q.ToolID, err = getString(r, "toolId"); err != nil {
				return err
			}
			if q.Query, err = getString(r, "query"); err != nil {
				return err
			}
			if q.Embedding, err = getVector(r, "embedding"); err != nil {
				return err
			}
			at, err := getInt(r, "at")
			if err != nil {
				return err
			}
			q.At = graph.FromNanos(at)
			if q.Seq, err = getInt(r, "seq"); err != nil {
				return err
			}
			out = append(out, q)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return out, nil
}

// SessionHistory returns a session's events, newest first; limit <= 0 means 100.
func (s *Store) SessionHistory(ctx context.Context, sessionID string, limit int) ([]graph.SessionEvent, error) {
	limit = graph.Limit(limit, graph.DefaultEventsLimit, 0)
	var out []graph.SessionEvent
	err := s.r.read(ctx, func(tx txRunner) error {
		out = []graph.SessionEvent{}
		recs, err := tx.run(ctx, cypherSessionHistory, map[string]any{"session": sessionID, "limit": int64(limit)})
		if err != nil {
			return err
		}
		for _, r := range recs {
			var e graph.SessionEvent
			if e.ToolID, err = getString(r, "toolId"); err != nil {
				return err
			}
			if e.UserID, err = getString(r, "userId"); err != nil {
				return err
			}
			if e.Success, err = getBool(r, "success"); err != nil {
				return err
			}
			at, err := getInt(r, "at")
			if err != nil {
				return err
			}
			e.At = graph.FromNanos(at)
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr(fmt.Sprintf("session history %q", sessionID), err)
	}
	return out, nil
}

// Stats counts nodes, edges and usage events.
func (s *Store) Stats(ctx context.Context) (graph.Stats, error) {
	var st graph.Stats
	err := s.r.read(ctx, func(tx txRunner) error {
		st = graph.Stats{ByStatus: map[string]int{}}
		recs, err := tx.run(ctx, cypherStatsStatus, nil)
		if err != nil {
			return err
		}
		for _, r := range recs {
			status, err := getString(r, "status")
			if err != nil {
				return err
			}
			n, err := getInt(r, "n")
			if err != nil {
				return err
			}
			st.ByStatus[status] = int(n)
			st.Tools += int(n)
		}
		recs, err = tx.run(ctx, cypherStatsCounts, nil)
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("counts: %d records", len(recs))
		}
		c := map[string]int{}
		for _, k := range []string{"verbs", "entities", "categories", "tags", "groups", "toolEdges", "offers", "isA", "relations", "usageEvents"} {
			n, err := getInt(recs[0], k)
			if err != nil {
				return err
			}
			c[k] = int(n)
		}
		st.Verbs, st.Entities, st.Categories, st.Tags, st.Groups = c["verbs"], c["entities"], c["categories"], c["tags"], c["groups"]
		st.Edges = c["toolEdges"] + c["offers"] + c["isA"] + c["relations"]
		st.UsageEvents = c["usageEvents"]
		return nil
	})
	if err != nil {
		return graph.Stats{}, wrapErr("stats", err)
	}
	if info, err := s.Embedder(ctx); err == nil {
		st.Embedder = info
	}
	return st, nil
}

// ClaimRuns marks up to c.N of the user's unclaimed observed runs of the
// tool since c.Since as backing a report, oldest first (see
// graph.RunClaims). The user's claim node is locked first, so concurrent
// claims of one user never share a run.
func (s *Store) ClaimRuns(ctx context.Context, c graph.RunClaim) (int, error) {
	if c.UserID == "" || c.ToolID == "" || c.N <= 0 {
		return 0, nil
	}
	claimed := 0
	err := s.r.write(ctx, func(tx txRunner) error {
		if _, err := tx.run(ctx, cypherClaimRunsLock, map[string]any{"key": "runClaims:" + c.UserID}); err != nil {
			return err
		}
		recs, err := tx.run(ctx, cypherClaimRuns, map[string]any{
			"user": c.UserID, "tool": c.ToolID, "since": graph.Nanos(c.Since), "successful": c.Successful, "n": int64(c.N),
		})
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("claim runs: %d records", len(recs))
		}
		n, err := getInt(recs[0], "claimed")
		claimed = int(n)
		return err
	})
	if err != nil {
		return 0, wrapErr(fmt.Sprintf("claim runs of %q by %q", c.ToolID, c.UserID), err)
	}
	return claimed, nil
}
