package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
)

// TestMCPSignInFailureIsReadable: a bad key at /mcp is a 401 whose
// WWW-Authenticate names the protected resource metadata (RFC 9728) and
// the failure (RFC 6750 invalid_token), with the message in a JSON body;
// the metadata says API keys are the only way in. Both URLs are built from
// the server's configured base URL (http://ts.example here), not from the
// request's Host header: a request to evil.example must not echo it.
func TestMCPSignInFailureIsReadable(t *testing.T) {
	srv, _, _ := fullServer(t)
	h := srv.Handler()
	r := send(t, h, http.MethodPost, "http://evil.example/mcp", "Bearer tsk_k000000000000_"+strings.Repeat("A", 43),
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "Accept", "application/json, text/event-stream")
	if r.code != http.StatusUnauthorized {
		t.Fatalf("bad key at /mcp: %d %s", r.code, r.raw)
	}
	www := r.header.Get("WWW-Authenticate")
	for _, want := range []string{`Bearer `, `resource_metadata="http://ts.example/.well-known/oauth-protected-resource"`, `error="invalid_token"`, `error_description="`} {
		if !strings.Contains(www, want) {
			t.Errorf("WWW-Authenticate %q lacks %s", www, want)
		}
	}
	if strings.Contains(www, "evil.example") {
		t.Errorf("WWW-Authenticate %q echoes the request's Host", www)
	}
	msg, _ := r.body["error"].(map[string]any)["message"].(string)
	if msg == "" || !strings.Contains(www, msg[:min(len(msg), 20)]) {
		t.Errorf("the JSON body's message %q should be the error_description of %q", msg, www)
	}

	// No credential on a route that needs one: a challenge without an error code.
	r = send(t, h, http.MethodGet, "http://evil.example/api/v1/admin/keys", "", "")
	if www := r.header.Get("WWW-Authenticate"); r.code != http.StatusUnauthorized || !strings.Contains(www, `resource_metadata="http://ts.example/`) || strings.Contains(www, "error=") {
		t.Errorf("no credential: %d, WWW-Authenticate %q", r.code, www)
	}

	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		r = send(t, h, http.MethodGet, "http://evil.example"+path, "", "")
		var md identity.ResourceMetadata
		if err := json.Unmarshal([]byte(r.raw), &md); r.code != http.StatusOK || err != nil {
			t.Fatalf("%s: %d %s", path, r.code, r.raw)
		}
		wantRes := "http://ts.example" + strings.TrimPrefix(path, "/.well-known/oauth-protected-resource")
		if md.Resource != wantRes || len(md.AuthorizationServers) != 0 || len(md.BearerMethodsSupported) != 1 ||
			md.BearerMethodsSupported[0] != "header" || !strings.Contains(md.Description, "API keys are the only way") {
			t.Errorf("%s without OIDC: %+v", path, md)
		}
	}
}

// TestResourceMetadataNamesTheOIDCIssuer: with OIDC configured the
// metadata lists its issuer as the authorization server.
func TestResourceMetadataNamesTheOIDCIssuer(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	o, err := identity.NewOIDC(context.Background(), identity.OIDCConfig{Issuer: "https://id.example", Audience: "toolsmith", JWKSURL: "https://id.example/jwks"})
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(api.Options{Auth: &identity.Authenticator{Keys: identity.NewKeyService(st), Tokens: o}}).Handler()
	r := send(t, h, http.MethodGet, "https://ts.example/.well-known/oauth-protected-resource", "", "")
	var md identity.ResourceMetadata
	if err := json.Unmarshal([]byte(r.raw), &md); r.code != http.StatusOK || err != nil {
		t.Fatalf("%d %s", r.code, r.raw)
	}
	if len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != "https://id.example" || !strings.Contains(md.Description, "https://id.example") {
		t.Errorf("with OIDC: %+v", md)
	}
}
