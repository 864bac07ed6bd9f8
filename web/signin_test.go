package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/identity"
)

func hasSession(w *httptest.ResponseRecorder) bool {
	for _, ck := range w.Result().Cookies() {
		if ck.Name == CookieName && ck.MaxAge >= 0 && ck.Value != "" {
			return true
		}
	}
	return false
}

// The sign-in token is the server's: a value a page of another port sets
// as the cookie and posts in the form (a plain double submit) is a 403
// that says so, as are a token older than an hour and a form posted from
// another origin; a token one replica issued signs in on another.
func TestSignInTokenIsServerIssued(t *testing.T) {
	e := newEnv(t)
	c := e.console()
	post := func(b *browser, tok string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/ui/signin", strings.NewReader(url.Values{"key": {e.admin}, "csrf": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: signinCookie, Value: tok})
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		b.c.ServeHTTP(w, req)
		return w
	}
	b := e.browser(c)
	if w := post(b, "AAAA", nil); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "not issued by this server") || hasSession(w) {
		t.Fatalf("made-up token: %d %s", w.Code, w.Body)
	}
	// A token the server issued signs in, on another replica over the
	// same store too.
	issuedTok := token(t, b.do("GET", "/ui/signin", nil).Body.String())
	other := e.browser(e.console())
	if w := post(other, issuedTok, nil); w.Code != http.StatusSeeOther || !hasSession(w) {
		t.Fatalf("issued token on another replica: %d %s", w.Code, w.Body)
	}
	// A form posted from another origin (another port of the host) is
	// refused even with a good token.
	token2 := token(t, b.do("GET", "/ui/signin", nil).Body.String())
	if w := post(b, token2, map[string]string{"Sec-Fetch-Site": "same-site"}); w.Code != http.StatusForbidden || hasSession(w) {
		t.Fatalf("cross-origin post: %d %s", w.Code, w.Body)
	}
	// An issued token is good for an hour.
	issued := time.Now()
	old := token(t, b.do("GET", "/ui/signin", nil).Body.String())
	c.now = func() time.Time { return issued.Add(signinTokenMaxAge + time.Minute) }
	if w := post(b, old, nil); w.Code != http.StatusForbidden || hasSession(w) {
		t.Fatalf("an hour-old token: %d %s", w.Code, w.Body)
	}
	// A token signed under another secret is refused.
	if w := post(b, mintSigninToken(make([]byte, 32), c.now()), nil); w.Code != http.StatusForbidden {
		t.Fatalf("a token under another secret: %d", w.Code)
	}
}

// Without Sec-Fetch-Site (an older browser, or another client) a sign-in
// form is judged by its Origin, or its Referer when it has no Origin: one
// that is not the server's own origin is the same 403 as a cross-site
// post, even with a token the server issued; the server's own origin, or
// neither header, signs in (the token still checked). Behind a trusted
// proxy the origin is the one its X-Forwarded-Proto and X-Forwarded-Host
// name; a client's own X-Forwarded-* headers count for nothing.
func TestSignInWithoutSecFetchSiteChecksTheOrigin(t *testing.T) {
	e := newEnv(t)
	proxies, err := identity.ParseProxies([]string{"10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.console()
	c.d.Proxies = proxies
	b := e.browser(c)
	post := func(peer string, hdr map[string]string) *httptest.ResponseRecorder {
		t.Helper()
		tok := token(t, b.do("GET", "/ui/signin", nil).Body.String())
		req := httptest.NewRequest("POST", "http://console.test/ui/signin", strings.NewReader(url.Values{"key": {e.admin}, "csrf": {tok}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: signinCookie, Value: tok})
		if peer != "" {
			req.RemoteAddr = peer + ":4711"
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, req)
		return w
	}
	for _, tc := range []struct {
		name string
		peer string
		hdr  map[string]string
		ok   bool
	}{
		{"another origin", "", map[string]string{"Origin": "http://127.0.0.1:9999"}, false},
		{"another port", "", map[string]string{"Origin": "http://console.test:8081"}, false},
		{"another scheme", "", map[string]string{"Origin": "https://console.test"}, false},
		{"an opaque origin", "", map[string]string{"Origin": "null"}, false},
		{"a foreign referer", "", map[string]string{"Referer": "http://127.0.0.1:9999/login.html"}, false},
		{"cross-site, same Origin", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://console.test"}, false},
		{"a client's own forwarded host", "", map[string]string{"Origin": "https://evil.test", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.test"}, false},
		{"the same origin", "", map[string]string{"Origin": "http://console.test"}, true},
		{"the same origin, default port", "", map[string]string{"Origin": "http://CONSOLE.test:80"}, true},
		{"the same referer", "", map[string]string{"Referer": "http://console.test/ui/signin"}, true},
		{"neither header", "", nil, true},
		{"same-origin wins", "", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://console.test"}, true},
		{"behind the trusted proxy", "10.0.0.5", map[string]string{"Origin": "https://tools.example", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "tools.example"}, true},
		{"behind the trusted proxy, another origin", "10.0.0.5", map[string]string{"Origin": "http://127.0.0.1:9999", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "tools.example"}, false},
	} {
		w := post(tc.peer, tc.hdr)
		if tc.ok && (w.Code != http.StatusSeeOther || !hasSession(w)) {
			t.Errorf("%s: %d, want signed in\n%.300s", tc.name, w.Code, w.Body)
		}
		if !tc.ok && (w.Code != http.StatusForbidden || hasSession(w)) {
			t.Errorf("%s: %d, want 403 without a session\n%.300s", tc.name, w.Code, w.Body)
		}
	}
}
