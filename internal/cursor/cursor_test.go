package cursor

import "testing"

// A sealed cursor opens to its token under its own label only; a made-up,
// mistyped or cut-short cursor does not open.
func TestSealOpen(t *testing.T) {
	c := Seal("tools", []byte("pets.find"))
	if tok, ok := Open("tools", c); !ok || string(tok) != "pets.find" {
		t.Fatalf("open %q: %q %v", c, tok, ok)
	}
	for _, bad := range []string{"", "bad", "%%%", "pets.find", c[:len(c)-2], c + "A"} {
		if tok, ok := Open("tools", bad); ok {
			t.Errorf("%q opened to %q", bad, tok)
		}
	}
	if _, ok := Open("reviews", c); ok {
		t.Error("a cursor opened under another list's label")
	}
}
