package evaluation

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// vectorCache is an embed.Model that remembers every vector it returns, so
// a run embeds each text once; with a file, repeated evaluation runs
// (tuning weights on the same query set) do too. The file records the
// model's name and dimension; a file written by another model is refused,
// not mixed in.
type vectorCache struct {
	embed.Model
	path  string
	mu    sync.Mutex
	vecs  map[string][]float32
	dirty bool
}

type vectorCacheFile struct {
	Model     string
	Dimension int
	Vectors   map[string][]float32
}

// openVectorCache loads path when it exists (a missing file is an empty
// cache); path "" is a cache in memory only.
func openVectorCache(path string, m embed.Model) (*vectorCache, error) {
	c := &vectorCache{Model: m, path: path, vecs: map[string][]float32{}}
	if path == "" {
		return c, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evaluation: vector cache: %w", err)
	}
	defer f.Close()
	var file vectorCacheFile
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&file); err != nil {
		return nil, fault.Malformed("vector-cache", "%s is not a vector cache file: %v", filepath.Base(path), err)
	}
	if file.Model != m.Name() || file.Dimension != m.Dimension() {
		return nil, fault.Malformed("vector-cache", "%s holds vectors of %s (%d-d), not of %s (%d-d): delete it or name another file",
			filepath.Base(path), file.Model, file.Dimension, m.Name(), m.Dimension())
	}
	if file.Vectors != nil {
		c.vecs = file.Vectors
	}
	return c, nil
}

func (c *vectorCache) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	c.mu.Lock()
	v, ok := c.vecs[text]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := c.Model.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.vecs[text], c.dirty = v, true
	c.mu.Unlock()
	return v, nil
}

// EmbedDocuments serves cached vectors and embeds the rest in one batch.
func (c *vectorCache) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	var idx []int
	c.mu.Lock()
	for i, t := range texts {
		if v, ok := c.vecs[t]; ok {
			out[i] = v
		} else {
			miss, idx = append(miss, t), append(idx, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	vs, err := c.Model.EmbedDocuments(ctx, miss)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(miss) {
		return nil, fmt.Errorf("evaluation: embedder returned %d vectors for %d texts", len(vs), len(miss))
	}
	c.mu.Lock()
	for j, i := range idx {
		out[i] = vs[j]
		c.vecs[miss[j]] = vs[j]
	}
	c.dirty = true
	c.mu.Unlock()
	return out, nil
}

// save writes the cache's file when it learnt new vectors (to a temporary
// file renamed into place, so an interrupted run never leaves half a
// cache).
func (c *vectorCache) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty || c.path == "" {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), filepath.Base(c.path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("evaluation: vector cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	err = gob.NewEncoder(w).Encode(vectorCacheFile{Model: c.Model.Name(), Dimension: c.Model.Dimension(), Vectors: c.vecs})
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		return fmt.Errorf("evaluation: save vector cache: %w", err)
	}
	c.dirty = false
	return nil
}
