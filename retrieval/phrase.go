package retrieval

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolsmith/toolsmith/graph"
)

// DefaultPhraseWords is Options.PhraseWords's default (evaluation/TUNING.md,
// eighth round).
const DefaultPhraseWords = 3

// MaxPhrases bounds the windows of one query: each is an embedding (about
// 1.1 ms on two cores for USE-Lite), so a long query's windows are spread
// further apart instead of growing in number.
const MaxPhrases = 16

// MinPhraseQueryWords is the shortest query with phrases. Shorter queries,
// which is what planners send (a verb, maybe a short description), are
// ranked by their own embedding and pay nothing for the signal.
const MinPhraseQueryWords = 11

// phrases cuts a long query into overlapping windows of size words, half a
// window apart (one word for windows of up to three), the last one ending
// at the query's last word; at most MaxPhrases of them, further apart for
// long queries. A query of fewer than MinPhraseQueryWords words, or of at
// most size+2, has none.
func phrases(text string, size int) []string {
	if size <= 0 {
		return nil
	}
	words := strings.Fields(strings.Trim(strings.TrimSpace(text), `"'`))
	if len(words) <= size+2 || len(words) < MinPhraseQueryWords {
		return nil
	}
	step := max(1, size/2, (len(words)-size+MaxPhrases-2)/(MaxPhrases-1))
	var out []string
	for i := 0; ; i += step {
		if i+size >= len(words) { // the last window ends at the last word
			return append(out, strings.Join(words[len(words)-size:], " "))
		}
		out = append(out, strings.Join(words[i:i+size], " "))
	}
}

// addPhrases is the phrase signal: each candidate's cosine to the query's
// best-matching phrase (a window of Options.PhraseWords words), centred like
// the semantic signal on mean, the mean vector centreSemantic used (nil: the
// cosines are not centred). A sentence embedding
// averages a long query's words, so the words that name the task are
// diluted by its framing and details; a short window keeps them together
// (max-passage matching, applied to the query). Queries too short for a
// window leave the signal empty, which scores every candidate alike.
func (s *Service) addPhrases(ctx context.Context, text string, f graph.Filter, cands map[string]*candidate, mean []float32) error {
	windows := phrases(text, s.opts.PhraseWords)
	if len(windows) == 0 || len(cands) == 0 {
		return nil
	}
	vecs, err := s.phraseVectors(ctx, windows)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(cands))
	for id := range cands {
		ids = append(ids, id)
	}
	f.IDs = ids
	for _, v := range vecs {
		hits, err := s.store.VectorSearch(ctx, v, len(ids), f)
		if err != nil {
			return fmt.Errorf("retrieval: phrase search: %w", err)
		}
		vm := dot64(v, mean) // the phrase's projection on the mean, as centreSemantic's q·m
		for _, h := range hits {
			c, ok := cands[h.Tool.ID]
			if !ok {
				continue
			}
			sim := h.Score
			if c.hasCentred && c.spread > 1e-9 && len(mean) == len(v) {
				sim = (h.Score - vm) / c.spread
			}
			if !c.hasPhrase || sim > c.phrase {
				c.phrase, c.hasPhrase = sim, true
			}
		}
	}
	return nil
}

// phraseVectors embeds the windows, through the query-embedding cache, the
// ones it does not hold in one batch.
func (s *Service) phraseVectors(ctx context.Context, windows []string) ([][]float32, error) {
	out := make([][]float32, len(windows))
	var missing []string
	var at []int
	for i, w := range windows {
		if s.qvecs != nil {
			if v, ok := s.qvecs.get(w); ok {
				out[i] = v
				continue
			}
		}
		missing = append(missing, w)
		at = append(at, i)
	}
	if len(missing) == 0 {
		return out, nil
	}
	vs, err := s.emb.EmbedDocuments(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("retrieval: embed query phrases: %w", err)
	}
	if len(vs) != len(missing) {
		return nil, fmt.Errorf("retrieval: embed query phrases: %d vectors for %d phrases", len(vs), len(missing))
	}
	for j, v := range vs {
		v = graph.Normalize(v)
		if s.qvecs != nil {
			s.qvecs.put(missing[j], v)
		}
		out[at[j]] = v
	}
	return out, nil
}
