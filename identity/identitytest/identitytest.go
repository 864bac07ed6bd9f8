// Package identitytest helps tests that need identities: an in-memory
// graph.Keys and graph.Audit, and keys made in one call.
package identitytest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
)

// Mem is an in-memory graph.Keys and graph.Audit. It is safe for
// concurrent use.
type Mem struct {
	mu    sync.Mutex
	keys  map[string]graph.APIKey
	order []string
	audit []graph.AuditEvent
}

var (
	_ graph.Keys  = (*Mem)(nil)
	_ graph.Audit = (*Mem)(nil)
)

// NewMem returns an empty store.
func NewMem() *Mem { return &Mem{keys: map[string]graph.APIKey{}} }

// CreateKey implements graph.Keys.
func (m *Mem) CreateKey(_ context.Context, k graph.APIKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := graph.ValidateKey(k); err != nil {
		return fmt.Errorf("mem: create key: %w", err)
	}
	if _, ok := m.keys[k.ID]; ok {
		return fmt.Errorf("mem: create key %q: %w", k.ID, graph.ErrConflict)
	}
	m.keys[k.ID] = k
	m.order = append(m.order, k.ID)
	return nil
}

// GetKey implements graph.Keys.
func (m *Mem) GetKey(_ context.Context, id string) (graph.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[id]
	if !ok {
		return graph.APIKey{}, fmt.Errorf("mem: key %q: %w", id, graph.ErrNotFound)
	}
	return k, nil
}

// ListKeys implements graph.Keys.
func (m *Mem) ListKeys(context.Context) ([]graph.APIKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]graph.APIKey, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, m.keys[id])
	}
	return out, nil
}

// RevokeKey implements graph.Keys.
func (m *Mem) RevokeKey(_ context.Context, id string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.keys[id]
	if !ok {
		return fmt.Errorf("mem: key %q: %w", id, graph.ErrNotFound)
	}
	if k.RevokedAt.IsZero() {
		k.RevokedAt = at
		m.keys[id] = k
	}
	return nil
}

// RevokedKeys implements graph.Keys.
func (m *Mem) RevokedKeys(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, k := range m.keys {
		if !k.RevokedAt.IsZero() {
			n++
		}
	}
	return n, nil
}

// AppendAudit implements graph.Audit.
func (m *Mem) AppendAudit(_ context.Context, events []graph.AuditEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range events {
		if err := graph.ValidateAuditEvent(e); err != nil {
			return fmt.Errorf("mem: audit event: %w", err)
		}
	}
	m.audit = append(m.audit, events...)
	return nil
}

// AuditEvents implements graph.Audit.
func (m *Mem) AuditEvents(_ context.Context, q graph.AuditQuery) (graph.AuditPage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := slices.Clone(m.audit)
	slices.SortFunc(all, func(a, b graph.AuditEvent) int { return strings.Compare(b.ID, a.ID) })
	limit := graph.AuditLimit(q.Limit)
	page := graph.AuditPage{Items: []graph.AuditEvent{}}
	for _, e := range all {
		if (q.Actor != "" && e.Actor != q.Actor) || (q.Action != "" && e.Action != q.Action) || (q.Tool != "" && e.Tool != q.Tool) ||
			(!q.Since.IsZero() && e.At.Before(q.Since)) || (!q.Until.IsZero() && !e.At.Before(q.Until)) ||
			(q.Before != "" && e.ID >= q.Before) {
			continue
		}
		if len(page.Items) == limit {
			page.Next = page.Items[len(page.Items)-1].ID
			break
		}
		page.Items = append(page.Items, e)
	}
	return page, nil
}

// Events returns every audit event recorded, oldest first.
func (m *Mem) Events() []graph.AuditEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.audit)
}

// Bearer creates a key in keys and returns its Authorization header value.
func Bearer(t testing.TB, keys *identity.KeyService, k identity.NewKey) string {
	t.Helper()
	if k.Owner == "" {
		k.Owner = "test-" + k.Level
	}
	_, secret, err := keys.Create(context.Background(), identity.Principal{}, k)
	if err != nil {
		t.Fatalf("create %s key: %v", k.Level, err)
	}
	return "Bearer " + secret
}
