package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/cursor"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// EmbedChunk is how many texts BatchRegister sends to the embedder at once.
const EmbedChunk = 64

// Request is the body of a registration. Top-level Examples
// and UseCases are merged into the manifest before validation; problems in
// them are reported as "examples[i]…" (outside the manifest), problems in the
// manifest as "manifest.…".
type Request struct {
	Manifest json.RawMessage `json:"manifest"`
	Examples []tool.Example  `json:"examples,omitempty"`
	UseCases []string        `json:"useCases,omitempty"`
	// ForceReindex re-embeds and rewrites a tool even when nothing changed.
	ForceReindex bool `json:"forceReindex,omitempty"`
}

// Result reports what Register or Update did.
type Result struct {
	ToolID  string `json:"toolId"`
	Created bool   `json:"created"`
	// Revision is the tool's revision after the call (1 for a new tool).
	Revision int `json:"revision"`
	// Indexed is true when the tool's record, vector and full-text row were
	// written by this call.
	Indexed bool `json:"indexed"`
	// Embedded is true when a fresh embedding was computed. An update whose
	// embedding text did not change reuses the stored vector (unless
	// ForceReindex), so Indexed can be true with Embedded false.
	Embedded bool `json:"embedded"`
	// Unchanged is true when Update found the manifest identical to the
	// stored one and, without ForceReindex, wrote nothing.
	Unchanged        bool   `json:"unchanged,omitempty"`
	EmbeddingModel   string `json:"embeddingModel,omitempty"`
	ShortDescription string `json:"shortDescription"`
	// ClosedGap is the capability gap this tool covered and closed: the
	// tool provides a verb that an earlier request found nothing for.
	ClosedGap string `json:"closedGap,omitempty"`
	// GapError says why an open gap for the verb could not be closed (the
	// tool itself is stored).
	GapError string `json:"gapError,omitempty"`
}

// Option configures a Service.
type Option func(*Service)

// WithOnChange sets a hook called with the tool id after every successful
// register, update or deprecate (retrieval hangs cache invalidation on it).
// It runs synchronously, after the write; it must not block for long.
func WithOnChange(f func(toolID string)) Option {
	return func(s *Service) { s.onChange = f }
}

// WithAfterBatch sets a hook called after every BatchRegister with the
// number of items it settled (the process trims its memory after bulk
// work). It runs synchronously; it must not block for long.
func WithAfterBatch(f func(items int)) Option {
	return func(s *Service) { s.afterBatch = f }
}

// WithClock sets the clock stamping UpdatedAt (tests pin it).
func WithClock(now func() time.Time) Option {
	return func(s *Service) { s.now = now }
}

// Service registers, updates, deprecates and reads tools. It is safe for
// concurrent use.
type Service struct {
	store    graph.Store
	emb      embed.Embedder
	onChange func(string)
	// afterBatch runs after each BatchRegister (WithAfterBatch).
	afterBatch func(int)
	now        func() time.Time

	model string // embedder name, "" when the embedder does not say
	dim   int    // embedder dimension, 0 when unknown

	ensureMu sync.Mutex
	ensured  bool

	locks keyedMutex
}

// New returns a Service writing to store and embedding with emb. When emb is
// an embed.Model, the Service records its name and dimension in the store
// (graph.Store.EnsureEmbedder) before the first write, so a store built with
// another model is refused with graph.ErrEmbedderMismatch.
func New(store graph.Store, emb embed.Embedder, opts ...Option) *Service {
	if store == nil {
		panic("registry: nil store")
	}
	if emb == nil {
		panic("registry: nil embedder")
	}
	s := &Service{store: store, emb: emb, now: time.Now}
	if m, ok := emb.(embed.Model); ok {
		s.model, s.dim = m.Name(), m.Dimension()
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Register validates, embeds and stores a new tool. An id that already
// exists is fault.ErrConflict; use Update to replace it.
func (s *Service) Register(ctx context.Context, req Request) (Result, error) {
	m, err := prepare(req, "")
	if err != nil {
		return Result{}, fmt.Errorf("registry: register: %w", err)
	}
	unlock := s.locks.lock(m.ToolID)
	defer unlock()
	switch _, err := s.store.GetTool(ctx, m.ToolID); {
	case err == nil:
		return Result{}, fmt.Errorf("registry: register %q: tool already exists (use update): %w", m.ToolID, fault.ErrConflict)
	case !errors.Is(err, fault.ErrNotFound):
		return Result{}, fmt.Errorf("registry: register %q: %w", m.ToolID, err)
	}
	vecs, err := s.embed(ctx, []string{tool.EmbeddingText(m)})
	if err != nil {
		return Result{}, fmt.Errorf("registry: register %q: %w", m.ToolID, err)
	}
	res, err := s.write(ctx, m, vecs[0])
	if err != nil {
		return Result{}, fmt.Errorf("registry: register %q: %w", m.ToolID, err)
	}
	res.Embedded = true
	s.changed(m.ToolID)
	return res, nil
}

// Update replaces an existing tool. The body's toolId may be omitted; when
// given it must equal id (a validation error on "manifest.toolId"
// otherwise). An identical manifest without ForceReindex writes nothing and
// reports Unchanged; a changed manifest whose embedding text is the same
// reuses the stored vector. Updating a deprecated tool with an active
// manifest re-activates it.
func (s *Service) Update(ctx context.Context, id string, req Request) (Result, error) {
	return s.UpdateVisible(ctx, id, req, nil)
}

// UpdateVisible is Update for a caller: a tool allow refuses is answered
// as an unknown id (fault.ErrNotFound), so a writer neither changes nor
// learns of a tool it may not see. A nil allow allows every tool.
func (s *Service) UpdateVisible(ctx context.Context, id string, req Request, allow func(*graph.ToolSummary) bool) (Result, error) {
	m, err := prepare(req, id)
	if err != nil {
		return Result{}, fmt.Errorf("registry: update %q: %w", id, err)
	}
	unlock := s.locks.lock(id)
	defer unlock()
	old, err := s.store.GetTool(ctx, id)
	if err == nil && allow != nil && !allow(&old.ToolSummary) {
		err = fault.ErrNotFound
	}
	if err != nil {
		return Result{}, s.readErr("update", id, err)
	}
	if keepOmitted(req, old, &m) {
		// What is kept was valid under the bounds of its day, which may
		// have tightened since (a stored list longer than today's bound).
		if err := tool.Validate(&m); err != nil {
			return Result{}, fmt.Errorf("registry: update %q: the use cases or examples kept from the stored tool: %w", id, prefixed(err, -1))
		}
	}
	plan := planUpdate(old, m, req.ForceReindex, s.dim)
	if plan.unchanged {
		rev, err := s.revision(ctx, id)
		if err != nil {
			return Result{}, fmt.Errorf("registry: update %q: %w", id, err)
		}
		return Result{ToolID: id, Revision: rev, Unchanged: true, EmbeddingModel: s.model, ShortDescription: m.ShortDescription}, nil
	}
	vec := plan.reuse
	if vec == nil {
		vecs, err := s.embed(ctx, []string{tool.EmbeddingText(m)})
		if err != nil {
			return Result{}, fmt.Errorf("registry: update %q: %w", id, err)
		}
		vec = vecs[0]
	}
	res, err := s.write(ctx, m, vec)
	if err != nil {
		return Result{}, fmt.Errorf("registry: update %q: %w", id, err)
	}
	res.Embedded = plan.reuse == nil
	s.changed(id)
	return res, nil
}

// Deprecate marks a tool deprecated with a reason; the tool and its history
// are kept and it can be re-activated by Update.
func (s *Service) Deprecate(ctx context.Context, id, reason string) error {
	return s.DeprecateVisible(ctx, id, reason, nil)
}

// DeprecateVisible is Deprecate for a caller: a tool allow refuses is
// answered as an unknown id (fault.ErrNotFound). A nil allow allows every
// tool.
func (s *Service) DeprecateVisible(ctx context.Context, id, reason string, allow func(*graph.ToolSummary) bool) error {
	if i := tool.ControlAt(reason); i >= 0 {
		return fault.Malformed("reason", "must not contain control characters, got %U at byte %d", []rune(reason[i:])[0], i)
	}
	unlock := s.locks.lock(id)
	defer unlock()
	old, err := s.store.GetTool(ctx, id)
	if err == nil && allow != nil && !allow(&old.ToolSummary) {
		err = fault.ErrNotFound
	}
	if err != nil {
		return s.readErr("deprecate", id, err)
	}
	if old.Status == graph.StatusDeprecated {
		// Idempotent: deprecating a deprecated tool again changes nothing
		// and adds no revision (its first reason stands).
		return nil
	}
	if err := s.store.SetStatus(ctx, id, graph.StatusDeprecated, reason); err != nil {
		return s.readErr("deprecate", id, err)
	}
	s.changed(id)
	return nil
}

// Get returns a tool whatever its status; an unknown id is fault.ErrNotFound.
func (s *Service) Get(ctx context.Context, id string) (graph.Tool, error) {
	t, err := s.store.GetTool(ctx, id)
	if err != nil {
		return graph.Tool{}, s.readErr("get", id, err)
	}
	return t, nil
}

// GetVisible returns a tool as a caller allowed by allow may see it: a tool
// it may not see is ErrNotFound (like an unknown one), and edges to tools it
// may not see are left out, both from Relations and from the manifest's
// relationships, so no read names a tool the caller could not execute.
func (s *Service) GetVisible(ctx context.Context, id string, allow func(*graph.ToolSummary) bool) (graph.Tool, error) {
	t, err := s.Get(ctx, id)
	if err != nil {
		return graph.Tool{}, err
	}
	if !allow(&t.ToolSummary) {
		return graph.Tool{}, s.readErr("get", id, fault.ErrNotFound)
	}
	v := &visibility{s: s, allow: allow, shown: map[string]bool{}}
	kept := t.Relations[:0:0]
	for _, r := range t.Relations {
		ok, err := v.visible(ctx, r.Target)
		if err != nil {
			return graph.Tool{}, err
		}
		if ok {
			kept = append(kept, r)
		}
	}
	t.Relations = kept
	if t.Manifest, err = v.manifest(ctx, t.Manifest); err != nil {
		return graph.Tool{}, err
	}
	return t, nil
}

// HistoryVisible is History for a caller allowed by allow: the tool must be
// visible (else ErrNotFound) and each revision's manifest names only tools
// the caller may see.
func (s *Service) HistoryVisible(ctx context.Context, id string, allow func(*graph.ToolSummary) bool) ([]graph.Revision, error) {
	if _, err := s.GetVisible(ctx, id, allow); err != nil {
		return nil, err
	}
	revs, err := s.History(ctx, id)
	if err != nil {
		return nil, err
	}
	v := &visibility{s: s, allow: allow, shown: map[string]bool{}}
	for i := range revs {
		if revs[i].Manifest, err = v.manifest(ctx, revs[i].Manifest); err != nil {
			return nil, err
		}
	}
	return revs, nil
}

// visibility answers, once per tool id, whether a caller may see a tool.
type visibility struct {
	s     *Service
	allow func(*graph.ToolSummary) bool
	shown map[string]bool
}

func (v *visibility) visible(ctx context.Context, id string) (bool, error) {
	if ok, seen := v.shown[id]; seen {
		return ok, nil
	}
	t, err := v.s.store.GetTool(ctx, id)
	ok := false
	switch {
	case err == nil:
		ok = v.allow(&t.ToolSummary)
	case errors.Is(err, fault.ErrNotFound):
		// a placeholder for a tool not registered yet: nothing to show
	default:
		return false, v.s.readErr("get", id, err)
	}
	v.shown[id] = ok
	return ok, nil
}

// manifest removes the relationships to tools the caller may not see from
// a manifest; a manifest without hidden targets is returned unchanged.
func (v *visibility) manifest(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return raw, nil
	}
	var m tool.Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Relationships == nil {
		return raw, nil
	}
	hidden := false
	hide := func(id string) bool {
		ok, err := v.visible(ctx, id)
		if err != nil || !ok {
			hidden = true
			return true
		}
		return false
	}
	rel := m.Relationships
	rel.Dependencies = slices.DeleteFunc(rel.Dependencies, hide)
	rel.Alternatives = slices.DeleteFunc(rel.Alternatives, hide)
	rel.Pairings = slices.DeleteFunc(rel.Pairings, func(p tool.Pairing) bool { return hide(p.ToolID) })
	if !hidden {
		return raw, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("registry: manifest %q: %w", m.ToolID, err)
	}
	return b, nil
}

// History returns a tool's revisions, oldest first.
func (s *Service) History(ctx context.Context, id string) ([]graph.Revision, error) {
	h, err := s.store.History(ctx, id)
	if err != nil {
		return nil, s.readErr("history", id, err)
	}
	return h, nil
}

// List pages through the lightweight index.
func (s *Service) List(ctx context.Context, q graph.ListQuery) (graph.ToolPage, error) {
	p, err := s.store.ListTools(ctx, q)
	if err != nil {
		return graph.ToolPage{}, fmt.Errorf("registry: list: %w", err)
	}
	return p, nil
}

// pageLabel names the catalogue's cursors (internal/cursor).
const pageLabel = "toolsmith tools by id"

// Page is List for callers outside (REST, the console): after is the
// Next of a previous page ("" for the first), and the page's Next is
// sealed, so a cursor the service did not issue ("bad", a tool id typed
// by hand, another list's) is a ValidationError on "cursor" instead of
// the page after whatever it names.
func (s *Service) Page(ctx context.Context, f graph.Filter, limit int, after string) (graph.ToolPage, error) {
	q := graph.ListQuery{Limit: limit, Filter: f}
	if after != "" {
		id, ok := cursor.Open(pageLabel, after)
		if !ok {
			return graph.ToolPage{}, fault.Malformed("cursor", "must be the nextCursor of a previous page, got %q", after)
		}
		q.After = string(id)
	}
	p, err := s.List(ctx, q)
	if err != nil {
		return graph.ToolPage{}, err
	}
	if p.Next != "" {
		p.Next = cursor.Seal(pageLabel, []byte(p.Next))
	}
	return p, nil
}

// readErr names the operation and the tool on a store error; a missing
// tool stays fault.ErrNotFound for the edges to map.
func (s *Service) readErr(op, id string, err error) error {
	return fmt.Errorf("registry: %s %q: %w", op, id, err)
}

func (s *Service) changed(id string) {
	if s.onChange != nil {
		s.onChange(id)
	}
}

// ensureEmbedder records the embedder in the store once (it is idempotent in
// the store, but one call per process is enough).
func (s *Service) ensureEmbedder(ctx context.Context) error {
	if s.model == "" || s.dim == 0 {
		return nil
	}
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	if s.ensured {
		return nil
	}
	if err := s.store.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: s.model, Dimension: s.dim}); err != nil {
		return fmt.Errorf("record embedder: %w", err)
	}
	s.ensured = true
	return nil
}

// embed embeds texts in one call and checks the vectors' count and length.
// Embedder failures are fault.ErrUnavailable: the input was fine.
func (s *Service) embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := s.emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed: %w: %w", fault.ErrUnavailable, err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: embedder returned %d vectors for %d texts: %w", len(vecs), len(texts), fault.ErrUnavailable)
	}
	for i, v := range vecs {
		if len(v) == 0 || s.dim > 0 && len(v) != s.dim {
			return nil, fmt.Errorf("embed: vector %d has dimension %d, want %d: %w", i, len(v), s.dim, graph.ErrDimension)
		}
	}
	return vecs, nil
}

// write is the single store write of a registration.
func (s *Service) write(ctx context.Context, m tool.Manifest, vec []float32) (Result, error) {
	if err := s.ensureEmbedder(ctx); err != nil {
		return Result{}, err
	}
	t := tool.ToGraph(m, vec)
	if len(t.Manifest) == 0 {
		return Result{}, fmt.Errorf("manifest does not encode as JSON: %w", fault.ErrInvalid)
	}
	t.UpdatedAt = s.now().UTC()
	up, err := s.store.UpsertTool(ctx, t)
	if err != nil {
		return Result{}, fmt.Errorf("store: %w", err)
	}
	res := Result{
		ToolID:           m.ToolID,
		Created:          up.Created,
		Revision:         up.Revision,
		Indexed:          true,
		EmbeddingModel:   s.model,
		ShortDescription: m.ShortDescription,
	}
	s.closeGap(ctx, t, &res)
	return res, nil
}

// closeGap closes the gap of the verb an active tool t provides (a verb
// nothing could fulfil until now), saying so in res; every registration
// path, single or batch, calls it once the tool is written.
func (s *Service) closeGap(ctx context.Context, t graph.Tool, res *Result) {
	if t.Status != "" && t.Status != graph.StatusActive {
		return
	}
	closed, err := s.store.CloseGap(ctx, t.Verb, t.ID, t.UpdatedAt)
	switch {
	case err != nil:
		res.GapError = err.Error()
	case closed:
		res.ClosedGap = t.Verb
	}
}

func (s *Service) revision(ctx context.Context, id string) (int, error) {
	h, err := s.store.History(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	if len(h) == 0 {
		return 0, nil
	}
	return h[len(h)-1].Revision, nil
}

// updatePlan says what an update of an existing tool needs.
type updatePlan struct {
	unchanged bool      // nothing to write
	reuse     []float32 // the stored vector, when the embedding text is the same
}

func planUpdate(old graph.Tool, m tool.Manifest, force bool, dim int) updatePlan {
	if force {
		return updatePlan{}
	}
	prev, err := tool.Parse(old.Manifest)
	if err != nil {
		return updatePlan{}
	}
	tool.Normalize(&prev)
	newRaw, err1 := json.Marshal(m)
	oldRaw, err2 := json.Marshal(prev)
	if err1 == nil && err2 == nil && bytes.Equal(newRaw, oldRaw) && old.Status == m.Status && len(old.Embedding) > 0 {
		return updatePlan{unchanged: true}
	}
	if len(old.Embedding) > 0 && (dim == 0 || len(old.Embedding) == dim) && tool.EmbeddingText(prev) == tool.EmbeddingText(m) {
		return updatePlan{reuse: old.Embedding}
	}
	return updatePlan{}
}

// keepOmitted carries the stored tool's use cases and examples into an
// update that does not mention them (neither in the manifest nor beside
// it), so a PUT of only the manifest does not silently drop them. An
// explicit empty list ("useCases": []) still clears them. It reports
// whether it kept any.
func keepOmitted(req Request, old graph.Tool, m *tool.Manifest) (kept bool) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(req.Manifest, &keys) != nil {
		return false
	}
	prev, err := tool.Parse(old.Manifest)
	if err != nil {
		return false
	}
	if _, ok := keys["useCases"]; !ok && req.UseCases == nil && len(prev.UseCases) > 0 {
		m.UseCases, kept = prev.UseCases, true
	}
	if _, ok := keys["examples"]; !ok && req.Examples == nil && len(prev.Examples) > 0 {
		m.Examples, kept = prev.Examples, true
	}
	return kept
}

// prepare turns a request into a normalized, valid manifest. pathID, when
// set, is the id of the URL (Update): an empty body id takes it, a different
// one is an error on "manifest.toolId".
func prepare(req Request, pathID string) (tool.Manifest, error) {
	if len(bytes.TrimSpace(req.Manifest)) == 0 || string(bytes.TrimSpace(req.Manifest)) == "null" {
		return tool.Manifest{}, fault.Malformed("manifest", "is required")
	}
	m, err := tool.Parse(req.Manifest)
	if err != nil {
		return tool.Manifest{}, prefixed(err, -1)
	}
	// The request's own lists are bounded before they are merged (the
	// merge compares every use case with the manifest's).
	reqErr := &fault.ValidationError{}
	if len(req.Examples) > tool.MaxExamples {
		reqErr.Add("examples", "must have at most %d items, got %d", tool.MaxExamples, len(req.Examples))
	}
	if len(req.UseCases) > tool.MaxListItems {
		reqErr.Add("useCases", "must have at most %d items, got %d", tool.MaxListItems, len(req.UseCases))
	}
	if err := reqErr.Err(); err != nil {
		return tool.Manifest{}, err
	}
	own := len(m.Examples)
	m.Examples = append(m.Examples, req.Examples...)
	for _, u := range req.UseCases {
		if !slices.Contains(m.UseCases, u) {
			m.UseCases = append(m.UseCases, u)
		}
	}
	verr := &fault.ValidationError{}
	if pathID != "" {
		switch {
		case m.ToolID == "":
			m.ToolID = pathID
		case m.ToolID != pathID:
			verr.Add("manifest.toolId", "must equal the tool id of the URL %q, got %q", pathID, m.ToolID)
		}
	}
	tool.Normalize(&m)
	if err := tool.Validate(&m); err != nil {
		verr.Fields = append(verr.Fields, fault.Fields(prefixed(err, own))...)
	}
	if err := verr.Err(); err != nil {
		return tool.Manifest{}, err
	}
	return m, nil
}

var exampleIndex = regexp.MustCompile(`^examples\[(\d+)\]`)

// prefixed rewrites a manifest ValidationError's paths for the request:
// "inputSchema.x" → "manifest.inputSchema.x", and the examples merged from the
// request's top level (index ≥ own, when own ≥ 0) back to "examples[i-own]…".
func prefixed(err error, own int) error {
	var ve *fault.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	out := &fault.ValidationError{Malformed: ve.Malformed}
	for _, f := range ve.Fields {
		p := f.Path
		if sm := exampleIndex.FindStringSubmatch(p); sm != nil {
			if i, _ := strconv.Atoi(sm[1]); own >= 0 && i >= own {
				out.Add("examples["+strconv.Itoa(i-own)+"]"+p[len(sm[0]):], "%s", f.Message)
				continue
			}
		}
		if p == "" {
			p = "manifest"
		} else {
			p = "manifest." + p
		}
		out.Add(p, "%s", f.Message)
	}
	return out
}

// keyedMutex serialises work on one tool id within this process, so that two
// concurrent Registers of the same id cannot both pass the existence check.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}

// MaxSortedByUse bounds how many matching tools ListByUse reads and sorts;
// a catalogue larger than that is sorted over its first MaxSortedByUse
// matches by id (the page says so with Truncated).
const MaxSortedByUse = 20000

// UsedTool is a tool's summary with how often it was used.
type UsedTool struct {
	graph.ToolSummary
	Uses      int `json:"uses"`
	Successes int `json:"successes"`
}

// UsePage is one page of ListByUse.
type UsePage struct {
	Items []UsedTool `json:"items"`
	// Next is the offset of the following page, 0 on the last.
	Next int `json:"next,omitempty"`
	// Matched counts the tools the filter matched (and the caller may see).
	Matched int `json:"matched"`
	// Truncated is set when more than MaxSortedByUse tools matched.
	Truncated bool `json:"truncated,omitempty"`
}

// ListByUse pages through the tools f matches, most used first (then by
// id): it reads every match, so offset and limit page a stable order.
func (s *Service) ListByUse(ctx context.Context, f graph.Filter, offset, limit int) (UsePage, error) {
	if limit <= 0 {
		limit = 100
	}
	var all []graph.ToolSummary
	truncated := false
	for after := ""; ; {
		p, err := s.store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000, Filter: f})
		if err != nil {
			return UsePage{}, fmt.Errorf("registry: list by use: %w", err)
		}
		all = append(all, p.Items...)
		if len(all) >= MaxSortedByUse {
			all, truncated = all[:MaxSortedByUse], p.Next != "" || len(all) > MaxSortedByUse
			break
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	use := map[string]graph.Usage{}
	for i := 0; i < len(all); i += 1000 {
		ids := make([]string, 0, 1000)
		for _, t := range all[i:min(i+1000, len(all))] {
			ids = append(ids, t.ID)
		}
		u, err := s.store.Usage(ctx, ids)
		if err != nil {
			return UsePage{}, fmt.Errorf("registry: list by use: usage: %w", err)
		}
		maps.Copy(use, u)
	}
	items := make([]UsedTool, len(all))
	for i, t := range all {
		items[i] = UsedTool{ToolSummary: t, Uses: use[t.ID].Uses, Successes: use[t.ID].Successes}
	}
	slices.SortStableFunc(items, func(a, b UsedTool) int {
		if a.Uses != b.Uses {
			return b.Uses - a.Uses
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := UsePage{Matched: len(items), Truncated: truncated, Items: []UsedTool{}}
	if offset < len(items) {
		end := min(offset+limit, len(items))
		out.Items = items[offset:end]
		if end < len(items) {
			out.Next = end
		}
	}
	return out, nil
}
