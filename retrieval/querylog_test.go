package retrieval

import (
	"math"
	"testing"
)

func TestQueryLogBM25AndEviction(t *testing.T) {
	e := newExemplars(3)
	l := &e.log
	add := func(tool, query string) { e.add(tool, nil, query) }
	add("cite", "Generate BibTeX references")
	add("cite", "bibtex for my paper")
	add("wx", "will it rain in Paris?")
	add("wx", "  ,; ") // no words: not an entry
	if v := e.vote([]float32{1, 0}, 3, 0); len(v) != 0 {
		t.Fatalf("entries without an embedding voted: %v", v)
	}

	if got := e.logScores("bibtex entry"); len(got) != 1 || got["cite"] <= 0 {
		t.Fatalf("score(bibtex) = %v, want only cite", got)
	}
	// bm25 by hand: 2 documents (cite 7 words, wx 5), "rain" in wx once.
	idf := math.Log(1 + (2-1+0.5)/(1+0.5))
	want := idf * 1 * (logK1 + 1) / (1 + logK1*(1-logB+logB*5/6.0))
	if got := e.logScores("RAIN"); math.Abs(got["wx"]-want) > 1e-12 || len(got) != 1 {
		t.Fatalf("score(rain) = %v, want wx %.6f", got, want)
	}
	if got := e.logScores("zebra"); len(got) != 0 {
		t.Fatalf("score of an unseen word = %v", got)
	}

	// A fourth entry evicts the oldest one ("generate bibtex references").
	add("wx", "snow tomorrow")
	if got := e.logScores("generate"); len(got) != 0 {
		t.Fatalf("an evicted query still scores: %v", got)
	}
	if got := e.logScores("bibtex"); got["cite"] <= 0 {
		t.Fatalf("cite's remaining query lost its words: %v", got)
	}
	if l.length["cite"] != 4 || l.length["wx"] != 7 || l.total != 11 {
		t.Fatalf("lengths %v total %d, want cite 4, wx 7, total 11", l.length, l.total)
	}
	// Evicting every query of a tool removes its document.
	add("wx", "sunny")
	add("wx", "windy")
	if _, ok := l.length["cite"]; ok || len(e.logScores("bibtex")) != 0 {
		t.Fatalf("cite's document survived the eviction of all its queries: %v", l.length)
	}
	if _, ok := l.postings["bibtex"]; ok {
		t.Fatal("an empty posting list was kept")
	}
}
