package neo4j

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

var _ graph.Sessions = (*Store)(nil)

// Console sessions (graph.Sessions):
//
//	(:ConsoleSession {id, expiresAt, record, flash})
//
// id is the hex SHA-256 of the session token (never the token); record
// holds the JSON session as the SQLite store keeps it; expiresAt (Unix
// nanoseconds) is the authority for the expiry, moved by each touch;
// flash is the sealed one-time result, base64 ("" for none).
const (
	cypherConstraintSession = `CREATE CONSTRAINT console_session_id IF NOT EXISTS FOR (s:ConsoleSession) REQUIRE s.id IS UNIQUE`
	// cypherPutSession creates the session only when its id is new: no
	// row back means the id exists.
	cypherPutSession = `OPTIONAL MATCH (x:ConsoleSession {id: $id})
WITH x
WHERE x IS NULL
CREATE (s:ConsoleSession {id: $id, expiresAt: $expiresAt, record: $record, flash: $flash})
RETURN s.id AS id`
	cypherGetSession = `MATCH (s:ConsoleSession {id: $id})
RETURN s.record AS record, s.expiresAt AS expiresAt, coalesce(s.flash, '') AS flash`
	cypherSetSessionFlash = `MATCH (s:ConsoleSession {id: $id})
SET s.flash = $flash
RETURN s.id AS id`
	cypherTouchSession = `MATCH (s:ConsoleSession {id: $id})
SET s.expiresAt = $expiresAt
RETURN s.id AS id`
	cypherDeleteSession = `MATCH (s:ConsoleSession {id: $id})
DELETE s`
	cypherDeleteExpiredSessions = `MATCH (s:ConsoleSession)
WHERE s.expiresAt <= $now
DELETE s
RETURN count(*) AS n`
)

// PutSession implements graph.Sessions.
func (s *Store) PutSession(ctx context.Context, cs graph.ConsoleSession) error {
	if err := graph.ValidateSession(cs); err != nil {
		return fmt.Errorf("neo4j: put session: %w", err)
	}
	if cs.CreatedAt.IsZero() {
		cs.CreatedAt = s.clock()
	}
	cs.CreatedAt, cs.ExpiresAt = cs.CreatedAt.UTC(), cs.ExpiresAt.UTC()
	rec, err := json.Marshal(cs)
	if err != nil {
		return fmt.Errorf("neo4j: put session: %w", err)
	}
	created := false
	err = s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherPutSession, map[string]any{"id": cs.ID, "expiresAt": cs.ExpiresAt.UnixNano(), "record": string(rec),
			"flash": base64.StdEncoding.EncodeToString(cs.Flash)})
		created = len(recs) > 0
		return err
	})
	if err != nil {
		return wrapErr("put session", err)
	}
	if !created {
		return fmt.Errorf("neo4j: put session: %w", graph.ErrConflict)
	}
	return nil
}

// GetSession implements graph.Sessions.
func (s *Store) GetSession(ctx context.Context, id string) (graph.ConsoleSession, error) {
	var out graph.ConsoleSession
	found := false
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetSession, map[string]any{"id": id})
		if err != nil || len(recs) == 0 {
			return err
		}
		raw, err := getString(recs[0], "record")
		if err != nil {
			return err
		}
		exp, err := getInt(recs[0], "expiresAt")
		if err != nil {
			return err
		}
		flash, err := getString(recs[0], "flash")
		if err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(raw), &out); err != nil {
			return fmt.Errorf("decode session: %w", err)
		}
		if flash != "" {
			if out.Flash, err = base64.StdEncoding.DecodeString(flash); err != nil {
				return fmt.Errorf("decode session flash: %w", err)
			}
		}
		out.ExpiresAt, found = time.Unix(0, exp).UTC(), true
		return nil
	})
	if err != nil {
		return graph.ConsoleSession{}, wrapErr("get session", err)
	}
	if !found {
		return graph.ConsoleSession{}, fmt.Errorf("neo4j: session: %w", graph.ErrNotFound)
	}
	return out, nil
}

// TouchSession implements graph.Sessions.
func (s *Store) TouchSession(ctx context.Context, id string, expiresAt time.Time) error {
	found := false
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherTouchSession, map[string]any{"id": id, "expiresAt": expiresAt.UnixNano()})
		found = len(recs) > 0
		return err
	})
	if err != nil {
		return wrapErr("touch session", err)
	}
	if !found {
		return fmt.Errorf("neo4j: touch session: %w", graph.ErrNotFound)
	}
	return nil
}

// SetSessionFlash implements graph.Sessions.
func (s *Store) SetSessionFlash(ctx context.Context, id string, flash []byte) error {
	if err := graph.ValidateFlash(flash); err != nil {
		return fmt.Errorf("neo4j: set session flash: %w", err)
	}
	found := false
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherSetSessionFlash, map[string]any{"id": id, "flash": base64.StdEncoding.EncodeToString(flash)})
		found = len(recs) > 0
		return err
	})
	if err != nil {
		return wrapErr("set session flash", err)
	}
	if !found {
		return fmt.Errorf("neo4j: set session flash: %w", graph.ErrNotFound)
	}
	return nil
}

// DeleteSession implements graph.Sessions.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	err := s.r.write(ctx, func(tx txRunner) error {
		_, err := tx.run(ctx, cypherDeleteSession, map[string]any{"id": id})
		return err
	})
	if err != nil {
		return wrapErr("delete session", err)
	}
	return nil
}

// DeleteExpiredSessions implements graph.Sessions.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error) {
	n := int64(0)
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherDeleteExpiredSessions, map[string]any{"now": now.UnixNano()})
		if err != nil || len(recs) == 0 {
			return err
		}
		n, err = getInt(recs[0], "n")
		return err
	})
	if err != nil {
		return 0, wrapErr("delete expired sessions", err)
	}
	return int(n), nil
}
