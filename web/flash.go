package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// flashData is one POST's result for the page at Path: its messages, the
// form to refill and a new key (whose secret is one of the messages).
type flashData struct {
	Path    string              `json:"path"`
	Strings map[string]string   `json:"strings,omitempty"`
	Lists   map[string][]string `json:"lists,omitempty"`
	Form    url.Values          `json:"form,omitempty"`
	Created *keyRow             `json:"created,omitempty"`
}

// flashKeyOf is the key that seals a session's flash: a digest of its
// cookie token under its own label. The store never sees the token, so it
// cannot open what it keeps (a new key's secret may be in it).
func flashKeyOf(token string) [32]byte {
	return sha256.Sum256([]byte("toolsmith console flash\x00" + token))
}

// seal encrypts and authenticates b for the session (AES-256-GCM, bound to
// the session's id): nonce, then ciphertext.
func seal(s *session, b []byte) ([]byte, error) {
	aead, err := sessionAEAD(s)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(b)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, b, []byte(s.id)), nil
}

// open is seal's inverse; anything not sealed for this session fails.
func open(s *session, sealed []byte) ([]byte, error) {
	aead, err := sessionAEAD(s)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("sealed flash too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(s.id))
}

func sessionAEAD(s *session) (cipher.AEAD, error) {
	block, err := aes.NewCipher(s.sealKey[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// putFlash seals data for the page at path into the session in the store.
func (c *Console) putFlash(r *http.Request, s *session, path string, data map[string]any) error {
	f := flashData{Path: path, Strings: map[string]string{}, Lists: map[string][]string{}}
	for k, v := range data {
		switch x := v.(type) {
		case string:
			f.Strings[k] = x
		case []string:
			f.Lists[k] = x
		case url.Values:
			if k != "Form" {
				return fmt.Errorf("console: flash %q: only Form holds a form", k)
			}
			f.Form = x
		case keyRow:
			if k != "Created" {
				return fmt.Errorf("console: flash %q: only Created holds a key", k)
			}
			f.Created = &x
		default:
			return fmt.Errorf("console: flash %q: cannot keep a %T", k, v)
		}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("console: flash: %w", err)
	}
	sealed, err := seal(s, b)
	if err != nil {
		return fmt.Errorf("console: seal flash: %w", err)
	}
	return c.d.Sessions.SetSessionFlash(r.Context(), s.id, sealed)
}

// takeFlash returns the session's flash when it is for this page, and
// clears it from the store (a flash for another page is kept for it; one
// that does not open is dropped).
func (c *Console) takeFlash(r *http.Request, s *session) map[string]any {
	b, err := open(s, s.flash)
	var f flashData
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err == nil && f.Path != r.URL.Path {
		return nil
	}
	if cerr := c.d.Sessions.SetSessionFlash(r.Context(), s.id, nil); cerr != nil {
		c.log.WarnContext(r.Context(), "console: clear the session's flash", "err", cerr)
	}
	s.flash = nil
	if err != nil {
		c.log.WarnContext(r.Context(), "console: a session's flash does not open; dropped", "err", err)
		return nil
	}
	out := map[string]any{}
	for k, v := range f.Strings {
		out[k] = v
	}
	for k, v := range f.Lists {
		out[k] = v
	}
	if f.Form != nil {
		out["Form"] = f.Form
	}
	if f.Created != nil {
		out["Created"] = *f.Created
	}
	return out
}
