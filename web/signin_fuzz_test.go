package web

import (
	"testing"
	"time"
)

// FuzzCheckSigninToken: reading any token never panics; no token, minted
// or made up, passes under a key it was not minted with; a freshly minted
// token passes, and with anything appended it does not.
func FuzzCheckSigninToken(f *testing.F) {
	key, other := []byte("the console's key"), []byte("another replica set's key")
	now := time.Unix(1_764_115_200, 0)
	minted := mintSigninToken(key, now)
	for _, seed := range []string{"", "AAAA", "AAAA.AAAA", ".", minted, minted[:len(minted)-1], minted + "="} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		_ = checkSigninToken(key, token, now)
		if checkSigninToken(other, token, now) == nil {
			t.Fatalf("a token passed under a key it was not minted with: %q", token)
		}
		fresh := mintSigninToken(key, now)
		if err := checkSigninToken(key, fresh, now); err != nil {
			t.Fatalf("a freshly minted token: %v", err)
		}
		if token != "" && checkSigninToken(key, fresh+token, now) == nil {
			t.Fatalf("a minted token with %q appended was accepted", token)
		}
	})
}
