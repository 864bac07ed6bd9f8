package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// A query string that does not parse is a 400 naming the parameter whose
// value is broken (or "query" when a name is), on every route that checks
// its parameters: url.Query would drop the pair, and the route would
// answer without the filter (another actor's audit events, the default
// maxTools) or let a misspelt name slip past the unknown-parameter check.
func TestEveryRouteRefusesAQueryThatDoesNotParse(t *testing.T) {
	srv, keys, _ := fullServer(t)
	owner := identitytest.Bearer(t, keys, identity.NewKey{Owner: "root", Level: "owner", Groups: []string{"*"}})
	h := srv.Handler()
	for _, c := range []struct{ path, field string }{
		{"/api/v1/admin/audit?limit=1&actor=key:abc%", "actor"},
		{"/api/v1/tools/retrieval/search?q=convert&maxTools=%zz", "maxTools"},
		{"/api/v1/tools?limt=%zz", "limt"},
		{"/api/v1/tools?li%zzmt=1", "query"},
		{"/api/v1/tools?limit=1;status=active", "query"},
		{"/api/v1/tools/retrieval/search?q=%ff%fe", "q"},         // bytes that are no UTF-8
		{"/api/v1/tools/retrieval/search?q%ff=convert", "query"}, // a name that is none
		{"/api/v1/tools?=%", "query"},                            // a broken value without a name
		{"/api/v1/admin/audit?actor=%00", "actor"},               // a control character in a filter
		{"/api/v1/tools?category=%00", "category"},
		{"/api/v1/tools?category=a%1Bb", "category"},
		{"/api/v1/tools?cat%07=x", "query"},
	} {
		r := send(t, h, http.MethodGet, c.path, owner, "")
		if r.code != http.StatusBadRequest || !strings.Contains(r.raw, `"path":"`+c.field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.path, r.code, r.raw, c.field)
		}
	}
	for _, rt := range srv.Routes() {
		if api.AnyQuery[rt.Method+" "+rt.Path] {
			continue
		}
		if r := send(t, h, rt.Method, concrete(rt.Path)+"?x=%", owner, "{}"); r.code != http.StatusBadRequest || !strings.Contains(r.raw, `"path":"x"`) {
			t.Errorf("%s %s?x=%%: %d %s, want 400 naming x", rt.Method, rt.Path, r.code, r.raw)
		}
	}
	// An escape that parses passes.
	if r := send(t, h, http.MethodGet, "/api/v1/admin/audit?limit=1&actor=key%3Aabc%25", owner, ""); r.code != http.StatusOK {
		t.Errorf("a well-escaped query: %d %s", r.code, r.raw)
	}
	if r := send(t, h, http.MethodGet, "/api/v1/tools/retrieval/search?q=flight%09status%0Anow", owner, ""); r.code != http.StatusOK {
		t.Errorf("tab and newline in a query value: %d %s", r.code, r.raw)
	}
	if r := send(t, h, http.MethodGet, "/api/v1/tools/retrieval/search?q=caf%C3%A9", owner, ""); r.code != http.StatusOK {
		t.Errorf("an escaped UTF-8 query: %d %s", r.code, r.raw)
	}
}

// A huge query value is a 400 naming its parameter whose message quotes a
// short prefix of it, not the value (once in the message and again in the
// field).
func TestErrorsEchoAShortPrefixOfAHugeValue(t *testing.T) {
	srv, keys, _ := fullServer(t)
	owner := identitytest.Bearer(t, keys, identity.NewKey{Owner: "root", Level: "owner", Groups: []string{"*"}})
	h := srv.Handler()
	huge := strings.Repeat("x", 120_000)
	for _, c := range []struct{ path, field string }{
		{"/api/v1/tools?cursor=" + huge, "cursor"},
		{"/api/v1/tools?limit=" + huge, "limit"},
		{"/api/v1/tools?sort=" + huge, "sort"},
		{"/api/v1/tools/retrieval/search?q=convert&maxTools=" + huge, "maxTools"},
		{"/api/v1/admin/audit?before=" + huge, "before"},
	} {
		r := send(t, h, http.MethodGet, c.path, owner, "")
		if r.code != http.StatusBadRequest || !strings.Contains(r.raw, `"path":"`+c.field+`"`) || len(r.raw) > 2000 ||
			!strings.Contains(r.raw, strings.Repeat("x", 64)+"…") {
			t.Errorf("%s=…: %d, %d bytes: %.300s; want a short 400 naming %s", c.field, r.code, len(r.raw), r.raw, c.field)
		}
	}
}
