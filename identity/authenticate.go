package identity

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// TokenVerifier verifies a bearer token that is not an API key (an OIDC ID
// or access token) and returns its principal; see OIDC.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (Principal, error)
}

// Authenticator turns an Authorization header into a Principal.
type Authenticator struct {
	// Keys verifies API keys; required.
	Keys *KeyService
	// Tokens verifies other bearer tokens (OIDC/JWT); nil refuses them.
	Tokens TokenVerifier
}

// Authenticate returns the principal of an Authorization header value. An
// empty value is the anonymous guest. Anything else must be a valid
// "Bearer <credential>": an API key (tsk_…) or, when Tokens is set, a JWT.
// Every failure is fault.ErrUnauthenticated with a message that says what
// is wrong and never echoes the credential.
func (a *Authenticator) Authenticate(ctx context.Context, authorization string) (Principal, error) {
	authorization = strings.TrimSpace(authorization)
	if authorization == "" {
		return Anonymous(), nil
	}
	scheme, cred, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Principal{}, fmt.Errorf("the Authorization header must be \"Bearer <credential>\": %w", fault.ErrUnauthenticated)
	}
	cred = strings.TrimSpace(cred)
	if cred == "" {
		return Principal{}, fmt.Errorf("the Authorization header has an empty bearer credential: %w", fault.ErrUnauthenticated)
	}
	if strings.HasPrefix(cred, SecretPrefix) {
		k, err := a.Keys.Verify(ctx, cred)
		if err != nil {
			return Principal{}, err
		}
		return KeyPrincipal(k), nil
	}
	if strings.Count(cred, ".") == 2 {
		if a.Tokens == nil {
			return Principal{}, fmt.Errorf("bearer tokens (JWT) are not accepted: no OIDC issuer is configured (--oidc-issuer); use an API key: %w", fault.ErrUnauthenticated)
		}
		return a.Tokens.Verify(ctx, cred)
	}
	return Principal{}, fmt.Errorf("malformed bearer credential: want an API key (%s…) or a JWT: %w", SecretPrefix, fault.ErrUnauthenticated)
}
