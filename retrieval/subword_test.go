package retrieval

import (
	"math"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

func TestGrams(t *testing.T) {
	g := grams("SEO-tool")
	for _, want := range []string{" se", "seo", "eo ", " seo", "seo ", " too", "tool", "ool ", "tool "} {
		if g[want] != 1 {
			t.Errorf("grams(%q)[%q] = %v, want 1 (all: %v)", "SEO-tool", want, g[want], g)
		}
	}
	if _, ok := g[" tool "]; ok {
		t.Error("a gram is longer than gramMax")
	}
	if _, ok := g["o-t"]; ok {
		t.Error("a gram spans the hyphen between two words")
	}
	if len(grams("  ,; ")) != 0 {
		t.Error("grams of punctuation is not empty")
	}
}

// TestSubwordMatchesWordForms: the signal must rank a tool named as one
// compound word, or with another form of the query's word, above an
// unrelated tool, where whole-word matching finds nothing.
func TestSubwordMatchesWordForms(t *testing.T) {
	s := &Service{}
	mk := func(id, name, desc string) *candidate {
		return &candidate{sum: graph.ToolSummary{ID: id, Name: name, ShortDescription: desc, UpdatedAt: time.Unix(1, 0)}}
	}
	cands := map[string]*candidate{
		"a": mk("a", "Timeport", "Travel through history in a game."),
		"b": mk("b", "Translator", "Translates text between languages."),
		"c": mk("c", "Recipes", "Find recipes for dinner."),
	}
	s.addSubword("I want a translation of this sentence", cands)
	if !(cands["b"].subword > cands["a"].subword && cands["b"].subword > cands["c"].subword) {
		t.Fatalf("translation: scores a=%v b=%v c=%v, want b highest", cands["a"].subword, cands["b"].subword, cands["c"].subword)
	}
	for _, c := range cands {
		if c.subword < 0 || c.subword > 1+1e-9 {
			t.Fatalf("cosine out of [0,1]: %v", c.subword)
		}
		c.subword = 0
	}
	s.addSubword("play a time port adventure", cands)
	if !(cands["a"].subword > cands["b"].subword && cands["a"].subword > cands["c"].subword) {
		t.Fatalf("time port: scores a=%v b=%v c=%v, want a highest", cands["a"].subword, cands["b"].subword, cands["c"].subword)
	}
	// An updated tool is re-read, not served from the gram cache.
	cands["c"].sum.Name, cands["c"].sum.UpdatedAt = "Time portal", time.Unix(2, 0)
	s.addSubword("play a time port adventure", cands)
	if cands["c"].subword <= cands["b"].subword {
		t.Fatalf("updated tool kept its old grams: c=%v b=%v", cands["c"].subword, cands["b"].subword)
	}
}

func TestZScores(t *testing.T) {
	cands := map[string]*candidate{"a": {}, "b": {}, "c": {}, "d": {}}
	z := zScores(map[string]float64{"a": 3, "b": 1, "c": 2}, cands)
	// d is missing and takes the lowest value present (1): values 3,1,2,1.
	mean, sd := 1.75, math.Sqrt((1.25*1.25+0.75*0.75+0.25*0.25+0.75*0.75)/4)
	for id, v := range map[string]float64{"a": 3, "b": 1, "c": 2, "d": 1} {
		if want := (v - mean) / sd; math.Abs(z[id]-want) > 1e-12 {
			t.Errorf("z[%s] = %v, want %v", id, z[id], want)
		}
	}
	if z := zScores(map[string]float64{"a": 2, "b": 2}, cands); len(z) != 0 {
		t.Errorf("flat signal: %v, want all zero", z)
	}
	if z := zScores(nil, cands); len(z) != 0 {
		t.Errorf("absent signal: %v, want empty", z)
	}
}

// TestGramsNonASCII: grams count characters, not bytes.
func TestGramsNonASCII(t *testing.T) {
	g := grams("Café")
	for _, want := range []string{" ca", "caf", "afé", "fé ", " café", "café "} {
		if g[want] != 1 {
			t.Errorf("grams(Café)[%q] = %v, want 1 (all: %v)", want, g[want], g)
		}
	}
}
