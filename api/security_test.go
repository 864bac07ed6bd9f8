package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/admin"
	apiretrieval "github.com/toolsmith/toolsmith/api/retrieval"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
	"github.com/toolsmith/toolsmith/retrieval"
)

type reply struct {
	code   int
	header http.Header
	body   map[string]any
	raw    string
}

func send(t *testing.T, h http.Handler, method, path, auth, body string, hdr ...string) reply {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return reply{rec.Code, rec.Header(), m, rec.Body.String()}
}

func TestRateLimitsAndBodySize(t *testing.T) {
	srv, keys, st := fullServer(t)
	_ = st
	h := srv.Handler()
	slow := identitytest.Bearer(t, keys, identity.NewKey{Level: "user", Limits: graph.KeyLimits{SearchPerMinute: 2}})
	other := identitytest.Bearer(t, keys, identity.NewKey{Level: "user"})
	for i := 0; i < 2; i++ {
		if r := send(t, h, "GET", "/api/v1/tools/retrieval/search?q=book", slow, ""); r.code != http.StatusOK {
			t.Fatalf("search %d: %d %s", i, r.code, r.raw)
		}
	}
	r := send(t, h, "GET", "/api/v1/tools/retrieval/search?q=book", slow, "")
	if r.code != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.raw, "search") {
		t.Fatalf("over the key's limit: %d Retry-After=%q %s", r.code, r.header.Get("Retry-After"), r.raw)
	}
	if r := send(t, h, "GET", "/api/v1/tools/retrieval/search?q=book", other, ""); r.code != http.StatusOK {
		t.Fatalf("another key is limited separately: %d", r.code)
	}
	admin := identitytest.Bearer(t, keys, identity.NewKey{Level: "admin"})
	big := `{"manifest": {"description": "` + strings.Repeat("x", 9<<20) + `"}}`
	r = send(t, h, "POST", "/api/v1/tools/register", admin, big)
	if r.code != http.StatusRequestEntityTooLarge || !strings.Contains(r.raw, "bytes") {
		t.Fatalf("oversized body: %d %.300s", r.code, r.raw)
	}
	if n, _ := st.Stats(context.Background()); n.Tools != 0 {
		t.Fatalf("an oversized body wrote %d tools", n.Tools)
	}
}

func TestAdminKeysRoutesAndAudit(t *testing.T) {
	srv, keys, st := fullServer(t)
	h := srv.Handler()
	adminKey := identitytest.Bearer(t, keys, identity.NewKey{Owner: "ops", Level: "admin"})
	r := send(t, h, "POST", "/api/v1/admin/keys", adminKey, `{"owner": "ana", "level": "user", "roles": ["approver"]}`)
	if r.code != http.StatusCreated {
		t.Fatalf("create key: %d %s", r.code, r.raw)
	}
	data := r.body["data"].(map[string]any)
	secret := data["secret"].(string)
	id := data["key"].(map[string]any)["id"].(string)
	if _, ok := data["key"].(map[string]any)["hash"]; ok && data["key"].(map[string]any)["hash"] != "" {
		t.Fatalf("the created key's hash is returned: %s", r.raw)
	}
	if r := send(t, h, "GET", "/api/v1/whoami", "Bearer "+secret, ""); r.code != http.StatusOK || !strings.Contains(r.raw, `"approver"`) {
		t.Fatalf("whoami with the new key: %d %s", r.code, r.raw)
	}
	for _, c := range []struct{ body, field string }{
		{`{"owner": "x", "level": "owner"}`, "level"},
		{`{"owner": "x", "level": "user", "trustedGateway": true}`, "trustedGateway"},
		{`{"level": "user"}`, "owner"},
		{`{"owner": "x", "level": "user", "colour": "red"}`, "colour"},
	} {
		r := send(t, h, "POST", "/api/v1/admin/keys", adminKey, c.body)
		if r.code < 400 || r.code >= 500 || !strings.Contains(r.raw, c.field) {
			t.Errorf("create %s: %d %s, want a 4xx naming %s", c.body, r.code, r.raw, c.field)
		}
	}
	if r := send(t, h, "GET", "/api/v1/admin/keys", adminKey, ""); r.code != http.StatusOK || strings.Contains(r.raw, secret) || !strings.Contains(r.raw, id) {
		t.Fatalf("list keys: %d %s", r.code, r.raw)
	}
	if r := send(t, h, "DELETE", "/api/v1/admin/keys/"+id, adminKey, ""); r.code != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.code, r.raw)
	}
	if r := send(t, h, "GET", "/api/v1/whoami", "Bearer "+secret, ""); r.code != http.StatusUnauthorized || !strings.Contains(r.raw, "revoked") {
		t.Fatalf("a revoked key: %d %s", r.code, r.raw)
	}
	// The audit log holds who did what, filterable and paged.
	r = send(t, h, "GET", "/api/v1/admin/audit?action=admin.keys&limit=1", adminKey, "")
	if r.code != http.StatusOK {
		t.Fatalf("audit: %d %s", r.code, r.raw)
	}
	var page graph.AuditPage
	b, _ := json.Marshal(r.body["data"])
	_ = json.Unmarshal(b, &page)
	if len(page.Items) != 1 || page.Next == "" || page.Items[0].Actor == "" || page.Items[0].RequestID == "" {
		t.Fatalf("audit page: %+v", page)
	}
	if r := send(t, h, "GET", "/api/v1/admin/audit?since=yesterday", adminKey, ""); r.code != http.StatusBadRequest || !strings.Contains(r.raw, "since") {
		t.Fatalf("bad since: %d %s", r.code, r.raw)
	}
	all, _ := st.AuditEvents(context.Background(), graph.AuditQuery{})
	var denied, created, revoked bool
	for _, e := range all.Items {
		switch {
		case e.Action == "admin.keys" && e.Outcome == graph.AuditSuccess:
			created = true
		case e.Action == "admin.keys" && e.Outcome != graph.AuditSuccess:
			denied = true
		case e.Action == "admin.keys.delete":
			revoked = true
		}
	}
	if !created || !denied || !revoked {
		t.Fatalf("audit lacks created=%v refused=%v revoked=%v: %+v", created, denied, revoked, all.Items)
	}
}

func TestGroupSubsetCheck(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "graph.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	keys := identity.NewKeyService(st)
	emb := hashing.New(64)
	_ = st.EnsureEmbedder(context.Background(), graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()})
	h := api.New(api.Options{Auth: &identity.Authenticator{Keys: keys}, Audit: audit.New(st)},
		apiretrieval.New(retrieval.New(st, emb, retrieval.Options{})), admin.New(keys, audit.New(st))).Handler()
	k := identitytest.Bearer(t, keys, identity.NewKey{Level: "user", Groups: []string{"default", "travel"}})
	if r := send(t, h, "GET", "/api/v1/tools/retrieval/search?q=x", k, "", "X-Tool-Groups", "travel"); r.code != http.StatusOK {
		t.Fatalf("a subset: %d %s", r.code, r.raw)
	}
	r := send(t, h, "GET", "/api/v1/tools/retrieval/search?q=x", k, "", "X-Tool-Groups", "travel,finance")
	if r.code != http.StatusForbidden || !strings.Contains(r.raw, "finance") {
		t.Fatalf("groups outside the key: %d %s", r.code, r.raw)
	}
}

// TestGatewayNarrowedLevelIsAuthorized: a trusted gateway speaking for a
// guest end user is refused what a guest is refused,
// though the gateway's own key could do it.
func TestGatewayNarrowedLevelIsAuthorized(t *testing.T) {
	srv, keys, st := fullServer(t)
	h := srv.Handler()
	gw := identitytest.Bearer(t, keys, identity.NewKey{Owner: "portal", Level: "owner", TrustedGateway: true, Groups: []string{"*"}})
	manifest := translateManifest
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/tools/register", manifest},
		{"GET", "/api/v1/admin/audit", ""},
		{"POST", "/api/v1/admin/keys", `{"owner": "mallory", "level": "guest"}`},
		{"GET", "/api/v1/tools/pending", ""},
	} {
		r := send(t, h, c.method, c.path, gw, c.body, identity.HeaderUserID, "ana", identity.HeaderLevel, "guest")
		if r.code != http.StatusForbidden {
			t.Errorf("%s %s for a guest through the gateway: %d %.300s, want 403", c.method, c.path, r.code, r.raw)
		}
	}
	// The gateway acting as itself but narrowed to guest is a guest too.
	if r := send(t, h, "POST", "/api/v1/tools/register", gw, manifest, identity.HeaderLevel, "guest"); r.code != http.StatusForbidden {
		t.Errorf("register by the gateway narrowed to guest: %d %.300s, want 403", r.code, r.raw)
	}
	if n, _ := st.Stats(context.Background()); n.Tools != 0 {
		t.Fatalf("a guest through the gateway registered %d tools", n.Tools)
	}
	if list, _ := keys.List(context.Background()); len(list) != 1 {
		t.Fatalf("a guest through the gateway created a key: %d keys", len(list))
	}
	// Narrowed to admin, the gateway may create keys up to admin only.
	if r := send(t, h, "POST", "/api/v1/admin/keys", gw, `{"owner": "m", "level": "owner"}`, identity.HeaderUserID, "ana", identity.HeaderLevel, "admin"); r.code != http.StatusForbidden {
		t.Errorf("an owner key for an admin through the gateway: %d %.300s, want 403", r.code, r.raw)
	}
	if r := send(t, h, "POST", "/api/v1/admin/keys", gw, `{"owner": "m", "level": "admin"}`, identity.HeaderUserID, "ana", identity.HeaderLevel, "admin"); r.code != http.StatusCreated {
		t.Errorf("an admin key for an admin through the gateway: %d %.300s, want 201", r.code, r.raw)
	}
}

// TestAdminCannotRevokeOwnerKey: revocation follows creation's level rule.
func TestAdminCannotRevokeOwnerKey(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	owner := identitytest.Bearer(t, keys, identity.NewKey{Owner: "root", Level: "owner"})
	adminKey := identitytest.Bearer(t, keys, identity.NewKey{Owner: "ops", Level: "admin"})
	ownerID, _ := identity.ParseSecret(strings.TrimPrefix(owner, "Bearer "))
	adminID, _ := identity.ParseSecret(strings.TrimPrefix(adminKey, "Bearer "))
	if r := send(t, h, "DELETE", "/api/v1/admin/keys/"+ownerID, adminKey, ""); r.code != http.StatusForbidden || !strings.Contains(r.raw, "owner") {
		t.Fatalf("an admin revoking the owner key: %d %s, want 403", r.code, r.raw)
	}
	if r := send(t, h, "GET", "/api/v1/admin/keys", owner, ""); r.code != http.StatusOK {
		t.Fatalf("the owner key after a refused revocation: %d %s", r.code, r.raw)
	}
	if r := send(t, h, "DELETE", "/api/v1/admin/keys/"+adminID, owner, ""); r.code != http.StatusOK {
		t.Fatalf("the owner revoking an admin key: %d %s", r.code, r.raw)
	}
}

// translateManifest is a valid registration of docs/api.md's lang.translate.
const translateManifest = `{"manifest": {"toolId": "lang.translate", "verb": "TRANSLATE_TEXT", "name": "Translate",
	"description": "Translates a text from one language to another language.", "category": "language",
	"inputSchema": {"type": "object", "required": ["text", "to"], "properties": {"text": {"type": "string"}, "to": {"type": "string"}}}}}`
