package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
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
