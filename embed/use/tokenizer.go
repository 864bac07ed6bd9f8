package use

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// wordBoundary is SentencePiece's word-boundary mark (U+2581), which replaces
// spaces and starts every input.
const wordBoundary = "\u2581"

// reservedPieces is how many leading vocabulary entries (unknown, control and
// user-defined symbols) never match input text.
const reservedPieces = 6

// Tokenizer is a SentencePiece unigram tokenizer over a USE vocabulary. It
// reproduces the TF.js Universal Sentence Encoder tokenizer exactly, including
// its quirks: text is NFKC-normalised, matched in UTF-16 code units, ties in
// the Viterbi lattice go to the later candidate, and runs of unknown pieces
// collapse to one id 0. A Tokenizer is immutable and safe for concurrent use.
type Tokenizer struct {
	pieces  map[string]piece // key: UTF-16 code units packed as a string
	lengths []int            // piece length in code units, by id
	maxLen  int
}

type piece struct {
	id    int
	score float64
}

// NewTokenizer builds a tokenizer from (piece, score) pairs in id order, the
// layout of vocab.json.
func NewTokenizer(vocab []VocabEntry) (*Tokenizer, error) {
	if len(vocab) <= reservedPieces {
		return nil, fmt.Errorf("use: tokenizer: %w: vocabulary of %d pieces", ErrBadModel, len(vocab))
	}
	t := &Tokenizer{pieces: make(map[string]piece, len(vocab)), lengths: make([]int, len(vocab))}
	for id, e := range vocab {
		units := utf16.Encode([]rune(e.Piece))
		t.lengths[id] = len(units)
		if id == 0 {
			// The unknown piece stands for exactly one code unit, however
			// it is spelled (USE's vocabulary spells it U+FFFD, length 1).
			t.lengths[id] = 1
		}
		if id < reservedPieces || len(units) == 0 {
			continue
		}
		t.pieces[unitsKey(units)] = piece{id: id, score: e.Score}
		t.maxLen = max(t.maxLen, len(units))
	}
	return t, nil
}

// VocabEntry is one vocabulary piece and its unigram log-probability.
type VocabEntry struct {
	Piece string
	Score float64
}

// UnmarshalJSON reads the ["piece", score] pair form of vocab.json.
func (e *VocabEntry) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("vocabulary entry %s: want [piece, score]", b)
	}
	if err := json.Unmarshal(pair[0], &e.Piece); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &e.Score)
}

// LoadTokenizer reads a vocab.json file.
func LoadTokenizer(path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("use: read vocabulary: %w", err)
	}
	var vocab []VocabEntry
	if err := json.Unmarshal(raw, &vocab); err != nil {
		return nil, fmt.Errorf("use: parse vocabulary: %w", err)
	}
	return NewTokenizer(vocab)
}

func unitsKey(u []uint16) string {
	b := make([]byte, 2*len(u))
	for k, v := range u {
		b[2*k], b[2*k+1] = byte(v>>8), byte(v)
	}
	return string(b)
}

// normalize applies the USE preprocessing: NFKC, then a word-boundary mark
// before the text and in place of every space.
func normalize(text string) string {
	s := norm.NFKC.String(text)
	if s == "" {
		return s
	}
	return wordBoundary + strings.ReplaceAll(s, " ", wordBoundary)
}

// Encode returns the most likely piece ids for text. The empty string yields
// no ids.
func (t *Tokenizer) Encode(text string) []int {
	units := utf16.Encode([]rune(normalize(text)))
	n := len(units)
	if n == 0 {
		return nil
	}
	best := make([]float64, n+1)
	words := make([]int, n+1)
	// Edges are visited by end position, then start position ascending,
	// which is the order the reference implementation walks its lattice.
	// ending[end] lists the candidate pieces ending at end; they are
	// appended in ascending start order.
	ending := make([][]edge, n+1)
	for i := 0; i < n; i++ {
		found := false
		for l := 1; l <= t.maxLen && i+l <= n; l++ {
			if p, ok := t.pieces[unitsKey(units[i:i+l])]; ok {
				ending[i+l] = append(ending[i+l], edge{i, p})
				found = true
			}
		}
		if !found {
			ending[i+1] = append(ending[i+1], edge{i, piece{id: 0}})
		}
	}
	for end := 1; end <= n; end++ {
		for _, e := range ending[end] {
			score := e.p.score + best[e.start]
			// "best == 0" doubles as "unset", as in the reference.
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = e.p.id
			}
		}
	}
	var rev []int
	for pos := n; pos > 0; {
		id := words[pos]
		rev = append(rev, id)
		l := t.lengths[id]
		if l <= 0 {
			l = 1
		}
		pos -= l
	}
	ids := make([]int, 0, len(rev))
	prevUnk := false
	for _, id := range rev {
		if !(prevUnk && id == 0) {
			ids = append(ids, id)
		}
		prevUnk = id == 0
	}
	for a, b := 0, len(ids)-1; a < b; a, b = a+1, b-1 {
		ids[a], ids[b] = ids[b], ids[a]
	}
	return ids
}

// edge is a lattice candidate: a piece starting at start.
type edge struct {
	start int
	p     piece
}
