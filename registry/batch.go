package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Item statuses of a batch registration.
const (
	StatusCreated   = "created"
	StatusUpdated   = "updated"
	StatusUnchanged = "unchanged" // upsert of an identical manifest: nothing written
	StatusFailed    = "failed"
)

// BatchOptions tunes BatchRegister.
type BatchOptions struct {
	// Upsert replaces existing tools instead of failing them with a conflict.
	Upsert bool
	// Allow, when set, is the caller's visibility rule: an existing tool it
	// refuses is never replaced; its item fails with the conflict a
	// registration without Upsert gets, and nothing more is said of it.
	Allow func(*graph.ToolSummary) bool
	// Progress, when set, is called after each item is settled with the
	// number of items settled so far and the batch size.
	Progress func(done, total int)
}

// ItemResult is the outcome of one item of a batch.
type ItemResult struct {
	Index    int        `json:"index"`
	ToolID   string     `json:"toolId,omitempty"`
	Status   string     `json:"status"`
	Revision int        `json:"revision,omitempty"`
	Error    *ErrorInfo `json:"error,omitempty"`
}

// ErrorInfo describes why an item failed: Code is the fault kind, named as
// the HTTP API names it for a single request ("validation_failed",
// "bad_request", "conflict", "not_found", "unavailable", "internal", plus
// "embedder_mismatch"), Fields the field problems.
type ErrorInfo struct {
	Code    string             `json:"code"`
	Message string             `json:"message"`
	Fields  []fault.FieldError `json:"fields,omitempty"`
}

// Info classifies err for a per-item result.
func Info(err error) *ErrorInfo {
	if err == nil {
		return nil
	}
	code := "internal"
	switch {
	case errors.Is(err, fault.ErrMalformed):
		code = "bad_request"
	case errors.Is(err, fault.ErrInvalid):
		code = "validation_failed"
	case errors.Is(err, fault.ErrConflict):
		code = "conflict"
	case errors.Is(err, fault.ErrNotFound):
		code = "not_found"
	case errors.Is(err, graph.ErrEmbedderMismatch):
		code = "embedder_mismatch"
	case errors.Is(err, fault.ErrUnavailable):
		code = "unavailable"
	}
	return &ErrorInfo{Code: code, Message: err.Error(), Fields: fault.Fields(err)}
}

// pending is a valid batch item on its way to the store.
type pending struct {
	idx  int
	m    tool.Manifest
	text string
	vec  []float32
}

// BatchRegister registers many tools; one bad item never sinks the good
// ones. Items are validated first, then the ones that need a vector are
// embedded EmbedChunk at a time with one EmbedDocuments call per chunk, then
// each tool is written with its own atomic UpsertTool. Without Upsert an
// existing id fails with "conflict"; with Upsert it is replaced, or left
// alone ("unchanged") when its manifest is identical and ForceReindex is not
// set, which makes reloading a catalogue idempotent. A toolId repeated
// within the batch fails every occurrence after the first. Results come in
// request order.
func (s *Service) BatchRegister(ctx context.Context, reqs []Request, opts BatchOptions) []ItemResult {
	if s.afterBatch != nil {
		defer s.afterBatch(len(reqs))
	}
	out := make([]ItemResult, len(reqs))
	done := 0
	settle := func(i int, r ItemResult) {
		r.Index = i
		out[i] = r
		done++
		if opts.Progress != nil {
			opts.Progress(done, len(reqs))
		}
	}
	fail := func(i int, id string, err error) {
		settle(i, ItemResult{ToolID: id, Status: StatusFailed, Error: Info(err)})
	}

	seen := map[string]int{}
	var todo []*pending
	for i, req := range reqs {
		m, err := prepare(req, "")
		if err != nil {
			fail(i, idHint(req), fmt.Errorf("registry: batch item %d: %w", i, err))
			continue
		}
		if first, dup := seen[m.ToolID]; dup {
			fail(i, m.ToolID, fmt.Errorf("registry: batch item %d: toolId %q repeats item %d: %w", i, m.ToolID, first, fault.ErrConflict))
			continue
		}
		seen[m.ToolID] = i
		p := &pending{idx: i, m: m, text: tool.EmbeddingText(m)}
		old, err := s.store.GetTool(ctx, m.ToolID)
		switch {
		case errors.Is(err, fault.ErrNotFound):
		case err != nil:
			fail(i, m.ToolID, fmt.Errorf("registry: batch item %d %q: %w", i, m.ToolID, err))
			continue
		case !opts.Upsert || (opts.Allow != nil && !opts.Allow(&old.ToolSummary)):
			fail(i, m.ToolID, fmt.Errorf("registry: batch item %d: tool %q already exists: %w", i, m.ToolID, fault.ErrConflict))
			continue
		default:
			plan := planUpdate(old, m, req.ForceReindex, s.dim)
			if plan.unchanged {
				rev, err := s.revision(ctx, m.ToolID)
				if err != nil {
					fail(i, m.ToolID, fmt.Errorf("registry: batch item %d %q: %w", i, m.ToolID, err))
					continue
				}
				settle(i, ItemResult{ToolID: m.ToolID, Status: StatusUnchanged, Revision: rev})
				continue
			}
			p.vec = plan.reuse
		}
		todo = append(todo, p)
	}

	// Embed the items that need it, a chunk at a time; a failing chunk fails
	// its own items only.
	var need []*pending
	for _, p := range todo {
		if p.vec == nil {
			need = append(need, p)
		}
	}
	for start := 0; start < len(need); start += EmbedChunk {
		chunk := need[start:min(start+EmbedChunk, len(need))]
		texts := make([]string, len(chunk))
		for j, p := range chunk {
			texts[j] = p.text
		}
		vecs, err := s.embed(ctx, texts)
		if err != nil {
			for _, p := range chunk {
				fail(p.idx, p.m.ToolID, fmt.Errorf("registry: batch item %d %q: %w", p.idx, p.m.ToolID, err))
			}
			continue
		}
		for j, p := range chunk {
			p.vec = vecs[j]
		}
	}

	var ready []*pending
	for _, p := range todo {
		if p.vec != nil { // nil: failed while embedding
			ready = append(ready, p)
		}
	}
	for start := 0; start < len(ready); start += EmbedChunk {
		chunk := ready[start:min(start+EmbedChunk, len(ready))]
		for _, w := range s.writeChunk(ctx, chunk, opts.Upsert) {
			if w.err != nil {
				fail(w.p.idx, w.p.m.ToolID, fmt.Errorf("registry: batch item %d %q: %w", w.p.idx, w.p.m.ToolID, w.err))
				continue
			}
			status := StatusUpdated
			if w.res.Created {
				status = StatusCreated
			}
			settle(w.p.idx, ItemResult{ToolID: w.p.m.ToolID, Status: status, Revision: w.res.Revision})
			s.changed(w.p.m.ToolID)
		}
	}
	return out
}

// BatchUpserter is implemented by stores that can write several tools in
// one transaction (graph/sqlite pays one fsync per commit, so this is much
// faster for bulk loads). It is optional: BatchRegister falls back to one
// UpsertTool per item.
type BatchUpserter interface {
	// UpsertTools writes all tools or none.
	UpsertTools(ctx context.Context, tools []graph.Tool) ([]graph.UpsertResult, error)
}

type written struct {
	p   *pending
	res Result
	err error
}

// writeChunk writes embedded batch items under their id locks (taken in id
// order, so concurrent batches cannot deadlock). Without upsert it checks
// again that each id is still free: another request may have registered it
// while the batch was embedding. When the store is a BatchUpserter the chunk
// goes in one transaction; if that fails, each item is retried on its own so
// that one bad item never sinks the others. Results come in chunk order.
func (s *Service) writeChunk(ctx context.Context, chunk []*pending, upsert bool) []written {
	ids := make([]string, len(chunk))
	for i, p := range chunk {
		ids[i] = p.m.ToolID
	}
	slices.Sort(ids)
	unlocks := make([]func(), len(ids))
	for i, id := range ids {
		unlocks[i] = s.locks.lock(id)
	}
	defer func() {
		for _, u := range unlocks {
			u()
		}
	}()

	out := make([]written, len(chunk))
	var free []int // indices into chunk still to write
	for i, p := range chunk {
		out[i].p = p
		if !upsert {
			switch _, err := s.store.GetTool(ctx, p.m.ToolID); {
			case err == nil:
				out[i].err = fmt.Errorf("tool already exists: %w", fault.ErrConflict)
				continue
			case !errors.Is(err, fault.ErrNotFound):
				out[i].err = err
				continue
			}
		}
		free = append(free, i)
	}
	if bu, ok := s.store.(BatchUpserter); ok && len(free) > 1 {
		if err := s.ensureEmbedder(ctx); err != nil {
			for _, i := range free {
				out[i].err = err
			}
			return out
		}
		tools := make([]graph.Tool, len(free))
		now := s.now().UTC()
		for j, i := range free {
			tools[j] = tool.ToGraph(chunk[i].m, chunk[i].vec)
			tools[j].UpdatedAt = now
		}
		if ups, err := bu.UpsertTools(ctx, tools); err == nil && len(ups) == len(free) {
			for j, i := range free {
				out[i].res = Result{ToolID: chunk[i].m.ToolID, Created: ups[j].Created, Revision: ups[j].Revision, Indexed: true, EmbeddingModel: s.model}
				s.closeGap(ctx, tools[j], &out[i].res)
			}
			return out
		}
		// The transaction wrote nothing: retry item by item to isolate the
		// bad one(s).
	}
	for _, i := range free {
		out[i].res, out[i].err = s.write(ctx, chunk[i].m, chunk[i].vec)
	}
	return out
}

// idHint reads the toolId of a request that failed validation, for the
// item result; "" when it cannot be read.
func idHint(req Request) string {
	var head struct {
		ToolID any `json:"toolId"`
	}
	if err := json.Unmarshal(req.Manifest, &head); err != nil {
		return ""
	}
	id, _ := head.ToolID.(string)
	return id
}
