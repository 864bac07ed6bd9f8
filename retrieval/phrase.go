package retrieval

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/toolsmith/toolsmith/graph"
)

// DefaultPhraseWords is Options.PhraseWords's default (evaluation/TUNING.md,
// eighth round).
const DefaultPhraseWords = 3

// MaxPhrases bounds the windows of one query: each is an embedding (USE-Lite
// embeds 22 three-word windows in about 8 ms on two cores), so a very long
// query's windows are spread further apart instead of growing in number.
// Queries of up to 66 words (all but one in two hundred of MetaTool's)
// still get a window at every word.
const MaxPhrases = 64

// phrases cuts a long query into overlapping windows of size words, half a
// window apart (one word for windows of up to three), the last one ending
// at the query's last word; at most MaxPhrases of them, further apart for
// very long queries. A query of at most size+2 words has none: it is
// nearly a phrase itself.
func phrases(text string, size int) []string {
	if size <= 0 {
		return nil
	}
	words := strings.Fields(strings.Trim(strings.TrimSpace(text), `"'`))
	if len(words) <= size+2 {
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

// phraseJob embeds a query's windows in the background, so that rank's
// other work (the query's own embedding, the index searches) overlaps it.
type phraseJob struct {
	done chan struct{}
	vecs [][]float32
	err  error
}

// startPhrases starts embedding text's windows; nil when it has none.
// Cancelling ctx stops the job between batches.
func (s *Service) startPhrases(ctx context.Context, text string) *phraseJob {
	windows := phrases(text, s.opts.PhraseWords)
	if len(windows) == 0 {
		return nil
	}
	j := &phraseJob{done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.vecs, j.err = s.cachedVectors(ctx, windows, "query phrases")
	}()
	return j
}

// scorePhrases waits for j and sets the phrase signal: each candidate's
// cosine to the query's best-matching phrase (a window of
// Options.PhraseWords words), centred like the semantic signal on mean, the
// mean vector centreSemantic used (nil: the cosines are not centred). A
// sentence embedding averages a long query's words, so the words that name
// the task are diluted by its framing and details; a short window keeps
// them together (max-passage matching, applied to the query). A query too
// short for a window (j nil) leaves the signal empty, which scores every
// candidate alike.
func (s *Service) scorePhrases(ctx context.Context, j *phraseJob, f graph.Filter, cands map[string]*candidate, mean []float32, m *Model) error {
	if j == nil {
		return nil
	}
	<-j.done
	if j.err != nil || len(cands) == 0 {
		return j.err
	}
	vecs := j.vecs
	if m != nil && m.Adapter != nil { // phrases are compared with tool vectors, as the query is
		vecs = make([][]float32, len(j.vecs))
		for i, v := range j.vecs {
			vecs[i] = m.semanticVector(v)
		}
	}
	ids := make([]string, 0, len(cands))
	for id := range cands {
		ids = append(ids, id)
	}
	f.IDs = ids
	scores, err := s.store.VectorScores(ctx, vecs, f)
	if err != nil {
		return fmt.Errorf("retrieval: phrase search: %w", err)
	}
	centre := len(mean) > 0 && len(mean) == len(vecs[0])
	proj := make([]float64, len(vecs)) // each phrase's projection on the mean, as centreSemantic's q·m
	for i, v := range vecs {
		proj[i] = dot64(v, mean)
	}
	for id, sc := range scores {
		c, ok := cands[id]
		if !ok {
			continue
		}
		for i, sim := range sc {
			if math.IsInf(sim, -1) {
				continue
			}
			if centre && c.hasCentred && c.spread > 1e-9 {
				sim = (sim - proj[i]) / c.spread
			}
			if !c.hasPhrase || sim > c.phrase {
				c.phrase, c.hasPhrase = sim, true
			}
		}
	}
	return nil
}
