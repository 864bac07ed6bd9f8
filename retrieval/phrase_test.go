package retrieval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
)

func TestPhrases(t *testing.T) {
	tests := []struct {
		text string
		size int
		want []string
	}{
		{"convert money to another currency", 3, nil}, // 5 words: the query is a phrase
		{"one two three four five", 3, nil},           // size+2 words: still none
		{"one two three four five six", 3, []string{"one two three", "two three four", "three four five", "four five six"}},
		{"one two three four five six seven eight nine ten eleven", 9, nil}, // size+2 words: still none
		{`"one two three four five six seven eight nine ten eleven"`, 8, []string{
			"one two three four five six seven eight", "four five six seven eight nine ten eleven",
		}},
		{"a b c d e f g h i j k", 4, []string{"a b c d", "c d e f", "e f g h", "g h i j", "h i j k"}},
		{"a b c d e f g h i j", 0, nil},
		{"a b c d e f g h i j", -1, nil},
	}
	for _, tc := range tests {
		if got := phrases(tc.text, tc.size); !slices.Equal(got, tc.want) {
			t.Errorf("phrases(%q, %d) = %q, want %q", tc.text, tc.size, got, tc.want)
		}
	}
	// A long query: at most MaxPhrases windows, still from its first word
	// to its last, none longer than the window.
	for _, n := range []int{18, 19, 26, 27, 40, 60, 65, 66, 67, 100, 200, 1000} {
		words := make([]string, n)
		for i := range words {
			words[i] = fmt.Sprintf("w%d", i)
		}
		got := phrases(strings.Join(words, " "), 3)
		if len(got) > MaxPhrases || len(got) < 2 {
			t.Fatalf("%d words: %d phrases", n, len(got))
		}
		if !strings.HasPrefix(got[0], "w0 ") || !strings.HasSuffix(got[len(got)-1], fmt.Sprintf(" w%d", n-1)) {
			t.Fatalf("%d words: phrases %q do not span the query", n, got)
		}
		for _, p := range got {
			if len(strings.Fields(p)) != 3 {
				t.Fatalf("%d words: phrase %q", n, p)
			}
		}
	}
	// MaxPhrases+2 words are the longest query whose 3-word windows stay one
	// word apart.
	words := make([]string, MaxPhrases+2)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	if got := phrases(strings.Join(words, " "), 3); len(got) != MaxPhrases || got[1] != "w1 w2 w3" {
		t.Fatalf("%d words: %d phrases %q, want %d one word apart", len(words), len(got), got, MaxPhrases)
	}
}

// vecEmbedder returns fixed vectors by text and counts what it embeds.
type vecEmbedder struct {
	vecs  map[string][]float32
	calls int
}

func (e *vecEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	e.calls++
	return e.vecs[text], nil
}

func (e *vecEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, x := range texts {
		out[i], _ = e.EmbedQuery(ctx, x)
	}
	return out, nil
}

// TestAddPhrasesCentred checks the phrase signal against its definition:
// the largest centred cosine cos(p, t − m) over the query's phrases p, and
// that a phrase is embedded once (the query-embedding cache).
func TestAddPhrasesCentred(t *testing.T) {
	st := meanStore{vecs: map[string][]float32{
		"a": {1, 0.2, 0}, "b": {1, 0, 0.3}, "c": {1, -0.2, -0.3},
	}}
	text := "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11"
	windows := phrases(text, 8)
	if len(windows) != 2 {
		t.Fatalf("windows = %q", windows)
	}
	emb := &vecEmbedder{vecs: map[string][]float32{windows[0]: {0.2, 1, 0}, windows[1]: {0.3, -0.1, -1}}}
	s := &Service{store: st, emb: emb, opts: Options{PhraseWords: 8}, qvecs: newLRU[[]float32](16)}
	q := []float32{0.6, 0.5, 0.1}
	run := func() map[string]*candidate {
		cands := map[string]*candidate{}
		for id, v := range st.vecs {
			cands[id] = &candidate{sum: graph.ToolSummary{ID: id}, semantic: graph.Cosine(q, v), hasSem: true}
		}
		mean, err := s.centreSemantic(context.Background(), q, graph.Filter{}, cands)
		if err != nil || mean == nil {
			t.Fatalf("centring: mean %v, err %v", mean, err)
		}
		if err := s.scorePhrases(context.Background(), s.startPhrases(context.Background(), text), graph.Filter{}, cands, mean, nil); err != nil {
			t.Fatal(err)
		}
		return cands
	}
	cands := run()
	for id, v := range st.vecs {
		d := st.centred(v)
		want := math.Inf(-1)
		for _, w := range windows {
			want = math.Max(want, dot(graph.Normalize(emb.vecs[w]), d)/math.Sqrt(dot(d, d)))
		}
		if c := cands[id]; !c.hasPhrase || math.Abs(c.phrase-want) > 1e-5 {
			t.Errorf("%s: phrase = %v (set %v), want %v", id, c.phrase, c.hasPhrase, want)
		}
	}
	if emb.calls != 2 {
		t.Fatalf("embedded %d phrases, want 2", emb.calls)
	}
	run()
	if emb.calls != 2 {
		t.Fatalf("a repeated query embedded its phrases again (%d calls)", emb.calls)
	}
	// A short query has no phrases: the signal stays unset.
	short := map[string]*candidate{"a": {sum: graph.ToolSummary{ID: "a"}}}
	if err := s.scorePhrases(context.Background(), s.startPhrases(context.Background(), strings.Join(windows[:1], "")), graph.Filter{}, short, nil, nil); err != nil || short["a"].hasPhrase {
		t.Fatalf("short query: err %v, phrase set %v", err, short["a"].hasPhrase)
	}
}
