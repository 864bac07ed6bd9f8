package api_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// HEAD on a GET route answers as the GET does, without the body (health
// checks and link checkers send it); on a route without GET it is a 405
// whose Allow lists the route's methods.
func TestHeadAnswersLikeGet(t *testing.T) {
	srv, keys, _ := fullServer(t)
	h := srv.Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Owner: "op", Level: "admin"})
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/healthz", "", http.StatusOK},
		{"/api/v1", "", http.StatusOK},
		{"/api/v1/tools?limit=1", "", http.StatusOK},
		{"/api/v1/admin/keys", "", http.StatusUnauthorized},
		{"/api/v1/admin/keys", admin, http.StatusOK},
	} {
		get := send(t, h, http.MethodGet, c.path, c.auth, "")
		req := httptest.NewRequest(http.MethodHead, c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want || get.code != c.want || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") == "" {
			t.Errorf("HEAD %s: %d (GET %d), body %q, Content-Type %q; want %d, no body", c.path, rec.Code, get.code, rec.Body, rec.Header().Get("Content-Type"), c.want)
		}
	}
	req := httptest.NewRequest(http.MethodHead, "/api/v1/verbs", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Header().Get("Allow"), http.MethodPost) {
		t.Errorf("HEAD on a POST route: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

// The served server (not only its Handler) answers HEAD.
func TestServeAnswersHead(t *testing.T) {
	srv, _, _ := fullServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	resp, err := http.Head("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD /healthz over the network: %d", resp.StatusCode)
	}
}
