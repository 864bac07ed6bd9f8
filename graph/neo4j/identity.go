package neo4j

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

var (
	_ graph.Keys  = (*Store)(nil)
	_ graph.Audit = (*Store)(nil)
)

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// CreateKey implements graph.Keys.
func (s *Store) CreateKey(ctx context.Context, k graph.APIKey) error {
	if err := graph.ValidateKey(k); err != nil {
		return fmt.Errorf("neo4j: create key: %w", err)
	}
	if k.CreatedAt.IsZero() {
		k.CreatedAt = s.clock()
	}
	rec, err := json.Marshal(k)
	if err != nil {
		return fmt.Errorf("neo4j: create key %q: %w", k.ID, err)
	}
	created := false
	err = s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherCreateKey, map[string]any{
			"id": k.ID, "hash": k.Hash, "createdAt": k.CreatedAt.UnixNano(), "revokedAt": unixOrZero(k.RevokedAt), "record": string(rec),
		})
		created = len(recs) > 0
		return err
	})
	if err != nil {
		return wrapErr("create key", err)
	}
	if !created {
		return fmt.Errorf("neo4j: create key %q: %w", k.ID, graph.ErrConflict)
	}
	return nil
}

func decodeKeys(recs []record) ([]graph.APIKey, error) {
	out := make([]graph.APIKey, 0, len(recs))
	for _, r := range recs {
		raw, err := getString(r, "record")
		if err != nil {
			return nil, err
		}
		var k graph.APIKey
		if err := json.Unmarshal([]byte(raw), &k); err != nil {
			return nil, fmt.Errorf("decode key record: %w", err)
		}
		out = append(out, k)
	}
	return out, nil
}

// GetKey implements graph.Keys.
func (s *Store) GetKey(ctx context.Context, id string) (graph.APIKey, error) {
	var keys []graph.APIKey
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetKey, map[string]any{"id": id})
		if err != nil {
			return err
		}
		keys, err = decodeKeys(recs)
		return err
	})
	if err != nil {
		return graph.APIKey{}, wrapErr("get key", err)
	}
	if len(keys) == 0 {
		return graph.APIKey{}, fmt.Errorf("neo4j: key %q: %w", id, graph.ErrNotFound)
	}
	return keys[0], nil
}

// ListKeys implements graph.Keys.
func (s *Store) ListKeys(ctx context.Context) ([]graph.APIKey, error) {
	var keys []graph.APIKey
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherListKeys, nil)
		if err != nil {
			return err
		}
		keys, err = decodeKeys(recs)
		return err
	})
	if err != nil {
		return nil, wrapErr("list keys", err)
	}
	return keys, nil
}

// RevokeKey implements graph.Keys: the first revocation time stays.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if at.IsZero() {
		at = s.clock()
	}
	found := false
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetKey, map[string]any{"id": id})
		if err != nil {
			return err
		}
		keys, err := decodeKeys(recs)
		if err != nil || len(keys) == 0 {
			return err
		}
		found = true
		k := keys[0]
		if !k.RevokedAt.IsZero() {
			return nil
		}
		k.RevokedAt = at.UTC()
		b, err := json.Marshal(k)
		if err != nil {
			return err
		}
		_, err = tx.run(ctx, cypherSetKeyRecord, map[string]any{"id": id, "revokedAt": k.RevokedAt.UnixNano(), "record": string(b)})
		return err
	})
	if err != nil {
		return wrapErr("revoke key", err)
	}
	if !found {
		return fmt.Errorf("neo4j: revoke key %q: %w", id, graph.ErrNotFound)
	}
	return nil
}

// RevokedKeys implements graph.Keys.
func (s *Store) RevokedKeys(ctx context.Context) (int, error) {
	var n int64
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherRevokedKeys, nil)
		if err != nil || len(recs) == 0 {
			return err
		}
		n, err = getInt(recs[0], "n")
		return err
	})
	if err != nil {
		return 0, wrapErr("count revoked keys", err)
	}
	return int(n), nil
}

// AppendAudit implements graph.Audit: all events or none.
func (s *Store) AppendAudit(ctx context.Context, events []graph.AuditEvent) error {
	if len(events) == 0 {
		return nil
	}
	ids := make([]any, len(events))
	rows := make([]any, len(events))
	for i, e := range events {
		if err := graph.ValidateAuditEvent(e); err != nil {
			return fmt.Errorf("neo4j: append audit: event %d: %w", i, err)
		}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("neo4j: append audit: event %d: %w", i, err)
		}
		ids[i] = e.ID
		rows[i] = map[string]any{"id": e.ID, "at": unixOrZero(e.At), "actor": e.Actor, "action": e.Action, "tool": e.Tool, "record": string(b)}
	}
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherAuditExisting, map[string]any{"ids": ids})
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			id, _ := getString(recs[0], "id")
			return fmt.Errorf("event %q: %w", id, graph.ErrConflict)
		}
		_, err = tx.run(ctx, cypherAppendAudit, map[string]any{"events": rows})
		return err
	})
	return wrapErr("append audit", err)
}

// AuditEvents implements graph.Audit, newest first.
func (s *Store) AuditEvents(ctx context.Context, q graph.AuditQuery) (graph.AuditPage, error) {
	limit := graph.AuditLimit(q.Limit)
	page := graph.AuditPage{Items: []graph.AuditEvent{}}
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherAuditEvents, map[string]any{
			"actor": q.Actor, "action": q.Action, "tool": q.Tool, "since": unixOrZero(q.Since), "until": unixOrZero(q.Until),
			"before": q.Before, "limit": int64(limit + 1),
		})
		if err != nil {
			return err
		}
		for _, r := range recs {
			raw, err := getString(r, "record")
			if err != nil {
				return err
			}
			var e graph.AuditEvent
			if err := json.Unmarshal([]byte(raw), &e); err != nil {
				return fmt.Errorf("decode audit record: %w", err)
			}
			page.Items = append(page.Items, e)
		}
		return nil
	})
	if err != nil {
		return graph.AuditPage{}, wrapErr("audit events", err)
	}
	if len(page.Items) > limit {
		page.Items = page.Items[:limit]
		page.Next = page.Items[limit-1].ID
	}
	return page, nil
}
