package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// OIDCConfig configures bearer-token (JWT) authentication against an
// OpenID Connect issuer. Claims map to a Principal by configuration.
type OIDCConfig struct {
	// Issuer is the issuer URL; tokens must carry it in "iss".
	Issuer string
	// Audience is the expected "aud" (client id); required.
	Audience string
	// JWKSURL, when set, is where the signing keys are fetched, skipping
	// discovery (/.well-known/openid-configuration).
	JWKSURL string
	// LevelClaim names the claim holding the level (guest|user|admin|owner);
	// DefaultLevel applies when it is absent. A higher level than
	// MaxLevel is capped to MaxLevel.
	LevelClaim   string
	DefaultLevel string
	MaxLevel     string
	// RolesClaim, PermissionsClaim and GroupsClaim name claims holding a
	// list (or a space/comma separated string). An absent groups claim
	// means the default group.
	RolesClaim       string
	PermissionsClaim string
	GroupsClaim      string
	// NameClaim names the claim shown as the principal's name (default "email", then "name").
	NameClaim string
}

// Defaults of OIDCConfig's claim names.
const (
	DefaultLevelClaim       = "toolsmith_level"
	DefaultRolesClaim       = "roles"
	DefaultGroupsClaim      = "groups"
	DefaultPermissionsClaim = "permissions"
)

// Validate names the missing fields.
func (c OIDCConfig) Validate() error {
	v := &fault.ValidationError{}
	if strings.TrimSpace(c.Issuer) == "" {
		v.Add("oidc-issuer", "is required for OIDC")
	}
	if strings.TrimSpace(c.Audience) == "" {
		v.Add("oidc-audience", "is required for OIDC: tokens for other clients must be refused")
	}
	for name, lv := range map[string]string{"oidc-default-level": c.DefaultLevel, "oidc-max-level": c.MaxLevel} {
		if lv != "" && !slices.Contains(access.Levels, lv) {
			v.Add(name, "must be one of %s, got %q", strings.Join(access.Levels, ", "), lv)
		}
	}
	return v.Err()
}

// OIDC verifies JWT bearer tokens: signature against the issuer's JWKS
// (fetched and cached by go-oidc, refreshed on an unknown key id), issuer,
// audience and expiry. It implements TokenVerifier.
type OIDC struct {
	cfg      OIDCConfig
	verifier *oidc.IDTokenVerifier
}

// Issuer is the issuer URL tokens must come from.
func (o *OIDC) Issuer() string { return o.cfg.Issuer }

// NewOIDC builds the verifier. Without JWKSURL it runs discovery against
// the issuer, so the issuer must be reachable.
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.LevelClaim == "" {
		cfg.LevelClaim = DefaultLevelClaim
	}
	if cfg.RolesClaim == "" {
		cfg.RolesClaim = DefaultRolesClaim
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = DefaultGroupsClaim
	}
	if cfg.PermissionsClaim == "" {
		cfg.PermissionsClaim = DefaultPermissionsClaim
	}
	if cfg.DefaultLevel == "" {
		cfg.DefaultLevel = "user"
	}
	if cfg.MaxLevel == "" {
		cfg.MaxLevel = "admin"
	}
	occ := &oidc.Config{ClientID: cfg.Audience}
	if cfg.JWKSURL != "" {
		keys := oidc.NewRemoteKeySet(context.WithoutCancel(ctx), cfg.JWKSURL)
		return &OIDC{cfg: cfg, verifier: oidc.NewVerifier(cfg.Issuer, keys, occ)}, nil
	}
	provider, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("identity: OIDC discovery at %s: %w", cfg.Issuer, err)
	}
	return &OIDC{cfg: cfg, verifier: provider.Verifier(occ)}, nil
}

// Verify checks a token and maps its claims to a Principal. Every failure
// is fault.ErrUnauthenticated saying what was wrong (expired, wrong
// audience, wrong issuer, bad signature, malformed).
func (o *OIDC) Verify(ctx context.Context, token string) (Principal, error) {
	tok, err := o.verifier.Verify(ctx, token)
	if err != nil {
		return Principal{}, fmt.Errorf("bearer token refused: %s: %w", tokenReason(err), fault.ErrUnauthenticated)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return Principal{}, fmt.Errorf("bearer token refused: unreadable claims: %w", fault.ErrUnauthenticated)
	}
	if tok.Subject == "" {
		return Principal{}, fmt.Errorf("bearer token refused: no \"sub\" claim: %w", fault.ErrUnauthenticated)
	}
	p := Principal{Subject: "oidc:" + tok.Subject, Method: MethodOIDC, Level: o.cfg.DefaultLevel}
	if lv, ok := claims[o.cfg.LevelClaim].(string); ok && slices.Contains(access.Levels, strings.ToLower(lv)) {
		p.Level = strings.ToLower(lv)
	}
	if access.LevelRank(p.Level) > access.LevelRank(o.cfg.MaxLevel) {
		p.Level = o.cfg.MaxLevel
	}
	p.Roles = claimList(claims[o.cfg.RolesClaim])
	p.Permissions = claimList(claims[o.cfg.PermissionsClaim])
	if g, ok := claims[o.cfg.GroupsClaim]; ok {
		p.Groups = claimList(g)
		if p.Groups == nil {
			p.Groups = []string{}
		}
	}
	for _, name := range []string{o.cfg.NameClaim, "email", "name", "preferred_username"} {
		if s, ok := claims[name].(string); ok && name != "" && s != "" {
			p.Name = s
			break
		}
	}
	return p, nil
}

// tokenReason turns go-oidc's errors into a short reason.
func tokenReason(err error) string {
	var expired *oidc.TokenExpiredError
	switch msg := err.Error(); {
	case errors.As(err, &expired):
		return "expired at " + expired.Expiry.UTC().Format(time.RFC3339)
	case strings.Contains(msg, "audience"):
		return "wrong audience"
	case strings.Contains(msg, "issuer"), strings.Contains(msg, "different provider"):
		return "wrong issuer"
	case strings.Contains(msg, "signature"):
		return "signature does not verify against the issuer's keys"
	case strings.Contains(msg, "malformed"):
		return "malformed token"
	default:
		return msg
	}
}

// claimList reads a list claim: a JSON array of strings, or one string of
// space- or comma-separated values.
func claimList(v any) []string {
	switch t := v.(type) {
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	case string:
		return splitList(strings.ReplaceAll(t, " ", ","))
	}
	return nil
}
