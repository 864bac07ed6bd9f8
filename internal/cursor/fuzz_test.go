package cursor

import (
	"bytes"
	"testing"
)

// FuzzOpen: Open never panics, accepts only what Seal made under the same
// label, and opens every sealed token to itself.
func FuzzOpen(f *testing.F) {
	for _, seed := range []string{"", "bad", "AAAAAAAAAAAA", Seal("tools", []byte("currency.convert")), Seal("reviews", []byte{0, 1, 2})} {
		f.Add("tools", seed, []byte("x"))
	}
	f.Fuzz(func(t *testing.T, label, c string, token []byte) {
		if got, ok := Open(label, c); ok && Seal(label, got) != c {
			t.Fatalf("Open(%q, %q) accepted a cursor Seal does not make", label, c)
		}
		sealed := Seal(label, token)
		got, ok := Open(label, sealed)
		if len(token) == 0 {
			return // an empty token seals to a bare checksum, which Open refuses
		}
		if !ok || !bytes.Equal(got, token) {
			t.Fatalf("Open(Seal(%q, %q)) = %q, %v", label, token, got, ok)
		}
		if _, ok := Open(label+"x", sealed); ok {
			t.Fatalf("a cursor of list %q opened under another label", label)
		}
	})
}
