package api_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/ratelimit"
)

// TestGuestLimitsFollowTrustedProxies: behind a trusted reverse proxy each
// guest has its own bucket, named by X-Forwarded-For; without one the
// header claims nothing and every guest from the peer shares a bucket.
func TestGuestLimitsFollowTrustedProxies(t *testing.T) {
	rules := []api.RouteRule{{Method: "GET", Path: "/api/v1/things", Rule: identity.RulePublic, Limit: ratelimit.Search}}
	mount := httpx.MountFunc(func(v1 *gin.RouterGroup) {
		v1.GET("/things", func(c *gin.Context) { httpx.OK(c, http.StatusOK, []string{"a"}) })
	})
	// httptest's requests come from 192.0.2.1.
	trusted, err := identity.ParseProxies([]string{"192.0.2.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	codes := func(p identity.Proxies) []int {
		srv, _ := newServer(t, api.Options{Rules: rules, Proxies: p,
			Limiter: ratelimit.New(ratelimit.Config{SearchPerMinute: 2}, nil)}, mount)
		var out []int
		for _, client := range []string{"198.51.100.1", "198.51.100.1", "203.0.113.9", "198.51.100.1"} {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/things", nil)
			req.Header.Set("X-Forwarded-For", client)
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			out = append(out, rec.Code)
		}
		return out
	}
	if got, want := codes(trusted), []int{200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Fatalf("behind a trusted proxy: %v, want %v (one bucket per forwarded client)", got, want)
	}
	if got, want := codes(identity.Proxies{}), []int{200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("no trusted proxy: %v, want %v (the header names no one)", got, want)
	}
}
