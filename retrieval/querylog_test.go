package retrieval

import (
	"math"
	"testing"
)

func TestQueryLogBM25AndEviction(t *testing.T) {
	l := newQueryLog(3)
	l.add("cite", "Generate BibTeX references")
	l.add("cite", "bibtex for my paper")
	l.add("wx", "will it rain in Paris?")
	l.add("wx", "  ,; ") // no words: not an entry

	if got := l.score("bibtex entry"); len(got) != 1 || got["cite"] <= 0 {
		t.Fatalf("score(bibtex) = %v, want only cite", got)
	}
	// bm25 by hand: 2 documents (cite 7 words, wx 5), "rain" in wx once.
	idf := math.Log(1 + (2-1+0.5)/(1+0.5))
	want := idf * 1 * (logK1 + 1) / (1 + logK1*(1-logB+logB*5/6.0))
	if got := l.score("RAIN"); math.Abs(got["wx"]-want) > 1e-12 || len(got) != 1 {
		t.Fatalf("score(rain) = %v, want wx %.6f", got, want)
	}
	if got := l.score("zebra"); len(got) != 0 {
		t.Fatalf("score of an unseen word = %v", got)
	}

	// A fourth entry evicts the oldest one ("generate bibtex references").
	l.add("wx", "snow tomorrow")
	if got := l.score("generate"); len(got) != 0 {
		t.Fatalf("an evicted query still scores: %v", got)
	}
	if got := l.score("bibtex"); got["cite"] <= 0 {
		t.Fatalf("cite's remaining query lost its words: %v", got)
	}
	if l.length["cite"] != 4 || l.length["wx"] != 7 || l.total != 11 {
		t.Fatalf("lengths %v total %d, want cite 4, wx 7, total 11", l.length, l.total)
	}
	// Evicting every query of a tool removes its document.
	l.add("wx", "sunny")
	l.add("wx", "windy")
	if _, ok := l.length["cite"]; ok || len(l.score("bibtex")) != 0 {
		t.Fatalf("cite's document survived the eviction of all its queries: %v", l.length)
	}
	if _, ok := l.postings["bibtex"]; ok {
		t.Fatal("an empty posting list was kept")
	}
}
