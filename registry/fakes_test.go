package registry_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// memStore is a small in-memory graph.Store covering what the registry uses.
// Methods the registry never calls are left to the embedded nil interface and
// would panic if called.
type memStore struct {
	graph.Store
	mu       sync.Mutex
	info     graph.EmbedderInfo
	tools    map[string]graph.Tool
	history  map[string][]graph.Revision
	upserts  int
	failNext error // returned by the next UpsertTool
	reject   map[string]bool
	batches  []int // sizes of UpsertTools calls (batchStore only)
}

// batchStore adds the optional all-or-nothing UpsertTools.
type batchStore struct{ *memStore }

func (s batchStore) UpsertTools(ctx context.Context, tools []graph.Tool) ([]graph.UpsertResult, error) {
	s.mu.Lock()
	s.batches = append(s.batches, len(tools))
	for _, t := range tools {
		if s.reject[t.ID] {
			s.mu.Unlock()
			return nil, fmt.Errorf("mem: upsert %q: %w", t.ID, fault.ErrInvalid)
		}
	}
	s.mu.Unlock()
	out := make([]graph.UpsertResult, len(tools))
	for i, t := range tools {
		r, err := s.UpsertTool(ctx, t)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func newMemStore() *memStore {
	return &memStore{tools: map[string]graph.Tool{}, history: map[string][]graph.Revision{}}
}

func (s *memStore) EnsureEmbedder(_ context.Context, info graph.EmbedderInfo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.info == (graph.EmbedderInfo{}) {
		s.info = info
		return nil
	}
	if s.info != info {
		return fmt.Errorf("mem: store built with %v, not %v: %w", s.info, info, graph.ErrEmbedderMismatch)
	}
	return nil
}

func (s *memStore) UpsertTool(_ context.Context, t graph.Tool) (graph.UpsertResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failNext; err != nil {
		s.failNext = nil
		return graph.UpsertResult{}, err
	}
	if t.ID == "" || s.reject[t.ID] {
		return graph.UpsertResult{}, fmt.Errorf("mem: upsert %q: %w", t.ID, fault.ErrInvalid)
	}
	if s.info.Dimension > 0 && len(t.Embedding) != s.info.Dimension {
		return graph.UpsertResult{}, graph.ErrDimension
	}
	s.upserts++
	old, existed := s.tools[t.ID]
	if existed {
		t.CreatedAt = old.CreatedAt
	} else {
		t.CreatedAt = t.UpdatedAt
	}
	s.tools[t.ID] = t
	rev := len(s.history[t.ID]) + 1
	s.history[t.ID] = append(s.history[t.ID], graph.Revision{Revision: rev, Status: t.Status, Manifest: t.Manifest, At: t.UpdatedAt})
	return graph.UpsertResult{Created: !existed, Revision: rev}, nil
}

func (s *memStore) GetTool(_ context.Context, id string) (graph.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tools[id]
	if !ok {
		return graph.Tool{}, fmt.Errorf("mem: get tool %q: %w", id, fault.ErrNotFound)
	}
	return t, nil
}

func (s *memStore) SetStatus(_ context.Context, id, status, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tools[id]
	if !ok {
		return fmt.Errorf("mem: set status %q: %w", id, fault.ErrNotFound)
	}
	t.Status = status
	s.tools[id] = t
	rev := len(s.history[id]) + 1
	s.history[id] = append(s.history[id], graph.Revision{Revision: rev, Status: status, Reason: reason, Manifest: t.Manifest})
	return nil
}

func (s *memStore) History(_ context.Context, id string) ([]graph.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.history[id]
	if !ok {
		return nil, fmt.Errorf("mem: history %q: %w", id, fault.ErrNotFound)
	}
	return slices.Clone(h), nil
}

func (s *memStore) ListTools(_ context.Context, q graph.ListQuery) (graph.ToolPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.tools {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var p graph.ToolPage
	for _, id := range ids {
		if id > q.After {
			p.Items = append(p.Items, s.tools[id].ToolSummary)
		}
	}
	p.Total = len(ids)
	return p, nil
}

func (s *memStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tools)
}

// fakeEmbedder returns deterministic unit vectors from word hashes; it counts
// calls and texts and can be told to fail.
type fakeEmbedder struct {
	mu    sync.Mutex
	dim   int
	calls []int // batch sizes
	fail  func(texts []string) error
}

func (e *fakeEmbedder) Name() string   { return "fake-hash" }
func (e *fakeEmbedder) Dimension() int { return e.dim }

func (e *fakeEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, len(texts))
	fail := e.fail
	e.mu.Unlock()
	if fail != nil {
		if err := fail(texts); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.vec(t)
	}
	return out, nil
}

func (e *fakeEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return e.vec(text), nil
}

func (e *fakeEmbedder) vec(text string) []float32 {
	v := make([]float32, e.dim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(e.dim)]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func (e *fakeEmbedder) batches() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

var errEmbedDown = errors.New("embedder down")

// CloseGap: the fake keeps no gaps, so an upsert closes none.
func (s *memStore) CloseGap(context.Context, string, string, time.Time) (bool, error) {
	return false, nil
}
