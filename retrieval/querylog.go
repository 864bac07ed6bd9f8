package retrieval

import (
	"math"
	"strings"
	"unicode"
)

// queryLog is document expansion from the query log: each tool's
// "document" is the bag of words of the past queries it served, and a new
// query is scored against those documents with bm25. Users who asked for a
// tool before used words its description lacks ("bibtex", "umbrella");
// this signal matches them literally, where the neighbours signal matches
// them by embedding. It indexes the words of the exemplars' ring, which
// keeps it in step (count on add, uncount on eviction) and guards it.
type queryLog struct {
	postings map[string]map[string]int // word → tool → count
	length   map[string]int            // tool → words in its document
	total    int                       // sum of length
}

func (l *queryLog) count(tool string, words []string, sign int) {
	for _, w := range words {
		p := l.postings[w]
		if p == nil {
			p = map[string]int{}
			l.postings[w] = p
		}
		p[tool] += sign
		if p[tool] <= 0 {
			delete(p, tool)
			if len(p) == 0 {
				delete(l.postings, w)
			}
		}
	}
	l.length[tool] += sign * len(words)
	l.total += sign * len(words)
	if l.length[tool] <= 0 {
		delete(l.length, tool)
	}
}

// bm25's usual parameters; 0.3–1.0 for b and 0.8–2 for k1 moved MetaTool
// Recall@5 by at most ±0.2 points.
const logK1, logB = 1.2, 0.75

// score returns bm25 of words against every tool document that contains
// one of them.
func (l *queryLog) score(words []string) map[string]float64 {
	n := len(l.length)
	if n == 0 || len(words) == 0 {
		return nil
	}
	avg := float64(l.total) / float64(n)
	out := map[string]float64{}
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		p := l.postings[w]
		if len(p) == 0 {
			continue
		}
		df := float64(len(p))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		for tool, tf := range p {
			f := float64(tf)
			out[tool] += idf * f * (logK1 + 1) / (f + logK1*(1-logB+logB*float64(l.length[tool])/avg))
		}
	}
	return out
}

// logWords lower-cases text and splits it into letter and digit runs.
func logWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
