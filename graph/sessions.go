package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"time"
)

// ConsoleSession is a signed-in session of the review console: a
// (ConsoleSession) node. The cookie's token is never stored: ID is the
// hex SHA-256 of it, so a copy of the store signs nobody in. Keeping
// sessions in the store lets every replica (and a restarted process)
// accept a session another one opened, and sign-out anywhere end it
// everywhere.
type ConsoleSession struct {
	// ID is the hex SHA-256 of the session token (64 lower-case hex digits).
	ID string `json:"id"`
	// KeyID is the API key the session signed in with ("" for a bearer
	// token that is no key): the console re-reads that key, so revoking it
	// ends its sessions.
	KeyID string `json:"keyId,omitempty"`
	// Principal is the signed-in identity as its owner (package identity)
	// encodes it; the store keeps it as it is.
	Principal json.RawMessage `json:"principal"`
	CreatedAt time.Time       `json:"createdAt"`
	// ExpiresAt is when the session ends unless it is used (sliding).
	ExpiresAt time.Time `json:"expiresAt"`
	// NotAfter, when set, is when the credential it signed in with ends (a
	// bearer token's expiry): the expiry never slides past it.
	NotAfter time.Time `json:"notAfter,omitzero"`
	// Flash is what one action left for the session's next page, opaque
	// to the store (the console seals it with a key only the session's
	// token gives); nil when there is none. SetSessionFlash replaces it.
	Flash []byte `json:"-"`
}

// Sessions stores console sessions. It is part of Store.
type Sessions interface {
	// PutSession stores a new session. ID must be a hex SHA-256 and
	// ExpiresAt set (ErrInvalid); an existing ID is ErrConflict.
	PutSession(ctx context.Context, s ConsoleSession) error
	// GetSession returns a session, expired or not (the caller decides by
	// its clock), or ErrNotFound.
	GetSession(ctx context.Context, id string) (ConsoleSession, error)
	// TouchSession moves a session's expiry to expiresAt (a sliding TTL);
	// unknown id: ErrNotFound.
	TouchSession(ctx context.Context, id string, expiresAt time.Time) error
	// SetSessionFlash replaces a session's flash (nil clears it); unknown
	// id: ErrNotFound. At most MaxSessionFlash bytes (ErrInvalid).
	SetSessionFlash(ctx context.Context, id string, flash []byte) error
	// DeleteSession removes a session; an unknown id is no error (signing
	// out twice is fine).
	DeleteSession(ctx context.Context, id string) error
	// DeleteExpiredSessions removes every session whose expiry is at or
	// before now and says how many it removed.
	DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error)
}

var sessionIDRe = regexp.MustCompile(`^[0-9a-f]{64}$`)

// MaxSessionFlash bounds a session's flash.
const MaxSessionFlash = 64 << 10

// ValidateFlash checks a flash before it is stored.
func ValidateFlash(flash []byte) error {
	if len(flash) > MaxSessionFlash {
		return fmt.Errorf("session flash: %d bytes, over %d: %w", len(flash), MaxSessionFlash, ErrInvalid)
	}
	return nil
}

// ValidateSession checks a session before it is stored.
func ValidateSession(s ConsoleSession) error {
	switch {
	case !sessionIDRe.MatchString(s.ID):
		return fmt.Errorf("session id must be a hex SHA-256 of the token: %w", ErrInvalid)
	case s.ExpiresAt.IsZero():
		return fmt.Errorf("session %s…: expiresAt is required: %w", s.ID[:8], ErrInvalid)
	case len(s.Principal) == 0 || !json.Valid(s.Principal):
		return fmt.Errorf("session %s…: principal must be JSON: %w", s.ID[:8], ErrInvalid)
	}
	return ValidateFlash(s.Flash)
}
