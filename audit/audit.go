// Package audit is Toolsmith's append-only audit log: every mutating call,
// every tool execution, every approval decision and every refused
// credential, with who, what, when, outcome and request id. Events are
// stored in the graph store (graph.Audit), so they survive restarts, and
// are read back with filters and paging. Every edge records through the
// same Log, so REST, MCP and console calls are audited alike.
package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Recorder is what an edge needs to audit a call.
type Recorder interface {
	Record(ctx context.Context, e graph.AuditEvent) error
}

// Log records and reads audit events.
type Log struct {
	store graph.Audit
	now   func() time.Time
}

// New returns a log over store.
func New(store graph.Audit) *Log {
	if store == nil {
		panic("audit: nil store")
	}
	return &Log{store: store, now: time.Now}
}

// Record stores one event, filling ID and At when empty and the actor from
// the principal in ctx when Actor is empty.
func (l *Log) Record(ctx context.Context, e graph.AuditEvent) error {
	if e.At.IsZero() {
		e.At = l.now().UTC()
	}
	if e.ID == "" {
		e.ID = NewID(e.At)
	}
	if e.Actor == "" && e.Method == "" {
		if p, _, ok := identity.FromContext(ctx); ok {
			e.Actor, e.ActorName, e.Method = p.Subject, p.Name, p.Method
		}
	}
	if e.Outcome == "" {
		e.Outcome = graph.AuditSuccess
	}
	if len(e.Detail) > 2000 {
		e.Detail = e.Detail[:2000] + "…"
	}
	if err := l.store.AppendAudit(ctx, []graph.AuditEvent{e}); err != nil {
		return fmt.Errorf("audit: record %s: %w", e.Action, err)
	}
	return nil
}

// Query reads events, newest first. Bad filters are fault.ErrMalformed
// naming the field.
func (l *Log) Query(ctx context.Context, q graph.AuditQuery) (graph.AuditPage, error) {
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return graph.AuditPage{}, fault.Malformed("until", "must be after since")
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	if q.Limit > 1000 {
		q.Limit = 1000
	}
	page, err := l.store.AuditEvents(ctx, q)
	if err != nil {
		return graph.AuditPage{}, fmt.Errorf("audit: query: %w", err)
	}
	return page, nil
}

// NewID returns an event id that sorts by time: 19 zero-padded digits of
// Unix nanoseconds, a dash and 8 random hex digits.
func NewID(at time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%019d-%s", at.UnixNano(), hex.EncodeToString(b[:]))
}

// Action names for REST routes: the route's resource path with its
// parameters dropped and the method's verb, e.g. "tools.register".
func Action(method, route string) string {
	route = strings.TrimPrefix(route, "/api/v1/")
	var parts []string
	for _, p := range strings.Split(route, "/") {
		if p == "" || strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			continue
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		parts = []string{"api"}
	}
	name := strings.Join(parts, ".")
	switch method {
	case "PUT", "PATCH":
		name += ".update"
	case "DELETE":
		if !strings.HasSuffix(name, "invalidate") {
			name += ".delete"
		}
	}
	return name
}
