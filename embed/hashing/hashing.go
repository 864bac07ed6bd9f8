package hashing

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"
)

const (
	// Name is the model name every Embedder reports.
	Name = "hashing-v1"
	// DefaultDimension is the dimension New uses for dim <= 0.
	DefaultDimension = 256
)

// Feature weights: whole words and word pairs carry the meaning, character
// trigrams add robustness to inflections and typos.
const (
	unigramWeight = 1.0
	bigramWeight  = 0.7
	trigramWeight = 0.35
)

// Embedder hashes word unigrams, word bigrams and character trigrams of
// lower-cased text, split at every rune that is not a letter or digit, into a
// fixed number of signed buckets (FNV-1a 64; one hash bit picks the sign so
// collisions cancel on average), weights each feature by 1+ln(tf), and
// L2-normalises the result. It implements embed.Model (asserted in package
// embed), is stateless and safe for concurrent use. Text without letters or
// digits embeds to the zero vector.
type Embedder struct {
	dim int
}

// New returns an Embedder producing dim-dimensional vectors, or
// DefaultDimension ones when dim <= 0.
func New(dim int) *Embedder {
	if dim <= 0 {
		dim = DefaultDimension
	}
	return &Embedder{dim: dim}
}

// Name returns "hashing-v1".
func (e *Embedder) Name() string { return Name }

// Dimension returns the vector length.
func (e *Embedder) Dimension() int { return e.dim }

// EmbedQuery embeds one text.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hashing: embed: %w", err)
	}
	return e.Vector(text), nil
}

// EmbedDocuments embeds each text in order.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for k, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("hashing: embed documents: %w", err)
		}
		out[k] = e.Vector(t)
	}
	return out, nil
}

// Words returns the lower-cased letter/digit runs of text, the unit the
// embedder hashes.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Vector embeds text.
func (e *Embedder) Vector(text string) []float32 {
	words := Words(text)
	// Feature keys carry a one-byte kind prefix so a word never collides
	// with a trigram of the same spelling.
	tf := make(map[string]int, 4*len(words))
	var buf []byte
	for k, w := range words {
		tf["w"+w]++
		if k > 0 {
			tf["b"+words[k-1]+"\x00"+w]++
		}
		runes := []rune("#" + w + "#")
		for j := 0; j+3 <= len(runes); j++ {
			buf = append(buf[:0], 'c')
			buf = append(buf, string(runes[j:j+3])...)
			tf[string(buf)]++
		}
	}
	acc := make([]float64, e.dim)
	for key, n := range tf {
		h := fnv1a(key)
		w := unigramWeight
		switch key[0] {
		case 'b':
			w = bigramWeight
		case 'c':
			w = trigramWeight
		}
		v := w * (1 + math.Log(float64(n)))
		if h>>63 == 1 {
			v = -v
		}
		acc[(h&(1<<63-1))%uint64(e.dim)] += v
	}
	var norm float64
	for _, v := range acc {
		norm += v * v
	}
	out := make([]float32, e.dim)
	if norm == 0 {
		return out
	}
	inv := 1 / math.Sqrt(norm)
	for k, v := range acc {
		out[k] = float32(v * inv)
	}
	return out
}

// fnv1a is 64-bit FNV-1a, inlined to avoid hash.Hash allocations.
func fnv1a(s string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for k := 0; k < len(s); k++ {
		h ^= uint64(s[k])
		h *= prime
	}
	return h
}
