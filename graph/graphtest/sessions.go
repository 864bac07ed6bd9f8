package graphtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

func sessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// testSessions: a session is stored once under its id, read back with its
// principal as stored, its expiry slides, its flash is kept byte for byte
// and cleared, deletion is idempotent, and the sweep removes exactly the
// sessions expired by then.
func testSessions(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var ss graph.Sessions = s
	t0 := time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC)
	principal := json.RawMessage(`{"subject":"key:k1","level":"admin"}`)
	a := graph.ConsoleSession{ID: sessionID("a"), KeyID: "k1", Principal: principal, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	for name, bad := range map[string]graph.ConsoleSession{
		"raw token":    {ID: "a", Principal: principal, ExpiresAt: t0},
		"no expiry":    {ID: sessionID("x"), Principal: principal},
		"no principal": {ID: sessionID("x"), ExpiresAt: t0},
	} {
		if err := ss.PutSession(ctx, bad); !errors.Is(err, graph.ErrInvalid) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := ss.PutSession(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := ss.PutSession(ctx, a); !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("same id again: %v", err)
	}
	got, err := ss.GetSession(ctx, a.ID)
	if err != nil || got.KeyID != "k1" || !got.ExpiresAt.Equal(a.ExpiresAt) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("get: %+v %v", got, err)
	}
	var p map[string]any
	if err := json.Unmarshal(got.Principal, &p); err != nil || p["subject"] != "key:k1" || p["level"] != "admin" {
		t.Fatalf("principal: %s %v", got.Principal, err)
	}
	if _, err := ss.GetSession(ctx, sessionID("nobody")); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	// The expiry slides.
	if err := ss.TouchSession(ctx, a.ID, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, err := ss.GetSession(ctx, a.ID); err != nil || !got.ExpiresAt.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("after touch: %+v %v", got, err)
	}
	if err := ss.TouchSession(ctx, sessionID("nobody"), t0); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("touch unknown: %v", err)
	}
	// The flash is kept as given, replaced, and cleared.
	if got.Flash != nil {
		t.Fatalf("a new session has a flash: %q", got.Flash)
	}
	sealed := []byte{0, 1, 2, 0xff, 'x'}
	if err := ss.SetSessionFlash(ctx, a.ID, sealed); err != nil {
		t.Fatal(err)
	}
	if got, err := ss.GetSession(ctx, a.ID); err != nil || string(got.Flash) != string(sealed) || got.KeyID != "k1" {
		t.Fatalf("flash: %q %v", got.Flash, err)
	}
	if err := ss.SetSessionFlash(ctx, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ss.GetSession(ctx, a.ID); err != nil || len(got.Flash) != 0 {
		t.Fatalf("cleared flash: %q %v", got.Flash, err)
	}
	if err := ss.SetSessionFlash(ctx, sessionID("nobody"), sealed); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("flash of an unknown session: %v", err)
	}
	if err := ss.SetSessionFlash(ctx, a.ID, make([]byte, graph.MaxSessionFlash+1)); !errors.Is(err, graph.ErrInvalid) {
		t.Fatalf("oversized flash: %v", err)
	}
	// The sweep removes what expired at or before now, nothing else.
	b := graph.ConsoleSession{ID: sessionID("b"), Principal: principal, ExpiresAt: t0.Add(2 * time.Hour)}
	c := graph.ConsoleSession{ID: sessionID("c"), Principal: principal, ExpiresAt: t0.Add(90 * time.Minute)}
	for _, x := range []graph.ConsoleSession{b, c} {
		if err := ss.PutSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := ss.DeleteExpiredSessions(ctx, t0.Add(2*time.Hour)); err != nil || n != 2 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	for _, id := range []string{b.ID, c.ID} {
		if _, err := ss.GetSession(ctx, id); !errors.Is(err, graph.ErrNotFound) {
			t.Fatalf("swept session still there: %v", err)
		}
	}
	if _, err := ss.GetSession(ctx, a.ID); err != nil {
		t.Fatalf("a live session was swept: %v", err)
	}
	if n, err := ss.DeleteExpiredSessions(ctx, t0.Add(2*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second sweep: %d %v", n, err)
	}
	// Signing out deletes; twice is fine.
	for range 2 {
		if err := ss.DeleteSession(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ss.GetSession(ctx, a.ID); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}
