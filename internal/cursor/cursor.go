// Package cursor seals the page tokens a service hands out as cursors, so
// that a cursor the service did not issue (made up, mistyped, cut short,
// or another list's) is refused at once instead of paging from wherever it
// happens to point.
//
// A sealed cursor is the token and a short digest of it under the list's
// label, base64url-encoded. The digest is a checksum, not a secret: every
// replica reads every other's cursors, and a caller who forges one still
// sees only what the list would show it.
package cursor

import (
	"crypto/sha256"
	"encoding/base64"
)

// check is how many bytes of the digest seal a token.
const check = 8

// Seal returns the cursor of token t in the list named label.
func Seal(label string, t []byte) string {
	h := sha256.New()
	h.Write([]byte(label))
	h.Write([]byte{0})
	h.Write(t)
	sum := h.Sum(nil)
	return base64.RawURLEncoding.EncodeToString(append(append([]byte{}, t...), sum[:check]...))
}

// Open returns the token Seal sealed into c under label, false when c is
// not such a cursor.
func Open(label, c string) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(raw) <= check {
		return nil, false
	}
	t := raw[:len(raw)-check]
	if Seal(label, t) != c {
		return nil, false
	}
	return t, true
}
