package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// CookieName is the session cookie.
const CookieName = "toolsmith_session"

// signinCookie carries the sign-in form's CSRF token.
const signinCookie = "toolsmith_signin"

// SessionTTL is how long a session lives without use.
const SessionTTL = 12 * time.Hour

// touchEvery is how stale a session's stored expiry may get before a use
// moves it: the sliding TTL costs a store write at most once a minute per
// session, not one per page.
const touchEvery = time.Minute

// sweepEvery is how often a process sweeps expired sessions from the store.
const sweepEvery = 10 * time.Minute

// session is a signed-in console session as one request sees it. The
// store keeps it under id, the hex SHA-256 of the cookie's token; the
// token itself is kept nowhere but in the browser.
type session struct {
	id string
	// csrf is derived from the token, so every replica computes the same
	// one and the store holds none.
	csrf string
	who  identity.Principal
	// sealKey seals the session's flash (derived from the token, so the
	// store cannot open it); flash is the sealed flash the store holds.
	sealKey [32]byte
	flash   []byte
}

type sessionKey struct{}

func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

func sessionOf(r *http.Request) *session {
	s, _ := r.Context().Value(sessionKey{}).(*session)
	return s
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sessionID is what the store keeps of a token.
func sessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// csrfOf is a session's CSRF token: a digest of its cookie token under
// another label, so it never reveals the token and needs no storage.
func csrfOf(token string) string {
	sum := sha256.Sum256([]byte("toolsmith console csrf\x00" + token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// session reads the request's session from the store: nil when there is
// none, it expired (it is then deleted), or the key it signed in with is
// no longer live (revoked or expired: the session ends with it). A use
// slides its expiry. Only a store failure is an error.
func (c *Console) session(w http.ResponseWriter, r *http.Request) (*session, error) {
	ck, err := r.Cookie(CookieName)
	if err != nil || ck.Value == "" || len(ck.Value) > 100 {
		return nil, nil
	}
	ctx := r.Context()
	id := sessionID(ck.Value)
	rec, err := c.d.Sessions.GetSession(ctx, id)
	if errors.Is(err, fault.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	now := c.now()
	end := func() (*session, error) {
		if err := c.d.Sessions.DeleteSession(ctx, id); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if !now.Before(rec.ExpiresAt) {
		return end()
	}
	var who identity.Principal
	if err := json.Unmarshal(rec.Principal, &who); err != nil {
		return nil, fmt.Errorf("decode session principal: %w", err)
	}
	if rec.KeyID != "" {
		k, err := c.d.Keys.Live(ctx, rec.KeyID)
		if err != nil {
			c.log.InfoContext(ctx, "console: session ended with its key", "key", rec.KeyID, "err", err)
			return end()
		}
		who = identity.KeyPrincipal(k) // the key as it is now (roles may have changed)
	}
	if !rec.NotAfter.IsZero() && !now.Before(rec.NotAfter) {
		return end()
	}
	if next := slide(now, rec.NotAfter); next.Sub(rec.ExpiresAt) >= touchEvery {
		if err := c.d.Sessions.TouchSession(ctx, id, next); errors.Is(err, fault.ErrNotFound) {
			return nil, nil // signed out elsewhere in between
		} else if err != nil {
			return nil, err
		}
	}
	return &session{id: id, csrf: csrfOf(ck.Value), who: who, sealKey: flashKeyOf(ck.Value), flash: rec.Flash}, nil
}

// slide is a session's expiry after a use at now: SessionTTL later, but
// never past notAfter (when set).
func slide(now, notAfter time.Time) time.Time {
	next := now.Add(SessionTTL)
	if !notAfter.IsZero() && notAfter.Before(next) {
		return notAfter
	}
	return next
}

// tokenExpiry is the exp claim of a JWT the authenticator has verified
// (zero when it has none or is no JWT).
func tokenExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(b, &claims) != nil {
		return time.Time{}
	}
	exp, err := claims.Exp.Float64()
	if err != nil || exp <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(exp), 0).UTC()
}

// signinErrorCookie carries a refused sign-in's message to the GET after it.
const signinErrorCookie = "toolsmith_signin_error"

// signInError reads and clears a refused sign-in's message.
func (c *Console) signInError(w http.ResponseWriter, r *http.Request) string {
	ck, err := r.Cookie(signinErrorCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: signinErrorCookie, Value: "", Path: "/ui/signin", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil || len(b) > 1000 {
		return ""
	}
	return string(b)
}

// signInPage renders the sign-in form with a fresh server-issued token
// (see signin.go), kept in a short-lived cookie the form must echo.
func (c *Console) signInPage(w http.ResponseWriter, r *http.Request, code int, msg string) {
	token, err := c.issueSigninToken(r.Context())
	if err != nil {
		c.page(w, r, nil, http.StatusServiceUnavailable, "error", map[string]any{"Title": "Sign-in unavailable",
			"Message": "The console could not issue a sign-in form: " + err.Error(), "Next": "Try again in a moment."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: token, Path: "/ui/signin", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 3600})
	c.page(w, r, nil, code, "signin", map[string]any{"Error": msg, "SigninCSRF": token})
}

// whoamiRoute is the API route sign-in stands for (who a key is).
const whoamiRoute = "/api/v1/whoami"

func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimSpace(r.PostFormValue("key"))
	// A refusal redirects to the sign-in page too (post/redirect/get); no
	// session exists yet, so the message rides in a short-lived cookie.
	fail := func(msg string) {
		http.SetCookie(w, &http.Cookie{Name: signinErrorCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(msg)), Path: "/ui/signin",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 60})
		http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
	}
	switch {
	case key == "":
		fail("Paste an API key (tsk_…) to sign in.")
		return
	case len(key) > 200:
		fail("That is too long to be an API key.")
		return
	}
	ctx := r.Context()
	who, err := c.d.Auth.Authenticate(ctx, "Bearer "+key)
	if err == nil && !who.Authenticated() {
		err = errors.New("it names nobody")
	}
	if err != nil {
		// A refused credential is audited as the API audits one.
		c.d.Gate.RecordAuthFailure(ctx, http.MethodGet, whoamiRoute, err)
		fail("That key was refused: " + c.errorText(r, err))
		return
	}
	principal, err := json.Marshal(who)
	if err != nil {
		fail("The session could not be opened: " + err.Error())
		return
	}
	c.sweep(ctx)
	token, now := randomToken(), c.now()
	rec := graph.ConsoleSession{ID: sessionID(token), KeyID: who.KeyID, Principal: principal, CreatedAt: now.UTC()}
	if who.KeyID == "" {
		// A bearer token (OIDC) is not read again on each use, as a key
		// is: the session ends with the token, or SessionTTL after sign-in
		// when the token says no end.
		rec.NotAfter = tokenExpiry(key)
		if rec.NotAfter.IsZero() {
			rec.NotAfter = now.Add(SessionTTL).UTC()
		}
	}
	rec.ExpiresAt = slide(now, rec.NotAfter).UTC()
	if err := c.d.Sessions.PutSession(ctx, rec); err != nil {
		fail("The session could not be opened: " + c.errorText(r, err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(SessionTTL.Seconds())})
	http.Redirect(w, r, c.home(r.Context(), &session{who: who}), http.StatusSeeOther)
}

// sweep removes expired sessions from the store, at most every
// sweepEvery per process; a failure is logged (the next sign-in retries).
func (c *Console) sweep(ctx context.Context) {
	now := c.now()
	c.mu.Lock()
	due := now.Sub(c.swept) >= sweepEvery
	if due {
		c.swept = now
	}
	c.mu.Unlock()
	if !due {
		return
	}
	if n, err := c.d.Sessions.DeleteExpiredSessions(ctx, now); err != nil {
		c.log.WarnContext(ctx, "console: sweep expired sessions", "err", err)
	} else if n > 0 {
		c.log.InfoContext(ctx, "console: expired sessions swept", "sessions", n)
	}
}

// signOut ends the session in the store, so it ends on every replica.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	if s != nil {
		if err := c.d.Sessions.DeleteSession(r.Context(), s.id); err != nil {
			_, msg := c.problem(r, err)
			c.page(w, r, s, http.StatusServiceUnavailable, "error", map[string]any{"Title": "Sign-out failed", "Message": msg, "Next": "Try again in a moment."})
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/ui", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
}
