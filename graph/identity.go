package graph

import (
	"context"
	"fmt"
	"time"
)

// APIKey is a stored API key: the (Key) node of the graph model. The secret
// itself is never stored, only Hash, a hex SHA-256 digest of it; the
// identity package makes secrets, hashes them and checks them.
type APIKey struct {
	// ID is the key's public, non-secret identifier (it is also the first
	// part of the secret, so a presented secret finds its record).
	ID string `json:"id"`
	// Hash is the hex SHA-256 of the whole secret.
	Hash string `json:"hash"`
	// Owner names who the key belongs to (a person, a team, a service).
	Owner string `json:"owner"`
	// Description is free text shown in listings.
	Description string `json:"description,omitempty"`
	// Level is guest, user, admin or owner.
	Level string `json:"level"`
	// Roles and Permissions are what tool permissions (role:X,
	// permission:X) and route rules test.
	Roles       []string `json:"roles,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
	// Groups are the tool groups the key may use: nil means the default
	// group, "*" every group. A request may narrow them, never widen them.
	Groups []string `json:"groups"`
	// Modules, when non-nil, restricts module tools to these modules.
	Modules []string `json:"modules"`
	// TrustedGateway marks a key that may act for its end users through
	// X-User-* headers, within its own limits.
	TrustedGateway bool `json:"trustedGateway,omitempty"`
	// Limits are per-key rate limits; zero fields take the server's defaults.
	Limits KeyLimits `json:"limits"`
	// CreatedBy is the subject that created the key ("" for the first-start key).
	CreatedBy string    `json:"createdBy,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// ExpiresAt is when the key stops working (zero: never).
	ExpiresAt time.Time `json:"expiresAt,omitempty"`
	// RevokedAt is when the key was revoked (zero: not revoked).
	RevokedAt time.Time `json:"revokedAt,omitempty"`
}

// KeyLimits are requests per minute a key may make on the limited route
// classes; 0 takes the server default, a negative value means unlimited.
type KeyLimits struct {
	SearchPerMinute  int `json:"searchPerMinute,omitempty"`
	ExecutePerMinute int `json:"executePerMinute,omitempty"`
	VerbsPerMinute   int `json:"verbsPerMinute,omitempty"`
}

// Keys stores API keys. It is part of Store.
type Keys interface {
	// CreateKey stores a new key; an existing id is ErrConflict (wrapped).
	// ID, Hash, Owner and Level are required (ErrInvalid).
	CreateKey(ctx context.Context, k APIKey) error
	// GetKey returns a key, revoked or not, or ErrNotFound.
	GetKey(ctx context.Context, id string) (APIKey, error)
	// ListKeys returns every key ordered by creation time, then id.
	ListKeys(ctx context.Context) ([]APIKey, error)
	// RevokeKey sets RevokedAt (once: revoking a revoked key keeps the first
	// time). Unknown id: ErrNotFound.
	RevokeKey(ctx context.Context, id string, at time.Time) error
	// RevokedKeys counts the revoked keys. A revocation is never undone
	// and keys are never deleted, so the count only grows: a process that
	// caches verified keys polls it, cheaply, to learn that a key may have
	// been revoked through another process.
	RevokedKeys(ctx context.Context) (int, error)
}

// AuditEvent is one entry of the append-only audit log: who did what, when,
// with which outcome.
type AuditEvent struct {
	// ID orders events: the audit package makes it sortable by time
	// (zero-padded Unix nanoseconds, then a random suffix).
	ID string    `json:"id"`
	At time.Time `json:"at"`
	// Actor is the authenticated subject ("" for an anonymous caller);
	// ActorName is its human name; Method is how it authenticated.
	Actor     string `json:"actor"`
	ActorName string `json:"actorName,omitempty"`
	Method    string `json:"method,omitempty"`
	// Action names what was attempted, e.g. "tools.register",
	// "tools.execute", "airlock.approve", "auth.failed".
	Action string `json:"action"`
	// Tool is the tool (or review, source, key) the action was about.
	Tool string `json:"tool,omitempty"`
	// Outcome is success, denied, failed or error.
	Outcome string `json:"outcome"`
	// Status is the HTTP status (or 0 off HTTP).
	Status    int    `json:"status,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	// Route is the method and route template ("POST /api/v1/tools/register")
	// or the edge's name for the call ("mcp call_tool").
	Route  string `json:"route,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Audit outcomes.
const (
	AuditSuccess = "success"
	AuditDenied  = "denied"
	AuditFailed  = "failed"
	AuditError   = "error"
	// AuditIntent marks a write-ahead record: written before a workflow
	// starts, so a process that dies between starting it and auditing the
	// call still leaves a trace. The call's own record follows it.
	AuditIntent = "intent"
)

// AuditQuery filters and pages the audit log, newest first.
type AuditQuery struct {
	Actor  string    // exact subject; "" = any
	Action string    // exact action; "" = any
	Tool   string    // exact tool/resource; "" = any
	Since  time.Time // inclusive; zero = no bound
	Until  time.Time // exclusive; zero = no bound
	// Before is a cursor: return events whose ID is strictly smaller.
	Before string
	Limit  int // <= 0 means 100; capped at 1000
}

// AuditPage is one page of AuditEvents, newest first.
type AuditPage struct {
	Items []AuditEvent `json:"items"`
	// Next is the cursor (AuditQuery.Before) of the following page, "" on the last.
	Next string `json:"next,omitempty"`
}

// Audit stores the audit log. It is part of Store. The
// log is append-only: there is no update or delete.
type Audit interface {
	// AppendAudit stores events atomically (all or none). Each needs an ID,
	// an Action and an Outcome (ErrInvalid); a repeated ID is ErrConflict.
	AppendAudit(ctx context.Context, events []AuditEvent) error
	// AuditEvents returns matching events, newest (largest ID) first.
	AuditEvents(ctx context.Context, q AuditQuery) (AuditPage, error)
}

// ValidateKey checks what both stores require of a new key: an ID, a Hash,
// an Owner and a Level. Errors wrap ErrInvalid and name the field.
func ValidateKey(k APIKey) error {
	for _, f := range []struct{ name, v string }{{"id", k.ID}, {"hash", k.Hash}, {"owner", k.Owner}, {"level", k.Level}} {
		if f.v == "" {
			return fmt.Errorf("key %s is required: %w", f.name, ErrInvalid)
		}
	}
	return nil
}

// ValidateAuditEvent checks what both stores require of an audit event: an
// ID, an Action and an Outcome. Errors wrap ErrInvalid and name the field.
func ValidateAuditEvent(e AuditEvent) error {
	for _, f := range []struct{ name, v string }{{"id", e.ID}, {"action", e.Action}, {"outcome", e.Outcome}} {
		if f.v == "" {
			return fmt.Errorf("audit event %s is required: %w", f.name, ErrInvalid)
		}
	}
	return nil
}

// AuditLimit is the page size an AuditQuery.Limit asks for: 100 when
// unset, at most 1000.
func AuditLimit(n int) int { return Limit(n, 100, 1000) }
