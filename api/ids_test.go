package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// TestUnusualIDsAre4xx: path ids Temporal, the file system or the store
// would refuse (NUL, invalid UTF-8, non-ASCII, overlong) are a 400 naming
// the parameter, answered before any backend is reached (noTemporal and
// noEnabler fail the test when reached).
func TestUnusualIDsAre4xx(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Level: "admin", Groups: []string{"*"}})
	for _, id := range []string{"%00", "%ff", "%F0%9F%98%80", "%E4%B8%AD%E6%96%87", "a%20b", strings.Repeat("a", 5000)} {
		for _, c := range []struct{ method, path, param string }{
			{http.MethodGet, "/api/v1/verbs/" + id, "id"},
			{http.MethodGet, "/api/v1/tools/pending/" + id, "id"},
			{http.MethodPost, "/api/v1/tools/pending/" + id + "/approve", "id"},
			{http.MethodPost, "/api/v1/tools/" + id + "/enable", "toolId"},
			{http.MethodGet, "/api/v1/tools/" + id, "toolId"},
			{http.MethodPost, "/api/v1/tools/" + id + "/execute", "toolId"},
			{http.MethodGet, "/api/v1/tools/admin/reindex/" + id, "id"},
		} {
			name := c.method + " " + c.path
			if len(name) > 80 {
				name = name[:80] + "…"
			}
			r := send(t, h, c.method, c.path, admin, `{}`)
			if r.code != http.StatusBadRequest {
				t.Errorf("%s: %d %s, want 400", name, r.code, r.raw)
				continue
			}
			if !strings.Contains(r.raw, `"path":"`+c.param+`"`) {
				t.Errorf("%s: the error does not name %s: %s", name, c.param, r.raw)
			}
		}
	}
}

// TestUnusualGroupHeader: a group name that is not text is a 400 naming
// X-Tool-Groups, not a panic in the metrics labels, even for a key whose
// groups are the wildcard.
func TestUnusualGroupHeader(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Level: "admin", Groups: []string{"*"}})
	for _, g := range []string{"\xff", "a\x00b", strings.Repeat("g", 300)} {
		r := send(t, h, http.MethodGet, "/api/v1/tools/retrieval/search?q=x", admin, "", "X-Tool-Groups", g)
		if r.code != http.StatusBadRequest || !strings.Contains(r.raw, "X-Tool-Groups") {
			t.Errorf("X-Tool-Groups %q: %d %s, want 400 naming the header", g, r.code, r.raw)
		}
	}
	if r := send(t, h, http.MethodGet, "/metrics", admin, ""); r.code != http.StatusOK {
		t.Fatalf("/metrics after odd groups: %d %s", r.code, r.raw)
	}
}
