package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// The sign-in form's token is issued by the server, not made up by the
// browser: a random nonce and the time it was issued, with an HMAC-SHA256
// under a secret every replica shares (kept in the store), valid for
// signinTokenMaxAge. A cookie another page of the same host (another
// port) sets to a value of its own choosing is refused, as is a form
// posted from another origin.
const (
	signinSecretSnapshot = "console-signin-secret"
	signinTokenMaxAge    = time.Hour
	signinTokenSkew      = time.Minute
	signinMACContext     = "toolsmith console sign-in\x00"
)

// errSigninToken is a sign-in token this server did not issue, or one too
// old to accept.
var errSigninToken = errors.New("the sign-in form's security token was not issued by this server or is older than an hour")

// signinSecret returns the secret sign-in tokens are signed with: the
// store's, made on first use. fresh reads the store again (another replica
// may have made it first).
func (c *Console) signinSecret(ctx context.Context, fresh bool) ([]byte, error) {
	c.mu.Lock()
	cached := c.signinKey
	c.mu.Unlock()
	if cached != nil && !fresh {
		return cached, nil
	}
	snap, err := c.d.Store.GetSnapshot(ctx, signinSecretSnapshot)
	if errors.Is(err, fault.ErrNotFound) {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		if err = c.d.Store.PutSnapshot(ctx, graph.Snapshot{Name: signinSecretSnapshot, At: c.now().UTC(), Data: []byte(`"` + base64.RawStdEncoding.EncodeToString(b) + `"`)}); err != nil {
			return nil, fmt.Errorf("web: store the sign-in secret: %w", err)
		}
		// Read it back: when two replicas make one at once, both then use
		// the one the store kept.
		snap, err = c.d.Store.GetSnapshot(ctx, signinSecretSnapshot)
	}
	if err != nil {
		return nil, fmt.Errorf("web: read the sign-in secret: %w", err)
	}
	key, err := base64.RawStdEncoding.DecodeString(strings.Trim(string(snap.Data), `"`))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("web: the stored sign-in secret is malformed")
	}
	c.mu.Lock()
	c.signinKey = key
	c.mu.Unlock()
	return key, nil
}

// signinMAC is the token's MAC over its nonce and issue time.
func signinMAC(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signinMACContext))
	m.Write(body)
	return m.Sum(nil)
}

// mintSigninToken issues a sign-in token at now.
func mintSigninToken(key []byte, now time.Time) string {
	body := make([]byte, 24)
	_, _ = rand.Read(body[:16])
	binary.BigEndian.PutUint64(body[16:], uint64(now.Unix()))
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(signinMAC(key, body))
}

// checkSigninToken accepts a token minted under key no longer than
// signinTokenMaxAge before now.
func checkSigninToken(key []byte, token string, now time.Time) error {
	b64body, b64mac, ok := strings.Cut(token, ".")
	// Only the base64url alphabet: the decoder skips '\r' and '\n', which
	// would let one token be sent in many spellings.
	if !ok || len(token) > 200 || strings.ContainsFunc(b64body+b64mac, func(r rune) bool { return !isBase64URL(r) }) {
		return errSigninToken
	}
	body, err1 := base64.RawURLEncoding.DecodeString(b64body)
	mac, err2 := base64.RawURLEncoding.DecodeString(b64mac)
	if err1 != nil || err2 != nil || len(body) != 24 || !hmac.Equal(mac, signinMAC(key, body)) {
		return errSigninToken
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(body[16:])), 0)
	if now.Sub(issued) > signinTokenMaxAge || issued.Sub(now) > signinTokenSkew {
		return errSigninToken
	}
	return nil
}

// isBase64URL reports a character of the unpadded base64url alphabet.
func isBase64URL(r rune) bool {
	return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_'
}

// issueSigninToken mints a token for the sign-in form.
func (c *Console) issueSigninToken(ctx context.Context) (string, error) {
	key, err := c.signinSecret(ctx, false)
	if err != nil {
		return "", err
	}
	return mintSigninToken(key, c.now()), nil
}

// verifySigninToken checks a posted sign-in token (with the store's
// secret read again once, should another replica have made it).
func (c *Console) verifySigninToken(ctx context.Context, token string) error {
	key, err := c.signinSecret(ctx, false)
	if err != nil {
		return err
	}
	if err := checkSigninToken(key, token, c.now()); err == nil {
		return nil
	}
	if key, err = c.signinSecret(ctx, true); err != nil {
		return err
	}
	return checkSigninToken(key, token, c.now())
}

// crossOrigin reports whether a form post came from a page of another
// origin (another port of the same host included). The browser's
// Sec-Fetch-Site header says so when it is sent (it judges by the address
// the browser sees, so a reverse proxy does not change it). Without it
// (an older browser, or a client that is not a browser) the Origin header
// is compared with the request's own origin, as identity.Proxies.Origin
// reads it (a trusted proxy's X-Forwarded-Proto and X-Forwarded-Host
// count); without an Origin, the Referer's origin is. A request with none
// of the three passes, the token still checked. An Origin of "null" (an
// opaque origin: a sandboxed frame, a file) or one that does not parse is
// another origin.
func (c *Console) crossOrigin(r *http.Request) bool {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "":
	case "same-origin", "none":
		return false
	default:
		return true
	}
	from := r.Header.Get("Origin")
	if from == "" {
		from = r.Header.Get("Referer")
	}
	if from == "" {
		return false
	}
	u, err := url.Parse(from)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return true
	}
	return identity.OriginOf(u.Scheme, u.Host) != c.d.Proxies.Origin(r)
}
