package retrieval

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/toolsmith/toolsmith/graph"
)

// The subword signal compares the query with each candidate's name, verb,
// short description and tags as bags of character 3- to 5-grams weighted
// by TF-IDF, with document frequencies taken over the candidate set. It
// catches what bm25 over whole (stemmed) words misses: compounds and tool
// names written as one word ("timeport", "SEOTool"), word forms the
// stemmer does not join ("translator" / "translation"), and typos. Its
// inputs are all in graph.ToolSummary, so it needs no further store reads.

const (
	gramMin, gramMax = 3, 5
	// gramCacheSize bounds the per-tool gram cache; it is emptied when full.
	gramCacheSize = 50000
)

// gramBag is a text's gram counts.
type gramBag map[string]float64

// grams returns the character n-gram counts of text's lower-cased letter
// and digit runs, each padded with a space so that word starts and ends
// form their own grams.
func grams(text string) gramBag {
	out := gramBag{}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for _, w := range words {
		p := " " + w + " "
		if isASCII(p) { // byte offsets are character offsets: no copies
			for n := gramMin; n <= gramMax; n++ {
				for i := 0; i+n <= len(p); i++ {
					out[p[i:i+n]]++
				}
			}
			continue
		}
		rs := []rune(p)
		for n := gramMin; n <= gramMax; n++ {
			for i := 0; i+n <= len(rs); i++ {
				out[string(rs[i:i+n])]++
			}
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// subwordText is the part of a tool the subword signal reads.
func subwordText(s graph.ToolSummary) string {
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteByte(' ')
	b.WriteString(strings.ReplaceAll(s.Verb, "_", " "))
	b.WriteByte(' ')
	b.WriteString(s.ShortDescription)
	for _, t := range s.Tags {
		b.WriteByte(' ')
		b.WriteString(t)
	}
	return b.String()
}

// gramCache keeps each tool's grams, interned as ids, keyed by tool id and
// update time so an updated tool is recomputed. Interning makes the
// per-query work slice lookups instead of string hashing. Both the bags and
// the vocabulary are dropped when the cache is full.
type gramCache struct {
	mu    sync.Mutex
	vocab map[string]uint32
	bags  map[string]cachedBag
}

type cachedBag struct {
	version int64
	ids     []uint32  // distinct grams, ascending
	tf      []float64 // 1 + ln(count), per gram
}

// weightOf returns the tf weight of gram id, 0 when absent.
func (b cachedBag) weightOf(id uint32) float64 {
	if i, ok := slices.BinarySearch(b.ids, id); ok {
		return b.tf[i]
	}
	return 0
}

// scratch is per-query working memory of addSubword.
type scratch struct {
	idf     []float64 // by gram id: df, then idf; 0 = not in any candidate
	touched []uint32
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

// bagOf returns a tool's interned grams; the caller holds g.mu and has
// made sure the maps exist.
func (g *gramCache) bagOf(s graph.ToolSummary) cachedBag {
	v := s.UpdatedAt.UnixNano()
	if c, ok := g.bags[s.ID]; ok && c.version == v {
		return c
	}
	counts := grams(subwordText(s))
	tfs := make(map[uint32]float64, len(counts))
	c := cachedBag{version: v, ids: make([]uint32, 0, len(counts)), tf: make([]float64, 0, len(counts))}
	for gram, n := range counts {
		id, ok := g.vocab[gram]
		if !ok {
			id = uint32(len(g.vocab))
			g.vocab[gram] = id
		}
		c.ids = append(c.ids, id)
		tfs[id] = 1 + math.Log(n)
	}
	slices.Sort(c.ids)
	for _, id := range c.ids {
		c.tf = append(c.tf, tfs[id])
	}
	g.bags[s.ID] = c
	return c
}

// addSubword sets each candidate's subword score: the cosine of the TF-IDF
// vectors (sublinear tf, 1 + ln tf; idf = ln((N+1)/df) over the N
// candidates) of the query's and the candidate's grams.
func (s *Service) addSubword(text string, cands map[string]*candidate) {
	q := grams(text)
	if len(q) == 0 || len(cands) == 0 {
		return
	}
	g := &s.grams
	g.mu.Lock()
	if g.bags == nil || len(g.bags)+len(cands) > gramCacheSize {
		// Reset before, never during, a query: its ids must share a vocabulary.
		g.bags, g.vocab = map[string]cachedBag{}, map[string]uint32{}
	}
	bags := make([]cachedBag, 0, len(cands))
	order := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		bags = append(bags, g.bagOf(c.sum))
		order = append(order, c)
	}
	qids := make(map[uint32]float64, len(q))
	for gram, n := range q {
		if id, ok := g.vocab[gram]; ok {
			qids[id] = 1 + math.Log(n)
		}
	}
	g.mu.Unlock()
	if len(qids) == 0 {
		return
	}
	// Document frequencies over the candidates, then idf per gram, in a
	// pooled dense array indexed by gram id (reset through the touched list).
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	for _, b := range bags {
		for _, id := range b.ids {
			if int(id) >= len(sc.idf) {
				sc.idf = append(sc.idf, make([]float64, int(id)+1-len(sc.idf)+1024)...)
			}
			if sc.idf[id] == 0 {
				sc.touched = append(sc.touched, id)
			}
			sc.idf[id]++
		}
	}
	n := float64(len(cands)) + 1
	for _, id := range sc.touched {
		// ln(n/df) > 0 since df ≤ N < n: zero still means "absent".
		sc.idf[id] = math.Log(n / sc.idf[id])
	}
	idf := sc.idf
	defer func() {
		for _, id := range sc.touched {
			sc.idf[id] = 0
		}
		sc.touched = sc.touched[:0]
	}()
	for id := range qids {
		if int(id) >= len(idf) || idf[id] == 0 {
			delete(qids, id) // no candidate has it
		}
	}
	qn := 0.0
	for id, tf := range qids {
		w := tf * idf[id]
		qids[id] = w
		qn += w * w
	}
	if qn == 0 {
		return
	}
	qn = math.Sqrt(qn)
	for i, b := range bags {
		dot, bn := 0.0, 0.0
		for j, id := range b.ids {
			w := b.tf[j] * idf[id]
			bn += w * w
		}
		for id, x := range qids {
			dot += x * idf[id] * b.weightOf(id)
		}
		if bn > 0 {
			order[i].subword = dot / (qn * math.Sqrt(bn))
		}
	}
}
