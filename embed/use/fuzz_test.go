package use

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzTokenizer encodes arbitrary text with the tiny vocabulary of
// testTokenizer (testdata/fuzz/FuzzTokenizer holds the texts of
// testdata/reference.json). Properties:
//   - every id is one of the vocabulary's, never a reserved one other than
//     the unknown piece 0, and no two unknowns are adjacent;
//   - there are no more ids than UTF-16 code units of the normalised text,
//     and none at all only for the empty text;
//   - without unknowns, the pieces spell the normalised text exactly;
//   - Encode is deterministic.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"hello world", "", " ", "ab", "ﬁle", "ｈｅｌｌｏ", "hello üüü!", "hello😀", "\xff\xfe", "a\u0301b\u2581"} {
		f.Add(s)
	}
	tok, names := testTokenizer(f)
	f.Fuzz(func(t *testing.T, text string) {
		ids := tok.Encode(text)
		normal := normalize(text)
		units := len(utf16.Encode([]rune(normal)))
		if len(ids) > units {
			t.Fatalf("Encode(%q): %d ids for %d code units", text, len(ids), units)
		}
		if (len(ids) == 0) != (units == 0) {
			t.Fatalf("Encode(%q) = %v for %d code units", text, ids, units)
		}
		unknown := false
		var spelled strings.Builder
		for k, id := range ids {
			if id < 0 || id >= len(names) || (id > 0 && id < reservedPieces) {
				t.Fatalf("Encode(%q) = %v: id %d is not a text piece", text, ids, id)
			}
			if id == 0 {
				unknown = true
				if k > 0 && ids[k-1] == 0 {
					t.Fatalf("Encode(%q) = %v: adjacent unknowns", text, ids)
				}
			}
			spelled.WriteString(names[id])
		}
		if !unknown && utf8.ValidString(normal) && spelled.String() != normal {
			t.Fatalf("Encode(%q) spells %q, want %q", text, spelled.String(), normal)
		}
		if again := tok.Encode(text); !slices.Equal(ids, again) {
			t.Fatalf("Encode(%q) = %v, then %v", text, ids, again)
		}
	})
}
