package use

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// testTokenizer builds a tokenizer over a tiny vocabulary in vocab.json
// layout: six reserved entries, then pieces with log-probabilities. The
// expectations in TestTokenizerEncode were checked against the TF.js USE
// tokenizer given the same vocabulary.
func testTokenizer(t testing.TB) (*Tokenizer, []string) {
	t.Helper()
	raw := `[["<unk>",0],["<s>",0],["</s>",0],["x1",0],["x2",0],["x3",0],
	 ["▁hello",-1],["▁he",-2],["llo",-2],["▁",-3],["h",-5],["e",-5],["l",-5],["o",-5],
	 ["▁ab",-2],["▁a",-1],["b",-1],["fi",-1],["▁file",-1.5],["▁world",-1],["!",-2],["😀",-1]]`
	var vocab []VocabEntry
	if err := json.Unmarshal([]byte(raw), &vocab); err != nil {
		t.Fatal(err)
	}
	tok, err := NewTokenizer(vocab)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(vocab))
	for k, e := range vocab {
		names[k] = e.Piece
	}
	return tok, names
}

func TestTokenizerEncode(t *testing.T) {
	tok, names := testTokenizer(t)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"best path", "hello", []string{"▁hello"}},
		{"spaces become boundaries", "hello world", []string{"▁hello", "▁world"}},
		{"double space", "hello  world", []string{"▁hello", "▁", "▁world"}},
		{"empty", "", nil},
		{"single space", " ", []string{"▁", "▁"}},
		// "▁ab" (-2) ties with "▁a"+"b" (-1-1): the candidate visited last,
		// the one starting later, wins as in the reference.
		{"tie goes to later start", "ab", []string{"▁a", "b"}},
		// NFKC folds the ligature and full-width letters.
		{"nfkc ligature", "ﬁle", []string{"▁file"}},
		{"nfkc fullwidth", "ｈｅｌｌｏ", []string{"▁hello"}},
		// Unknown characters map to id 0 and runs of them collapse.
		{"unknown", "hello ü", []string{"▁hello", "▁", "<unk>"}},
		{"unknown run", "hello üüü!", []string{"▁hello", "▁", "<unk>", "!"}},
		// Matching is over UTF-16 code units and unknown units score 0,
		// better than any real piece: an astral character not in the
		// vocabulary is two unknowns collapsed into one, and even one in it
		// loses to the unknown edge from its low surrogate, as in TF.js.
		{"astral known", "hello😀", []string{"▁hello", "<unk>"}},
		{"astral known alone", "😀", []string{"▁", "<unk>"}},
		{"astral unknown", "hello🚀", []string{"▁hello", "<unk>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ids := tok.Encode(tc.in)
			var got []string
			for _, id := range ids {
				got = append(got, names[id])
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Fatalf("Encode(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNewTokenizerRejectsTinyVocab(t *testing.T) {
	if _, err := NewTokenizer(make([]VocabEntry, 3)); err == nil {
		t.Fatal("a vocabulary with only reserved entries was accepted")
	}
	var e VocabEntry
	if err := json.Unmarshal([]byte(`["a"]`), &e); err == nil {
		t.Fatal("malformed vocabulary entry accepted")
	}
}

// TestTokenizerRealVocab checks tricky inputs against ids recorded from the
// TF.js tokenizer (see testdata/reference.json), using the real vocabulary.
func TestTokenizerRealVocab(t *testing.T) {
	dir := modelDir(t)
	tok, err := LoadTokenizer(filepath.Join(dir, "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range loadReference(t).Cases {
		if got := tok.Encode(c.Text); fmt.Sprint(got) != fmt.Sprint(c.Tokens) {
			t.Errorf("Encode(%q):\n got %v\nwant %v", c.Text, got, c.Tokens)
		}
	}
}
