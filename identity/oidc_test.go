package identity_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// issuer is a local OpenID issuer: discovery, a JWKS and a signing key.
type issuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
	kid string
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key, kid: "k1"}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks", "authorization_endpoint": is.srv.URL + "/auth",
			"token_endpoint": is.srv.URL + "/token", "id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &is.key.PublicKey, KeyID: is.kid, Algorithm: "RS256", Use: "sig"}}})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// sign makes a token signed by key (the issuer's unless another is given).
func (is *issuer) sign(t *testing.T, claims map[string]any, key *rsa.PrivateKey) string {
	t.Helper()
	if key == nil {
		key = is.key
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", is.kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (is *issuer) claims(over map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": is.srv.URL, "aud": "toolsmith", "sub": "u-42", "email": "ana@example.com",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"toolsmith_level": "owner", "roles": []string{"approver"}, "groups": "default travel",
	}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func TestOIDCBearerTokens(t *testing.T) {
	is := newIssuer(t)
	ctx := context.Background()
	for _, discovery := range []bool{true, false} {
		cfg := identity.OIDCConfig{Issuer: is.srv.URL, Audience: "toolsmith", MaxLevel: "admin"}
		if !discovery {
			cfg.JWKSURL = is.srv.URL + "/jwks"
		}
		o, err := identity.NewOIDC(ctx, cfg)
		if err != nil {
			t.Fatalf("NewOIDC: %v", err)
		}
		auth := &identity.Authenticator{Keys: identity.NewKeyService(identitytest.NewMem()), Tokens: o}

		p, err := auth.Authenticate(ctx, "Bearer "+is.sign(t, is.claims(nil), nil))
		if err != nil {
			t.Fatalf("valid token: %v", err)
		}
		if p.Subject != "oidc:u-42" || p.Method != identity.MethodOIDC || p.Name != "ana@example.com" ||
			p.Level != "admin" || !slices.Equal(p.Roles, []string{"approver"}) || !slices.Equal(p.Groups, []string{"default", "travel"}) {
			t.Fatalf("principal %+v: want subject oidc:u-42, level capped to admin, roles and groups from claims", p)
		}
		p, err = auth.Authenticate(ctx, "Bearer "+is.sign(t, is.claims(map[string]any{"toolsmith_level": nil, "groups": nil}), nil))
		if err != nil || p.Level != "user" || p.Groups != nil {
			t.Fatalf("token without level and groups: %+v %v (want the default level and the default group)", p, err)
		}

		other, _ := rsa.GenerateKey(rand.Reader, 2048)
		for _, c := range []struct {
			name, token, reason string
		}{
			{"expired", is.sign(t, is.claims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix(), "iat": time.Now().Add(-2 * time.Hour).Unix()}), nil), "expired"},
			{"wrong audience", is.sign(t, is.claims(map[string]any{"aud": "someone-else"}), nil), "audience"},
			{"wrong issuer", is.sign(t, is.claims(map[string]any{"iss": "https://evil.example"}), nil), "issuer"},
			{"wrong signature", is.sign(t, is.claims(nil), other), "signature"},
			{"no subject", is.sign(t, is.claims(map[string]any{"sub": nil}), nil), "sub"},
			{"malformed", "aaa.bbb.ccc", "malformed"},
		} {
			_, err := auth.Authenticate(ctx, "Bearer "+c.token)
			if !errors.Is(err, fault.ErrUnauthenticated) || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("discovery=%v %s: %v, want ErrUnauthenticated saying %q", discovery, c.name, err, c.reason)
			}
			if err != nil && strings.Contains(err.Error(), c.token) {
				t.Errorf("%s: the error echoes the token", c.name)
			}
		}
	}
	// Without an issuer configured, a JWT is refused with a clear reason.
	auth := &identity.Authenticator{Keys: identity.NewKeyService(identitytest.NewMem())}
	if _, err := auth.Authenticate(ctx, "Bearer "+is.sign(t, is.claims(nil), nil)); !errors.Is(err, fault.ErrUnauthenticated) || !strings.Contains(err.Error(), "oidc-issuer") {
		t.Errorf("JWT without OIDC: %v", err)
	}
	if _, err := identity.NewOIDC(ctx, identity.OIDCConfig{Issuer: is.srv.URL}); err == nil || !strings.Contains(err.Error(), "oidc-audience") {
		t.Errorf("NewOIDC without an audience: %v", err)
	}
}
