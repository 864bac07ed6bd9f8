package airlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/tool"
)

// Files is the airlock's place on disk: fetched specs by content hash, and
// one directory per onboarded wrapper holding its module, its binary and its
// approval. It lives under the data directory. With Shared set (the store)
// each approval is also kept there with its spec, for every worker and API
// replica: see CurrentApproval and Runtime.
type Files struct {
	Root   string
	Shared Shared
	mu     sync.Mutex
}

// Shared is what the airlock keeps in the store for every worker and API
// replica: each wrapper's current approval with its spec, and each
// wrapper's health record (a snapshot named HealthSnapshot(slug)).
type Shared interface {
	graph.WrapperApprovals
	graph.Snapshots
}

// HealthSnapshot names the snapshot that holds a wrapper's health record.
func HealthSnapshot(slug string) string { return "airlock.health." + slug }

var hashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// PutSpec stores a spec document under its sha256 and returns the hash:
// on disk and, with Shared, in the store (a snapshot named
// SpecSnapshot(hash)), so the worker that reviews or approves it need not
// be the one that fetched it.
func (f *Files) PutSpec(ctx context.Context, data []byte) (string, error) {
	h, err := f.putLocalSpec(data)
	if err != nil || f.Shared == nil {
		return h, err
	}
	doc, err := json.Marshal(string(data))
	if err != nil {
		return "", fmt.Errorf("airlock: store spec: %w", err)
	}
	if err := f.Shared.PutSnapshot(ctx, graph.Snapshot{Name: SpecSnapshot(h), At: time.Now().UTC(), Data: doc}); err != nil {
		return "", fmt.Errorf("airlock: store spec %s: %w", h[:12], err)
	}
	return h, nil
}

// SpecSnapshot names the snapshot that holds a fetched spec document.
func SpecSnapshot(hash string) string { return "airlock.spec." + hash }

// putLocalSpec writes a spec document under its sha256 in this data dir.
func (f *Files) putLocalSpec(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	p := filepath.Join(f.Root, "specs", h)
	if _, err := os.Stat(p); err == nil {
		return h, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("airlock: store spec: %w", err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return "", fmt.Errorf("airlock: store spec: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("airlock: store spec: %w", err)
	}
	return h, nil
}

// Spec reads a stored spec document: from this data dir, else (with
// Shared) from the store, keeping a copy on disk.
func (f *Files) Spec(ctx context.Context, hash string) ([]byte, error) {
	if !hashRE.MatchString(hash) {
		return nil, fmt.Errorf("airlock: spec %q: not a sha256: %w", hash, fault.ErrInvalid)
	}
	b, err := os.ReadFile(filepath.Join(f.Root, "specs", hash))
	if errors.Is(err, os.ErrNotExist) && f.Shared != nil {
		return f.sharedSpec(ctx, hash)
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("airlock: spec %s: %w", hash[:12], fault.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("airlock: read spec: %w", err)
	}
	return b, nil
}

// sharedSpec reads a spec document from the store and keeps it on disk.
func (f *Files) sharedSpec(ctx context.Context, hash string) ([]byte, error) {
	snap, err := f.Shared.GetSnapshot(ctx, SpecSnapshot(hash))
	if errors.Is(err, fault.ErrNotFound) {
		return nil, fmt.Errorf("airlock: spec %s: %w", hash[:12], fault.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("airlock: read spec %s: %w", hash[:12], err)
	}
	var doc string
	if err := json.Unmarshal(snap.Data, &doc); err != nil {
		return nil, fmt.Errorf("airlock: spec %s: %w", hash[:12], err)
	}
	got, err := f.putLocalSpec([]byte(doc))
	if err != nil {
		return nil, err
	}
	if got != hash {
		return nil, fmt.Errorf("airlock: the store's spec %s hashes to %s: %w", hash[:12], got[:12], fault.ErrUnavailable)
	}
	return []byte(doc), nil
}

// WrapperDir is where a wrapper's module and binary live.
func (f *Files) WrapperDir(slug string) string { return filepath.Join(f.Root, "wrappers", slug) }

// SaveApproval records an approval next to its wrapper.
func (f *Files) SaveApproval(a Approval) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return fmt.Errorf("airlock: save approval: %w", err)
	}
	p := filepath.Join(f.WrapperDir(a.Slug), "approval.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("airlock: save approval: %w", err)
	}
	if err := os.WriteFile(p+".tmp", b, 0o644); err != nil {
		return fmt.Errorf("airlock: save approval: %w", err)
	}
	return os.Rename(p+".tmp", p)
}

// Approval loads the approval of a wrapper by slug.
func (f *Files) Approval(slug string) (Approval, error) {
	b, err := os.ReadFile(filepath.Join(f.WrapperDir(slug), "approval.json"))
	if errors.Is(err, os.ErrNotExist) {
		return Approval{}, fmt.Errorf("airlock: no approval for %q: %w", slug, fault.ErrNotFound)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("airlock: read approval: %w", err)
	}
	var a Approval
	if err := json.Unmarshal(b, &a); err != nil {
		return Approval{}, fmt.Errorf("airlock: approval of %q: %w", slug, err)
	}
	return a, nil
}

// Review is what a reviewer sees of a pending spec.
type Review struct {
	SpecHash    string            `json:"specHash"`
	Location    string            `json:"location"`
	Slug        string            `json:"slug"`
	Title       string            `json:"title"`
	Description string            `json:"description,omitempty"`
	Version     string            `json:"version,omitempty"`
	License     string            `json:"license,omitempty"`
	Servers     []string          `json:"servers"`
	AuthSchemes []string          `json:"authSchemes"`
	Operations  []ReviewOperation `json:"operations"`
	Warnings    []string          `json:"warnings"`
	// NameTakenBy names the spec that already uses the name this spec's
	// title gives; Slug is then the name it gets instead.
	NameTakenBy string `json:"nameTakenBy,omitempty"`
	// NamePending is true when NameTakenBy is another pending review,
	// which reserved the name first.
	NamePending bool `json:"namePending,omitempty"`
}

// NameReview reserves the wrapper name of the reviewed spec (ReserveName)
// and gives it to the review, so the review shows the name an approval
// gives, and warns when the title's name is already another spec's, an
// approved one or one pending review.
func (f *Files) NameReview(r *Review, n *codegen.Normalised) error {
	choice, err := f.ReserveName(n.Doc, r.Location, r.SpecHash)
	if errors.Is(err, fault.ErrConflict) {
		r.Warnings = append(r.Warnings, err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	r.Slug = choice.Name
	if w := choice.Warning(); w != "" {
		r.NameTakenBy, r.NamePending = choice.TakenBy, choice.Reserved
		r.Warnings = append(r.Warnings, w)
	}
	return nil
}

// ReviewOperation is one operation of a pending spec.
type ReviewOperation struct {
	Name        string   `json:"name"`
	Method      string   `json:"method"`
	Path        string   `json:"path"`
	OperationID string   `json:"operationId,omitempty"`
	Summary     string   `json:"summary,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// BuildReview summarises a spec for its reviewer.
func BuildReview(n *codegen.Normalised, hash, location string) Review {
	r := Review{SpecHash: hash, Location: location, Slug: Slug(n.Doc, strings.TrimSuffix(filepath.Base(location), filepath.Ext(location))),
		Warnings: append([]string{}, n.Warnings...), Servers: []string{}, AuthSchemes: []string{}}
	if info := n.Doc.Info; info != nil {
		r.Title, r.Version = info.Title, info.Version
		r.Description = clip(strings.Join(strings.Fields(info.Description), " "), 1000)
		if info.License != nil {
			r.License = info.License.Name
		}
	}
	for _, s := range n.Doc.Servers {
		if s != nil {
			r.Servers = append(r.Servers, s.URL)
		}
	}
	if n.Doc.Components != nil {
		names := make([]string, 0, len(n.Doc.Components.SecuritySchemes))
		for name, ref := range n.Doc.Components.SecuritySchemes {
			if ref != nil && ref.Value != nil {
				names = append(names, name+" ("+describeScheme(ref.Value)+")")
			}
		}
		sort.Strings(names)
		r.AuthSchemes = names
	}
	for _, t := range kit.Operations(n.Doc) {
		r.Operations = append(r.Operations, ReviewOperation{Name: t.Name, Method: t.Method, Path: t.Path, OperationID: t.OperationID, Summary: t.Summary, Tags: t.Tags})
	}
	if len(r.Servers) == 0 {
		r.Warnings = append(r.Warnings, "the spec names no server: approve with a baseUrl")
	}
	return r
}

func describeScheme(s *openapi3.SecurityScheme) string {
	switch s.Type {
	case "apiKey":
		return "apiKey in " + s.In + " " + s.Name
	case "http":
		return "http " + s.Scheme
	default:
		return s.Type
	}
}

// ScanReport is what scanning one source found.
type ScanReport struct {
	SourceID    string   `json:"sourceId"`
	Specs       int      `json:"specs"`
	New         []string `json:"newSpecs"` // hashes of specs seen for the first time
	Known       int      `json:"known"`
	Definitions int      `json:"definitions"`
	Errors      []string `json:"errors,omitempty"`
}

// Scanner fetches sources and indexes their specs as external definitions.
type Scanner struct {
	Fetcher     *Fetcher
	Files       *Files
	Definitions graph.Definitions
	Embedder    embed.Embedder
	Now         func() time.Time
}

// Scan fetches a source, skips specs already known (by content hash), and
// indexes each new spec's operations as available definitions. The source's
// scan time, spec count and last error are updated.
func (s *Scanner) Scan(ctx context.Context, sourceID string) (ScanReport, error) {
	rep := ScanReport{SourceID: sourceID, New: []string{}}
	src, err := s.Definitions.GetSource(ctx, sourceID)
	if err != nil {
		return rep, err
	}
	specs, errs, err := s.Fetcher.Scan(ctx, Source{ID: src.ID, Type: src.Type, Location: src.Location})
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	src.LastScannedAt = now()
	if err != nil {
		src.LastError = err.Error()
		_ = s.Definitions.PutSource(ctx, src)
		return rep, fmt.Errorf("airlock: scan %s: %w", sourceID, err)
	}
	for _, e := range errs {
		rep.Errors = append(rep.Errors, e.Error())
	}
	rep.Specs = len(specs)
	for _, spec := range specs {
		known, err := s.Definitions.SpecDefinitions(ctx, spec.Hash)
		if err != nil {
			return rep, err
		}
		if len(known) > 0 {
			rep.Known++
			continue
		}
		n, err := codegen.Normalise(ctx, spec.Data)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", spec.Location, err))
			continue
		}
		if _, err := s.Files.PutSpec(ctx, spec.Data); err != nil {
			return rep, err
		}
		defs := Definitions(n, spec)
		texts := make([]string, len(defs))
		for i, d := range defs {
			texts[i] = d.Text()
		}
		vecs, err := s.Embedder.EmbedDocuments(ctx, texts)
		if err != nil {
			return rep, fmt.Errorf("airlock: embed definitions of %s: %w", spec.Location, err)
		}
		rows := make([]graph.Definition, len(defs))
		for i, d := range defs {
			rows[i] = graph.Definition{ID: d.ID, Location: d.Location, Slug: d.Slug, API: d.API, Name: d.Tool.Name,
				Method: d.Tool.Method, Path: d.Tool.Path, Description: d.Description, Tags: d.Tool.Tags,
				Status: graph.DefinitionAvailable, Embedding: vecs[i]}
		}
		if err := s.Definitions.PutDefinitions(ctx, src.ID, spec.Hash, rows); err != nil {
			return rep, err
		}
		rep.New = append(rep.New, spec.Hash)
		rep.Definitions += len(rows)
	}
	src.Specs = rep.Specs
	src.LastError = strings.Join(rep.Errors, "; ")
	if len(src.LastError) > 2000 {
		src.LastError = src.LastError[:2000] + "…"
	}
	if err := s.Definitions.PutSource(ctx, src); err != nil {
		return rep, err
	}
	return rep, nil
}

// ToolRegistrar registers manifests (registry.Service satisfies it through
// RegistryRegistrar).
type ToolRegistrar interface {
	RegisterManifests(ctx context.Context, ms []tool.Manifest) ([]string, error)
	// RetireTools deprecates, with reason, every active tool of the wrapper
	// (ids "<wrapper>.<operation>") that keep does not list, and returns
	// their ids.
	RetireTools(ctx context.Context, wrapper string, keep []string, reason string) ([]string, error)
}

// Onboarding approves a reviewed spec: builds and tests its wrapper,
// registers its tools and records the approval for execution.
type Onboarding struct {
	Onboarder   *Onboarder
	Files       *Files
	Definitions graph.Definitions
	Registrar   ToolRegistrar
	// Catalogue, when set, is read for tools of the wrapper's name that
	// the spec did not register (ForeignTools): an approval never
	// replaces or deprecates them.
	Catalogue ToolLister
	Now       func() time.Time
}

// Result of an approval.
type Result struct {
	Outcome Outcome  `json:"outcome"`
	ToolIDs []string `json:"toolIds,omitempty"`
	// Retired are the wrapper's tools an earlier approval registered that
	// this one leaves out: they are deprecated, since the new wrapper
	// cannot run them.
	Retired []string `json:"retired,omitempty"`
}

// Approve onboards the spec with the policy. An onboarding failure is a
// Result whose Outcome says which stage failed; a Go error means the
// airlock itself could not work (spec missing, store down).
//
// The wrapper is named by ClaimWrapperName, so a spec never takes over
// another spec's name, and it is built in a new directory: the wrapper an
// earlier approval of the same spec runs stays in place until this one is
// built, tested, registered and recorded, so a failed approval never
// breaks tools that are already active. A re-approval replaces the whole
// wrapper: the spec's tools it does not include (fewer operations, an
// operation the new version dropped) are deprecated with a reason naming
// the approval, and a later approval that includes them again re-activates
// them.
func (o *Onboarding) Approve(ctx context.Context, approvalID, specHash, location string, p Policy) (Result, error) {
	data, err := o.Files.Spec(ctx, specHash)
	if err != nil {
		return Result{}, err
	}
	n, err := codegen.Normalise(ctx, data)
	if err != nil {
		return Result{Outcome: Outcome{Stage: StageLoad, Error: err.Error()}}, nil
	}
	choice, err := o.Files.ClaimWrapperName(n.Doc, location, approvalID)
	if err != nil {
		return Result{}, err
	}
	// Names are claimed in each data dir; the store knows the approvals
	// made on every worker. A name another spec's approval holds there is
	// not taken over.
	if err := o.Files.nameFree(ctx, choice.Name, location); err != nil {
		return Result{}, err
	}
	// The review service refuses such an approval before it is sent; this
	// is the check for one sent while its review was still being prepared.
	if o.Catalogue != nil {
		held, err := ForeignTools(ctx, o.Catalogue, choice.Name, location)
		if err != nil {
			return Result{}, err
		}
		if len(held) > 0 {
			return Result{Outcome: Outcome{Slug: choice.Name, Stage: StageManifest, Error: fmt.Sprintf(
				"the name %q is held by %d catalogue tool(s) this spec did not onboard: nothing was registered or deprecated", choice.Name, len(held))}}, nil
		}
	}
	info := SpecInfo{URL: location, Slug: choice.Name}
	build, err := os.MkdirTemp(o.Files.WrapperDir(choice.Name), "build-")
	if err != nil {
		return Result{}, fmt.Errorf("airlock: build directory: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			_ = os.RemoveAll(build)
		}
	}()
	ob := *o.Onboarder
	ob.WorkDir = build
	out := ob.Onboard(ctx, data, info, p)
	if w := choice.Warning(); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	if !out.OK() {
		return Result{Outcome: out}, nil
	}
	ids, err := o.Registrar.RegisterManifests(ctx, out.Manifests)
	if err != nil {
		out.Stage, out.Error = StageManifest, err.Error()
		return Result{Outcome: out}, nil
	}
	base := p.BaseURL
	if base == "" {
		base, _ = BaseURL(n, p)
	}
	previous, _ := o.Files.Approval(choice.Name)
	a := Approval{ID: approvalID, Slug: out.Slug, Location: location, SpecHash: specHash, SourceHash: out.SourceHash, Binary: out.Binary, Policy: p, BaseURL: base, ToolIDs: ids}
	if err := o.Files.share(ctx, a, data); err != nil {
		return Result{}, err
	}
	if err := o.Files.SaveApproval(a); err != nil {
		return Result{}, err
	}
	kept = true
	o.Files.removeBuild(choice.Name, previous.Binary, build)
	_ = os.Remove(filepath.Join(o.Files.WrapperDir(choice.Name), reservedPrefix+specHash[:16])) // the approval holds the name now
	reason := fmt.Sprintf("not in approval %s of %s (approved: %s)", approvalID, location, strings.Join(ids, ", "))
	retired, err := o.Registrar.RetireTools(ctx, choice.Name, ids, reason)
	if err != nil {
		return Result{}, fmt.Errorf("airlock: retire the tools approval %s leaves out: %w", approvalID, err)
	}
	if len(retired) > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("deprecated %s: %s", strings.Join(retired, ", "), reason))
	}
	if err := o.Definitions.SetSpecStatus(ctx, specHash, graph.DefinitionOnboarded); err != nil && !errors.Is(err, fault.ErrNotFound) {
		return Result{}, err
	}
	return Result{Outcome: out, ToolIDs: ids, Retired: retired}, nil
}

// nameFree checks that no other spec's approval holds name in the store.
func (f *Files) nameFree(ctx context.Context, name, location string) error {
	sa, ok, err := f.sharedApproval(ctx, name)
	if err != nil || !ok {
		return err
	}
	var a Approval
	if err := json.Unmarshal(sa.Record, &a); err != nil {
		return fmt.Errorf("airlock: approval of %q: %w", name, err)
	}
	if a.Location != location {
		return fmt.Errorf("airlock: the wrapper name %q is held by approval %s of %s, made on another worker: %w", name, a.ID, a.Location, fault.ErrConflict)
	}
	return nil
}

// share records the approval and its spec in the shared store, without
// the binary's path, which is this worker's own.
func (f *Files) share(ctx context.Context, a Approval, spec []byte) error {
	if f.Shared == nil {
		return nil
	}
	a.Binary = ""
	rec, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("airlock: share approval %s: %w", a.ID, err)
	}
	err = f.Shared.PutWrapperApproval(ctx, graph.WrapperApproval{Slug: a.Slug, ApprovalID: a.ID, SpecHash: a.SpecHash, Spec: string(spec), Record: rec})
	if err != nil {
		return fmt.Errorf("airlock: share approval %s: %w", a.ID, err)
	}
	return nil
}

// removeBuild deletes the build directory of a replaced approval's binary
// (a "build-" directory of the same wrapper other than current).
func (f *Files) removeBuild(name, binary, current string) {
	if binary == "" {
		return
	}
	old := filepath.Dir(filepath.Dir(binary))
	if filepath.Dir(old) == f.WrapperDir(name) && strings.HasPrefix(filepath.Base(old), "build-") && old != current {
		_ = os.RemoveAll(old)
	}
}

// Runtime runs onboarded tools: it finds a tool's approval by the slug that
// prefixes its id and executes the approved wrapper under its policies.
//
// With Files.Shared set (the store), the approval that counts is the store's:
// a worker that lacks its wrapper (the approval was made through another
// worker or host), or holds an older approval's, rebuilds it from the
// approved spec and policy with Builder (generate, compile, run the
// generated test) before the call, and refuses to run it unless the
// generated sources hash to the approval's SourceHash. A wrapper is built
// once per worker and approval; later calls run the binary on disk.
type Runtime struct {
	Files    *Files
	Executor *Executor
	Builder  *Onboarder

	mu sync.Mutex // one rebuild at a time
}

// RunWrapped executes tool "<slug>.<name>".
func (r *Runtime) RunWrapped(ctx context.Context, toolID string, args map[string]any, caller access.Caller) (kit.Result, error) {
	slug, name, ok := strings.Cut(toolID, ".")
	if !ok {
		return kit.Result{}, fmt.Errorf("airlock: tool id %q is not <wrapper>.<operation>: %w", toolID, fault.ErrInvalid)
	}
	a, err := r.approval(ctx, slug)
	if err != nil {
		return kit.Result{}, err
	}
	if len(a.ToolIDs) > 0 && !slices.Contains(a.ToolIDs, toolID) {
		return kit.Result{}, fmt.Errorf("airlock: tool %q is not in approval %s of %s (approved: %s): %w",
			toolID, a.ID, a.Location, strings.Join(a.ToolIDs, ", "), fault.ErrNotFound)
	}
	return r.Executor.Execute(ctx, a, name, args, caller)
}

// approval returns the current approval of a wrapper with a binary on
// this worker's disk, rebuilding it when needed (see Runtime).
func (r *Runtime) approval(ctx context.Context, slug string) (Approval, error) {
	sa, ok, err := r.Files.sharedApproval(ctx, slug)
	if err != nil {
		return Approval{}, err
	}
	if !ok {
		return r.Files.Approval(slug) // not shared, or approved before approvals were
	}
	if a, ok := r.built(slug, sa.ApprovalID); ok {
		return a, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.built(slug, sa.ApprovalID); ok {
		return a, nil // built while this call waited
	}
	return r.rebuild(ctx, sa)
}

// sharedApproval returns the store's current approval of a wrapper, and
// false when there is none (no store, or approved before approvals were
// shared).
func (f *Files) sharedApproval(ctx context.Context, slug string) (graph.WrapperApproval, bool, error) {
	if f.Shared == nil {
		return graph.WrapperApproval{}, false, nil
	}
	sa, err := f.Shared.GetWrapperApproval(ctx, slug)
	if errors.Is(err, fault.ErrNotFound) {
		return sa, false, nil
	}
	if err != nil {
		return sa, false, fmt.Errorf("airlock: approval of %q: %w", slug, err)
	}
	return sa, true, nil
}

// CurrentApproval returns a wrapper's current approval wherever it was
// made: the store's when it has one (its Binary is then this data dir's
// build of it, or empty), else this data dir's. An API replica asks it for
// approvals a worker made.
func (f *Files) CurrentApproval(ctx context.Context, slug string) (Approval, error) {
	sa, ok, err := f.sharedApproval(ctx, slug)
	if err != nil || !ok {
		if err != nil {
			return Approval{}, err
		}
		return f.Approval(slug)
	}
	var a Approval
	if err := json.Unmarshal(sa.Record, &a); err != nil {
		return Approval{}, fmt.Errorf("airlock: approval of %q: %w", slug, err)
	}
	if local, err := f.Approval(slug); err == nil && local.ID == a.ID {
		a.Binary = local.Binary
	}
	return a, nil
}

// built returns the local approval when it is approvalID's and its
// binary is on disk.
func (r *Runtime) built(slug, approvalID string) (Approval, bool) {
	a, err := r.Files.Approval(slug)
	if err != nil || a.ID != approvalID || a.Binary == "" {
		return a, false
	}
	if _, err := os.Stat(a.Binary); err != nil {
		return a, false
	}
	return a, true
}

// rebuild builds the wrapper of a shared approval on this worker.
func (r *Runtime) rebuild(ctx context.Context, sa graph.WrapperApproval) (Approval, error) {
	var a Approval
	if err := json.Unmarshal(sa.Record, &a); err != nil {
		return Approval{}, fmt.Errorf("airlock: approval of %q: %w", sa.Slug, err)
	}
	if r.Builder == nil {
		return Approval{}, fmt.Errorf("airlock: wrapper %s (approval %s) is not built on this worker, which cannot build wrappers: %w", a.Slug, a.ID, fault.ErrUnavailable)
	}
	data := []byte(sa.Spec)
	hash, err := r.Files.putLocalSpec(data)
	if err != nil {
		return Approval{}, err
	}
	if hash != a.SpecHash {
		return Approval{}, fmt.Errorf("airlock: approval %s of %s: the stored spec hashes to %s, not the approved %s: %w", a.ID, a.Slug, hash[:12], a.SpecHash, fault.ErrUnavailable)
	}
	if err := os.MkdirAll(r.Files.WrapperDir(a.Slug), 0o755); err != nil {
		return Approval{}, fmt.Errorf("airlock: build directory: %w", err)
	}
	build, err := os.MkdirTemp(r.Files.WrapperDir(a.Slug), "build-")
	if err != nil {
		return Approval{}, fmt.Errorf("airlock: build directory: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			_ = os.RemoveAll(build)
		}
	}()
	ob := *r.Builder
	ob.WorkDir = build
	out := ob.Onboard(ctx, data, SpecInfo{URL: a.Location, Slug: a.Slug}, a.Policy)
	if !out.OK() {
		return Approval{}, fmt.Errorf("airlock: rebuilding wrapper %s of approval %s on this worker failed at the %s stage: %s: %w", a.Slug, a.ID, out.Stage, out.Error, fault.ErrUnavailable)
	}
	if a.SourceHash != "" && out.SourceHash != a.SourceHash {
		return Approval{}, fmt.Errorf("airlock: wrapper %s of approval %s does not reproduce on this worker: its sources hash to %s, the approved ones to %s (a different Toolsmith version?): %w",
			a.Slug, a.ID, out.SourceHash[:12], a.SourceHash[:min(12, len(a.SourceHash))], fault.ErrUnavailable)
	}
	a.Binary = out.Binary
	previous, _ := r.Files.Approval(a.Slug)
	if err := r.Files.SaveApproval(a); err != nil {
		return Approval{}, err
	}
	kept = true
	r.Files.removeBuild(a.Slug, previous.Binary, build)
	return a, nil
}

// RegistryRegistrar registers onboarded tools through the registry: the
// same validation, embedding and atomic write as the API. Re-approving a
// spec updates its tools.
type RegistryRegistrar struct{ Registry *registry.Service }

// RegisterManifests implements ToolRegistrar.
func (r RegistryRegistrar) RegisterManifests(ctx context.Context, ms []tool.Manifest) ([]string, error) {
	reqs := make([]registry.Request, len(ms))
	for i, man := range ms {
		raw, err := json.Marshal(man)
		if err != nil {
			return nil, fmt.Errorf("airlock: encode %s: %w", man.ToolID, err)
		}
		reqs[i] = registry.Request{Manifest: raw}
	}
	var ids, problems []string
	for _, res := range r.Registry.BatchRegister(ctx, reqs, registry.BatchOptions{Upsert: true}) {
		if res.Error != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", res.ToolID, res.Error.Message))
			continue
		}
		ids = append(ids, res.ToolID)
	}
	if len(problems) > 0 {
		return ids, fmt.Errorf("airlock: register onboarded tools: %s", strings.Join(problems, "; "))
	}
	return ids, nil
}

// RetireTools implements ToolRegistrar: it pages through the active tools
// whose ids start with "<wrapper>." (ids are listed in order, so they are
// one run) and deprecates those keep does not list.
func (r RegistryRegistrar) RetireTools(ctx context.Context, wrapper string, keep []string, reason string) ([]string, error) {
	prefix := wrapper + "."
	var retire []string
	for after := prefix; ; {
		page, err := r.Registry.List(ctx, graph.ListQuery{After: after, Limit: 500})
		if err != nil {
			return nil, err
		}
		done := page.Next == ""
		for _, t := range page.Items {
			if !strings.HasPrefix(t.ID, prefix) {
				done = true
				break
			}
			if !slices.Contains(keep, t.ID) {
				retire = append(retire, t.ID)
			}
		}
		if done {
			break
		}
		after = page.Next
	}
	for i, id := range retire {
		if err := r.Registry.Deprecate(ctx, id, reason); err != nil {
			return retire[:i], err
		}
	}
	return retire, nil
}

// CurrentApprovals lists every wrapper's current approval wherever it was
// made (see CurrentApproval), ordered by slug: the store's, and those of
// this data dir the store does not have.
func (f *Files) CurrentApprovals(ctx context.Context) ([]Approval, error) {
	local, err := f.Approvals()
	if err != nil || f.Shared == nil {
		return local, err
	}
	shared, err := f.Shared.ListWrapperApprovals(ctx)
	if err != nil {
		return nil, fmt.Errorf("airlock: list approvals: %w", err)
	}
	bySlug := map[string]Approval{}
	for _, a := range local {
		bySlug[a.Slug] = a
	}
	for _, sa := range shared {
		var a Approval
		if err := json.Unmarshal(sa.Record, &a); err != nil {
			return nil, fmt.Errorf("airlock: approval of %q: %w", sa.Slug, err)
		}
		a.Binary = ""
		if l, ok := bySlug[a.Slug]; ok && l.ID == a.ID {
			a.Binary = l.Binary
		}
		bySlug[a.Slug] = a
	}
	out := make([]Approval, 0, len(bySlug))
	for _, a := range bySlug {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return out, nil
}

// Approvals lists every approval recorded in this data dir, ordered by slug.
func (f *Files) Approvals() ([]Approval, error) {
	entries, err := os.ReadDir(filepath.Join(f.Root, "wrappers"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("airlock: list approvals: %w", err)
	}
	var out []Approval
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		a, err := f.Approval(e.Name())
		if errors.Is(err, fault.ErrNotFound) {
			continue // a wrapper built but never approved (failed onboarding)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Health reads the health record of an approval (zero when none yet):
// from the store with Shared, so that health checks run on any worker
// count failures in a row together.
func (f *Files) Health(ctx context.Context, slug string) (Health, error) {
	var h Health
	if f.Shared != nil {
		snap, err := f.Shared.GetSnapshot(ctx, HealthSnapshot(slug))
		if errors.Is(err, fault.ErrNotFound) {
			return h, nil
		}
		if err != nil {
			return h, fmt.Errorf("airlock: read health of %s: %w", slug, err)
		}
		if err := json.Unmarshal(snap.Data, &h); err != nil {
			return h, fmt.Errorf("airlock: health of %s: %w", slug, err)
		}
		return h, nil
	}
	b, err := os.ReadFile(filepath.Join(f.WrapperDir(slug), "health.json"))
	if errors.Is(err, os.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("airlock: read health of %s: %w", slug, err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("airlock: health of %s: %w", slug, err)
	}
	return h, nil
}

// SaveHealth writes the health record of an approval (to the store with
// Shared).
func (f *Files) SaveHealth(ctx context.Context, slug string, h Health) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	if f.Shared != nil {
		if err := f.Shared.PutSnapshot(ctx, graph.Snapshot{Name: HealthSnapshot(slug), At: time.Now().UTC(), Data: b}); err != nil {
			return fmt.Errorf("airlock: save health of %s: %w", slug, err)
		}
		return nil
	}
	p := filepath.Join(f.WrapperDir(slug), "health.json")
	if err := os.WriteFile(p+".tmp", b, 0o644); err != nil {
		return fmt.Errorf("airlock: save health of %s: %w", slug, err)
	}
	return os.Rename(p+".tmp", p)
}
