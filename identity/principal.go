package identity

import (
	"context"
	"slices"

	"github.com/toolsmith/toolsmith/access"
)

// Authentication methods of a Principal.
const (
	MethodAnonymous = "anonymous"
	MethodAPIKey    = "api-key"
	MethodOIDC      = "oidc"
)

// Principal is who a request acts as, after authentication: everything a
// credential allows. The zero value is an anonymous guest.
type Principal struct {
	// Subject identifies the principal: "key:<id>" for an API key, the
	// token's "sub" claim (prefixed "oidc:") for a bearer token, "" when
	// anonymous. It is what audit records and reviews name.
	Subject string `json:"subject"`
	// Name is the human name: a key's owner, a token's name or email.
	Name string `json:"name,omitempty"`
	// Method is MethodAnonymous, MethodAPIKey or MethodOIDC.
	Method string `json:"method"`
	// KeyID is the API key's id (MethodAPIKey only).
	KeyID string `json:"keyId,omitempty"`
	// Level is guest, user, admin or owner.
	Level       string   `json:"level"`
	Roles       []string `json:"roles,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
	// Groups are the tool groups the credential allows: nil means the
	// default group, "*" every group.
	Groups []string `json:"groups"`
	// Modules, when non-nil, restricts module tools to these modules.
	Modules []string `json:"modules"`
	// TrustedGateway lets the principal act for end users (X-User-*).
	TrustedGateway bool `json:"trustedGateway,omitempty"`
	// Limits are the principal's rate limits per minute (0 = server default,
	// negative = unlimited).
	Limits Limits `json:"limits"`
}

// Limits are requests per minute on the limited route classes.
type Limits struct {
	Search  int `json:"searchPerMinute,omitempty"`
	Execute int `json:"executePerMinute,omitempty"`
	Verbs   int `json:"verbsPerMinute,omitempty"`
}

// Anonymous is the principal of a request without a credential.
func Anonymous() Principal {
	return Principal{Method: MethodAnonymous, Level: access.Levels[0]}
}

// Authenticated reports whether a credential identified the principal.
func (p Principal) Authenticated() bool { return p.Subject != "" }

// AtLeast reports whether the principal's level is level or higher.
func (p Principal) AtLeast(level string) bool {
	return access.LevelRank(p.Level) >= access.LevelRank(level)
}

// HasRole reports whether the principal has role r.
func (p Principal) HasRole(r string) bool { return slices.Contains(p.Roles, r) }

// HasPermission reports whether the principal has permission perm.
func (p Principal) HasPermission(perm string) bool { return slices.Contains(p.Permissions, perm) }

// Caller is the access.Caller of the principal with everything its
// credential allows and nothing narrowed (no request headers applied).
func (p Principal) Caller() access.Caller {
	return access.Caller{
		UserID:         p.Subject,
		Roles:          slices.Clone(p.Roles),
		Permissions:    slices.Clone(p.Permissions),
		Level:          p.Level,
		Groups:         cloneNil(p.Groups),
		AllowedModules: cloneNil(p.Modules),
	}
}

// Acting is the principal as the narrowed caller c acts: a trusted
// gateway speaking for an end user (X-User-ID, X-Permission-Level,
// X-User-Roles, X-User-Permissions) has that user's level, roles and
// permissions, which may only be lower than the gateway's own. Route rules
// and key management are checked against it, so a narrowed level is the
// one authorized. For any other principal it is p unchanged.
func (p Principal) Acting(c access.Caller) Principal {
	if c.Level != "" {
		p.Level = c.Level
	}
	p.Roles, p.Permissions = cloneNil(c.Roles), cloneNil(c.Permissions)
	return p
}

// cloneNil clones s, keeping the difference between nil and empty.
func cloneNil(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string{}, s...)
}

type ctxKey struct{}

type ctxValue struct {
	p Principal
	c access.Caller
}

// NewContext returns ctx carrying the request's principal and its narrowed
// caller (see Narrow).
func NewContext(ctx context.Context, p Principal, c access.Caller) context.Context {
	return context.WithValue(ctx, ctxKey{}, ctxValue{p: p, c: c})
}

// FromContext returns the principal and caller NewContext stored; ok is
// false when none was stored (then the anonymous principal and a guest
// caller are returned, never more).
func FromContext(ctx context.Context) (p Principal, c access.Caller, ok bool) {
	v, ok := ctx.Value(ctxKey{}).(ctxValue)
	if !ok {
		return Anonymous(), access.Caller{}, false
	}
	return v.p, v.c, true
}
