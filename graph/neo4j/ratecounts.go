package neo4j

import (
	"context"
	"fmt"
	"strconv"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.RateCounts = (*Store)(nil)

// Rate-limit counts (graph.RateCounts):
//
//	(:RateCount {id, key, window, n})
//
// id is key|window. The increment reads n in its own SET, so Cypher takes
// the node's write lock before reading it: concurrent adds from several
// replicas are serialised, never lost.
const (
	cypherConstraintRateCount  = `CREATE CONSTRAINT rate_count_id IF NOT EXISTS FOR (c:RateCount) REQUIRE c.id IS UNIQUE`
	cypherIndexRateCountWindow = `CREATE INDEX rate_count_window IF NOT EXISTS FOR (c:RateCount) ON (c.window)`
	cypherAddRateCount         = `MERGE (c:RateCount {id: $id})
ON CREATE SET c.key = $key, c.window = $window, c.n = 0
SET c.n = c.n + $delta
WITH c
OPTIONAL MATCH (p:RateCount {id: $prevId})
RETURN c.n AS n, coalesce(p.n, 0) AS prev`
	cypherExpireRateCounts = `MATCH (c:RateCount)
WHERE c.window < $before
DELETE c
RETURN count(*) AS n`
)

func rateCountID(key string, window int64) string {
	return key + "|" + strconv.FormatInt(window, 10)
}

// AddRateCount implements graph.RateCounts.
func (s *Store) AddRateCount(ctx context.Context, key string, window int64, delta int) (int64, int64, error) {
	if err := graph.ValidateRateKey(key); err != nil {
		return 0, 0, fmt.Errorf("neo4j: add rate count: %w", err)
	}
	var cur, prev int64
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherAddRateCount, map[string]any{
			"id": rateCountID(key, window), "prevId": rateCountID(key, window-1), "key": key, "window": window, "delta": int64(delta),
		})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("no count returned")
		}
		if cur, err = getInt(recs[0], "n"); err != nil {
			return err
		}
		prev, err = getInt(recs[0], "prev")
		return err
	})
	if err != nil {
		return 0, 0, wrapErr("add rate count", err)
	}
	return cur, prev, nil
}

// ExpireRateCounts implements graph.RateCounts.
func (s *Store) ExpireRateCounts(ctx context.Context, before int64) (int, error) {
	var n int64
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherExpireRateCounts, map[string]any{"before": before})
		if err != nil || len(recs) == 0 {
			return err
		}
		n, err = getInt(recs[0], "n")
		return err
	})
	if err != nil {
		return 0, wrapErr("expire rate counts", err)
	}
	return int(n), nil
}
