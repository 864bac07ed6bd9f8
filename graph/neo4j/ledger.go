package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.CallLedger = (*Store)(nil)

// The airlock's call ledger (graph.CallLedger):
//
//	(:Call {id, approvalId, at, cost, record})
//	(:CallLedger {approvalId, spent, reservations})
//	(:ToolsmithMeta {key: 'callSeq', n})                 the last call id
//	(:ToolsmithMeta {key: 'callImport:<source>', at, calls}) an imported ledger file
//
// record holds the JSON CallRecord exactly as the SQLite store keeps it.
// ReserveCall first bumps its approval's CallLedger.reservations: a SET
// that reads the property it writes, so Cypher write-locks the node before
// reading it, and every other reservation of the approval waits for this
// transaction. Call ids come from one counter node, locked the same way.
const (
	cypherConstraintCall       = `CREATE CONSTRAINT call_id IF NOT EXISTS FOR (c:Call) REQUIRE c.id IS UNIQUE`
	cypherConstraintCallLedger = `CREATE CONSTRAINT call_ledger_approval IF NOT EXISTS FOR (l:CallLedger) REQUIRE l.approvalId IS UNIQUE`
	cypherIndexCallApproval    = `CREATE INDEX call_approval_at IF NOT EXISTS FOR (c:Call) ON (c.approvalId, c.at)`
	cypherLedgerLock           = `MERGE (l:CallLedger {approvalId: $approvalId})
ON CREATE SET l.spent = 0.0, l.reservations = 0
SET l.reservations = l.reservations + 1
RETURN l.spent AS spent`
	cypherLedgerTally = `UNWIND $since AS s
OPTIONAL MATCH (c:Call {approvalId: $approvalId})
WHERE c.at >= s.at
RETURN s.i AS i, count(c) AS n`
	cypherCallSeq = `MERGE (m:ToolsmithMeta {key: 'callSeq'})
ON CREATE SET m.n = 0
SET m.n = m.n + $count
RETURN m.n AS last`
	cypherInsertCalls = `UNWIND $calls AS x
CREATE (:Call {id: x.id, approvalId: x.approvalId, at: x.at, cost: x.cost, record: x.record})
WITH x.approvalId AS a, sum(x.cost) AS spent
MERGE (l:CallLedger {approvalId: a})
ON CREATE SET l.spent = 0.0, l.reservations = 0
SET l.spent = l.spent + spent`
	cypherCompleteCall = `MATCH (c:Call {id: $id})
WITH c, c.cost AS old, c.approvalId AS a
WHERE a = $approvalId
SET c.at = $at, c.cost = $cost, c.record = $record
WITH c, old, a
MATCH (l:CallLedger {approvalId: a})
SET l.spent = l.spent + $cost - old
RETURN c.id AS id`
	cypherCallRecords = `MATCH (c:Call {approvalId: $approvalId})
RETURN c.record AS record
ORDER BY c.id
LIMIT $limit`
	cypherCallImport = `MERGE (m:ToolsmithMeta {key: $key})
ON CREATE SET m.at = $now, m.calls = $count, m.fresh = true
ON MATCH SET m.fresh = false
RETURN m.fresh AS fresh`
)

// ReserveCall implements graph.CallLedger.
func (s *Store) ReserveCall(ctx context.Context, r graph.CallRecord, since []time.Time, check func(graph.CallTally) error) (graph.CallRecord, graph.CallTally, error) {
	var tally graph.CallTally
	if err := graph.ValidateCall(r); err != nil {
		return r, tally, fmt.Errorf("neo4j: reserve call: %w", err)
	}
	sinceNs := make([]any, len(since))
	for i, t := range since {
		sinceNs[i] = map[string]any{"i": int64(i), "at": t.UnixNano()}
	}
	var checkErr error
	err := s.r.write(ctx, func(tx txRunner) error {
		tally, checkErr = graph.CallTally{Calls: make([]int, len(since))}, nil
		recs, err := tx.run(ctx, cypherLedgerLock, map[string]any{"approvalId": r.ApprovalID})
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			if tally.Spent, err = getFloat(recs[0], "spent"); err != nil {
				return err
			}
		}
		if len(since) > 0 {
			recs, err = tx.run(ctx, cypherLedgerTally, map[string]any{"approvalId": r.ApprovalID, "since": sinceNs})
			if err != nil {
				return err
			}
			for _, rec := range recs {
				i, err := getInt(rec, "i")
				if err != nil {
					return err
				}
				n, err := getInt(rec, "n")
				if err != nil {
					return err
				}
				if i >= 0 && int(i) < len(tally.Calls) {
					tally.Calls[i] = int(n)
				}
			}
		}
		if checkErr = check(tally); checkErr != nil {
			return checkErr // rolls the lock's bump back
		}
		stored, err := insertCalls(ctx, tx, []graph.CallRecord{r})
		if err == nil {
			r = stored[0]
		}
		return err
	})
	if checkErr != nil {
		return r, tally, checkErr
	}
	if err != nil {
		return r, tally, wrapErr("reserve call", err)
	}
	return r, tally, nil
}

// insertCalls stores recs with new ids and adds their costs to their
// approvals' spent totals.
func insertCalls(ctx context.Context, tx txRunner, recs []graph.CallRecord) ([]graph.CallRecord, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	got, err := tx.run(ctx, cypherCallSeq, map[string]any{"count": int64(len(recs))})
	if err != nil {
		return nil, err
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("no call id returned")
	}
	last, err := getInt(got[0], "last")
	if err != nil {
		return nil, err
	}
	out := make([]graph.CallRecord, len(recs))
	rows := make([]any, len(recs))
	for i, r := range recs {
		r.ID = last - int64(len(recs)) + int64(i) + 1
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		out[i] = r
		rows[i] = map[string]any{"id": r.ID, "approvalId": r.ApprovalID, "at": r.At.UnixNano(), "cost": r.Cost, "record": string(b)}
	}
	_, err = tx.run(ctx, cypherInsertCalls, map[string]any{"calls": rows})
	return out, err
}

// CompleteCall implements graph.CallLedger.
func (s *Store) CompleteCall(ctx context.Context, r graph.CallRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("neo4j: complete call %d: %w", r.ID, err)
	}
	found := false
	err = s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherCompleteCall, map[string]any{
			"id": r.ID, "approvalId": r.ApprovalID, "at": r.At.UnixNano(), "cost": r.Cost, "record": string(b),
		})
		found = len(recs) > 0
		return err
	})
	if err != nil {
		return wrapErr("complete call", err)
	}
	if !found {
		return fmt.Errorf("neo4j: complete call %d of approval %q: %w", r.ID, r.ApprovalID, fault.ErrNotFound)
	}
	return nil
}

// CallRecords implements graph.CallLedger.
func (s *Store) CallRecords(ctx context.Context, approvalID string, limit int) ([]graph.CallRecord, error) {
	var out []graph.CallRecord
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherCallRecords, map[string]any{"approvalId": approvalID, "limit": int64(graph.CallLimit(limit))})
		if err != nil {
			return err
		}
		out = out[:0]
		for _, rec := range recs {
			raw, err := getString(rec, "record")
			if err != nil {
				return err
			}
			var r graph.CallRecord
			if err := json.Unmarshal([]byte(raw), &r); err != nil {
				return fmt.Errorf("decode call record: %w", err)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("call records", err)
	}
	return out, nil
}

// ImportCalls implements graph.CallLedger.
func (s *Store) ImportCalls(ctx context.Context, source string, recs []graph.CallRecord) (bool, error) {
	if source == "" {
		return false, fmt.Errorf("neo4j: import calls: source is required: %w", fault.ErrInvalid)
	}
	for i, r := range recs {
		if err := graph.ValidateCall(r); err != nil {
			return false, fmt.Errorf("neo4j: import calls: record %d: %w", i, err)
		}
	}
	return s.importOnce(ctx, "import calls", cypherCallImport, "callImport:"+source, len(recs), func(tx txRunner) error {
		_, err := insertCalls(ctx, tx, recs)
		return err
	})
}

// importOnce runs insert in the transaction that sets the import marker
// key (cypher: MERGE it, answering whether it is new), only when it is new:
// a source imported once is never imported again, and a failed insert
// leaves no marker. It reports whether this call imported.
func (s *Store) importOnce(ctx context.Context, what, cypher, key string, count int, insert func(tx txRunner) error) (bool, error) {
	fresh := false
	err := s.r.write(ctx, func(tx txRunner) error {
		got, err := tx.run(ctx, cypher, map[string]any{"key": key, "now": s.clock().UnixNano(), "count": int64(count)})
		if err != nil {
			return err
		}
		if len(got) == 0 {
			return fmt.Errorf("no import marker returned")
		}
		if fresh, err = getBool(got[0], "fresh"); err != nil || !fresh {
			return err
		}
		return insert(tx)
	})
	if err != nil {
		return false, wrapErr(what, err)
	}
	return fresh, nil
}
