package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// ErrTypeSpecNotFound is the error type when the spec a review names is not stored. Non-retryable.
const ErrTypeSpecNotFound = "SpecNotFound"

// ReviewStarter opens reviews: it starts AirlockWorkflow runs. The worker
// builds it from its Temporal client (see worker.Reviews).
type ReviewStarter interface {
	// OpenReview starts (or finds running) the review of a spec and returns
	// its workflow ID.
	OpenReview(ctx context.Context, in OpenReviewInput) (string, error)
	// JoinReview starts the review if needed and subscribes a workflow to
	// its outcome (signal-with-start), returning the review's workflow ID.
	JoinReview(ctx context.Context, in OpenReviewInput, subscriber string) (string, error)
}

// GapProposer proposes a spec's review for a capability gap: it starts the
// review if needed and adds the gap's verb to the verbs it would cover.
type GapProposer interface {
	ProposeReview(ctx context.Context, in OpenReviewInput, gapVerb string) (string, error)
}

// Airlock holds the activities of external-tool onboarding.
type Airlock struct {
	// Health probes onboarded APIs (nil: health checks report nothing).
	Health      *airlock.HealthChecker
	Scanner     *airlock.Scanner
	Onboarding  *airlock.Onboarding
	Files       *airlock.Files
	Definitions graph.Definitions
	Reviews     ReviewStarter
	// Gaps are the capability gaps (gap-driven discovery; nil: none).
	Gaps graph.Gaps
}

// ProposeInput bounds gap-driven discovery.
type ProposeInput struct {
	// MinCount is how often a gap must have been asked (≥ 1).
	MinCount int `json:"minCount"`
	// MinScore is the similarity a definition needs.
	MinScore float64 `json:"minScore"`
	// Limit bounds how many gaps are examined (default 50).
	Limit int `json:"limit,omitempty"`
}

// Proposal is one review proposed for a gap.
type Proposal struct {
	Verb       string  `json:"verb"`
	Count      int     `json:"count"`
	ReviewID   string  `json:"reviewId"`
	API        string  `json:"api"`
	Definition string  `json:"definition"`
	Score      float64 `json:"score"`
}

// ProposeReport is what gap-driven discovery did.
type ProposeReport struct {
	Examined  int        `json:"examined"`
	Proposals []Proposal `json:"proposals"`
}

// ProposeForGaps is gap-driven discovery: for each open
// gap asked at least MinCount times, it searches the definitions of the
// registered sources and, when the best one scores at least MinScore,
// proposes its spec's review with the gap as the reason. A person still
// approves; onboarding the spec closes the gap.
func (a *Airlock) ProposeForGaps(ctx context.Context, in ProposeInput) (ProposeReport, error) {
	rep := ProposeReport{Proposals: []Proposal{}}
	if a.Gaps == nil || a.Definitions == nil {
		return rep, nil
	}
	proposer, ok := a.Reviews.(GapProposer)
	if !ok {
		return rep, Fail(ErrTypeAirlockUnavailable, "activities: reviews cannot be proposed for gaps here")
	}
	if in.MinCount < 1 || in.MinScore <= 0 {
		return rep, Fail(ErrTypeInvalidInput, "activities: gap discovery needs minCount ≥ 1 and minScore > 0, got %d and %g", in.MinCount, in.MinScore)
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 50
	}
	gaps, err := a.Gaps.ListGaps(ctx, graph.GapQuery{Status: graph.GapOpen, Limit: limit})
	if err != nil {
		return rep, fmt.Errorf("activities: list gaps: %w", err)
	}
	for _, g := range gaps {
		if g.Count < in.MinCount {
			continue // listed most frequent first: the rest are rarer
		}
		rep.Examined++
		matches, err := a.FindDefinitions(ctx, FindDefinitionsInput{Query: VerbQuery(g.Verb, g.Description), Limit: 1})
		if err != nil {
			return rep, err
		}
		if len(matches) == 0 || matches[0].Score < in.MinScore {
			continue
		}
		m := matches[0]
		id, err := proposer.ProposeReview(ctx, OpenReviewInput{SpecHash: m.SpecHash, Location: m.Location}, g.Verb)
		if err != nil {
			return rep, fmt.Errorf("activities: propose %s for gap %s: %w", m.API, g.Verb, err)
		}
		rep.Proposals = append(rep.Proposals, Proposal{Verb: g.Verb, Count: g.Count, ReviewID: id, API: m.API, Definition: m.Name, Score: m.Score})
	}
	return rep, nil
}

// CloseGapsInput names the gaps an onboarded spec covers.
type CloseGapsInput struct {
	Verbs  []string `json:"verbs"`
	ToolID string   `json:"toolId"`
}

// CloseGaps closes the gaps a review was proposed for, linking each to the
// onboarded tool; it returns the verbs it closed.
func (a *Airlock) CloseGaps(ctx context.Context, in CloseGapsInput) ([]string, error) {
	closed := []string{}
	if a.Gaps == nil {
		return closed, nil
	}
	for _, v := range in.Verbs {
		ok, err := a.Gaps.CloseGap(ctx, v, in.ToolID, time.Now().UTC())
		if err != nil {
			return closed, fmt.Errorf("activities: close gap %s: %w", v, err)
		}
		if ok {
			closed = append(closed, v)
		}
	}
	return closed, nil
}

// ErrTypeAirlockUnavailable is the error type when the worker has no airlock configured. Non-retryable.
const ErrTypeAirlockUnavailable = "AirlockUnavailable"

func (a *Airlock) check() error {
	if a.Scanner == nil || a.Onboarding == nil || a.Files == nil || a.Definitions == nil {
		return Fail(ErrTypeAirlockUnavailable, "this worker has no airlock configured (the store must hold definitions and the data dir must be writable)")
	}
	return nil
}

// ListSources returns every source id.
func (a *Airlock) ListSources(ctx context.Context) ([]string, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	srcs, err := a.Definitions.Sources(ctx)
	if err != nil {
		return nil, fmt.Errorf("activities: list sources: %w", err)
	}
	ids := make([]string, len(srcs))
	for i, s := range srcs {
		ids[i] = s.ID
	}
	return ids, nil
}

// FoundSpec names a spec a scan saw for the first time.
type FoundSpec struct {
	Hash     string `json:"hash"`
	Location string `json:"location"`
}

// ScanSourceOutput reports the scan of one source.
type ScanSourceOutput struct {
	SourceID    string      `json:"sourceId"`
	Specs       int         `json:"specs"`
	NewSpecs    []FoundSpec `json:"newSpecs"`
	Known       int         `json:"known"`
	Definitions int         `json:"definitions"`
	Errors      []string    `json:"errors,omitempty"`
	Error       string      `json:"error,omitempty"`
}

// ScanSource fetches a source and indexes its new specs' operations as
// external definitions. An unknown source is non-retryable.
func (a *Airlock) ScanSource(ctx context.Context, sourceID string) (ScanSourceOutput, error) {
	if err := a.check(); err != nil {
		return ScanSourceOutput{}, err
	}
	rep, err := a.Scanner.Scan(ctx, sourceID)
	if errors.Is(err, graph.ErrNotFound) {
		return ScanSourceOutput{}, Fail(ErrTypeInvalidInput, "source %q does not exist", sourceID)
	}
	out := ScanSourceOutput{SourceID: sourceID, Specs: rep.Specs, Known: rep.Known, Definitions: rep.Definitions, Errors: rep.Errors, NewSpecs: []FoundSpec{}}
	if err != nil {
		// A source that cannot be fetched is reported, not retried forever:
		// the next scheduled scan tries again.
		out.Error = err.Error()
		return out, nil
	}
	for _, h := range rep.New {
		defs, err := a.Definitions.SpecDefinitions(ctx, h)
		loc := ""
		if err == nil && len(defs) > 0 {
			loc = defs[0].Location
		}
		out.NewSpecs = append(out.NewSpecs, FoundSpec{Hash: h, Location: loc})
	}
	return out, nil
}

// OpenReviewInput opens the review of one spec.
type OpenReviewInput struct {
	SpecHash      string        `json:"specHash"`
	SourceID      string        `json:"sourceId,omitempty"`
	Location      string        `json:"location"`
	ReviewTimeout time.Duration `json:"reviewTimeout,omitempty"`
}

// OpenReview starts the spec's AirlockWorkflow (idempotent per spec).
func (a *Airlock) OpenReview(ctx context.Context, in OpenReviewInput) (string, error) {
	if a.Reviews == nil {
		return "", Fail(ErrTypeNotExecutable, "activities: no review starter configured")
	}
	return a.Reviews.OpenReview(ctx, in)
}

// PrepareReviewInput names the spec to summarise.
type PrepareReviewInput struct {
	SpecHash string `json:"specHash"`
	Location string `json:"location"`
}

// PrepareReview marks the spec's definitions pending and returns what the
// reviewer sees (title, servers, operations, auth schemes, warnings).
func (a *Airlock) PrepareReview(ctx context.Context, in PrepareReviewInput) (airlock.Review, error) {
	if err := a.check(); err != nil {
		return airlock.Review{}, err
	}
	data, err := a.Files.Spec(ctx, in.SpecHash)
	if errors.Is(err, fault.ErrNotFound) || errors.Is(err, fault.ErrInvalid) {
		return airlock.Review{}, Fail(ErrTypeSpecNotFound, "%v", err)
	}
	if err != nil {
		return airlock.Review{}, err
	}
	n, err := codegen.Normalise(ctx, data)
	if err != nil {
		return airlock.Review{}, Fail(ErrTypeInvalidInput, "the stored spec no longer loads: %v", err)
	}
	if err := a.Definitions.SetSpecStatus(ctx, in.SpecHash, graph.DefinitionPending); err != nil && !errors.Is(err, graph.ErrNotFound) {
		return airlock.Review{}, fmt.Errorf("activities: mark spec pending: %w", err)
	}
	r := airlock.BuildReview(n, in.SpecHash, in.Location)
	// The name it will get, and a warning when its title's name is taken.
	if err := a.Files.NameReview(&r, n); err != nil {
		return airlock.Review{}, fmt.Errorf("activities: name review: %w", err)
	}
	return r, nil
}

// OnboardInput approves a spec with its policy.
type OnboardInput struct {
	ApprovalID string         `json:"approvalId"`
	SpecHash   string         `json:"specHash"`
	Location   string         `json:"location"`
	Policy     airlock.Policy `json:"policy"`
}

// OnboardOutput is the result of onboarding: tools registered, or the stage
// that failed and why.
type OnboardOutput struct {
	ToolIDs  []string `json:"toolIds,omitempty"`
	Slug     string   `json:"slug,omitempty"`
	Stage    string   `json:"failedStage,omitempty"`
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Sandbox  string   `json:"sandbox,omitempty"`
}

// OnboardSpec generates the wrapper, builds and tests it, registers its
// tools and records the approval. An onboarding failure (bad spec, failing
// test) is a result, not an error, so it is not retried.
func (a *Airlock) OnboardSpec(ctx context.Context, in OnboardInput) (OnboardOutput, error) {
	if err := a.check(); err != nil {
		return OnboardOutput{}, err
	}
	res, err := a.Onboarding.Approve(ctx, in.ApprovalID, in.SpecHash, in.Location, in.Policy)
	if errors.Is(err, fault.ErrNotFound) {
		return OnboardOutput{}, Fail(ErrTypeSpecNotFound, "%v", err)
	}
	if err != nil {
		return OnboardOutput{}, err
	}
	o := res.Outcome
	return OnboardOutput{ToolIDs: res.ToolIDs, Slug: o.Slug, Stage: o.Stage, Error: o.Error, Warnings: o.Warnings, Sandbox: o.Sandbox}, nil
}

// SpecStatusInput sets the status of a spec's definitions.
type SpecStatusInput struct {
	SpecHash string `json:"specHash"`
	Status   string `json:"status"`
	// Name and Location, when set, are the wrapper name the spec's review
	// reserved and the spec's location: a review that ends without an
	// approval gives the name back (airlock.Files.ReleaseName).
	Name     string `json:"name,omitempty"`
	Location string `json:"location,omitempty"`
}

// SetSpecStatus sets the status of a spec's definitions; a spec without
// definitions is not an error.
func (a *Airlock) SetSpecStatus(ctx context.Context, in SpecStatusInput) error {
	if err := a.check(); err != nil {
		return err
	}
	if in.Name != "" && in.Status != graph.DefinitionOnboarded {
		err := a.Files.ReleaseName(in.Name, in.Location, in.SpecHash)
		if errors.Is(err, fault.ErrInvalid) {
			return Fail(ErrTypeInvalidInput, "%v", err)
		}
		if err != nil {
			return err
		}
	}
	err := a.Definitions.SetSpecStatus(ctx, in.SpecHash, in.Status)
	if errors.Is(err, graph.ErrNotFound) {
		return nil
	}
	if errors.Is(err, graph.ErrInvalid) {
		return Fail(ErrTypeInvalidInput, "%v", err)
	}
	return err
}

// FindDefinitionsInput asks for external definitions like a query.
type FindDefinitionsInput struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

// DefinitionMatch is an external operation that may fulfil a verb.
type DefinitionMatch struct {
	ID          string  `json:"id"`
	SpecHash    string  `json:"specHash"`
	Location    string  `json:"location"`
	Slug        string  `json:"slug"`
	API         string  `json:"api"`
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Status      string  `json:"status"`
	Score       float64 `json:"score"`
}

// FindDefinitions searches the external definitions that are available or
// under review (never rejected or onboarded ones) by embedding similarity.
func (a *Airlock) FindDefinitions(ctx context.Context, in FindDefinitionsInput) ([]DefinitionMatch, error) {
	if a.Definitions == nil || a.Scanner == nil || a.Scanner.Embedder == nil {
		// No airlock: nothing external to find (not an error for find-or-build).
		return nil, nil
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 3
	}
	vec, err := a.Scanner.Embedder.EmbedQuery(ctx, in.Query)
	if err != nil {
		return nil, fmt.Errorf("activities: embed %q: %w", in.Query, err)
	}
	hits, err := a.Definitions.SearchDefinitions(ctx, vec, limit, nil)
	if err != nil {
		return nil, fmt.Errorf("activities: search definitions: %w", err)
	}
	out := make([]DefinitionMatch, 0, len(hits))
	for _, h := range hits {
		d := h.Definition
		out = append(out, DefinitionMatch{ID: d.ID, SpecHash: d.SpecHash, Location: d.Location, Slug: d.Slug, API: d.API,
			Name: d.Name, Description: d.Description, Status: d.Status, Score: h.Score})
	}
	return out, nil
}

// JoinReviewInput subscribes a workflow to a spec's review.
type JoinReviewInput struct {
	OpenReviewInput
	Subscriber string `json:"subscriber"`
}

// JoinReview starts the spec's review if none is running and subscribes
// the caller's workflow to its outcome.
func (a *Airlock) JoinReview(ctx context.Context, in JoinReviewInput) (string, error) {
	if a.Reviews == nil {
		return "", Fail(ErrTypeAirlockUnavailable, "activities: no review starter configured")
	}
	return a.Reviews.JoinReview(ctx, in.OpenReviewInput, in.Subscriber)
}

// ClientReviews opens reviews with a Temporal client.
type ClientReviews struct {
	Client    client.Client
	TaskQueue string
	// Workflow is the review workflow function (workflows.AirlockWorkflow);
	// passed in because activities must not import workflows.
	Workflow any
	// ID maps a spec hash to the review's workflow ID.
	ID func(specHash string) string
	// Input builds the workflow input.
	Input func(OpenReviewInput) any
	// SubscribeSignal and Subscribe name and build the subscription signal;
	// Propose builds the one that adds a gap's verb to a review.
	SubscribeSignal string
	Subscribe       func(workflowID string) any
	Propose         func(gapVerb string) any
}

// ProposeReview implements GapProposer: signal-with-start, so a running
// review learns of the gap and a new one starts with it.
func (r ClientReviews) ProposeReview(ctx context.Context, in OpenReviewInput, gapVerb string) (string, error) {
	if r.Propose == nil {
		return "", Fail(ErrTypeAirlockUnavailable, "activities: reviews cannot be proposed for gaps here")
	}
	id := r.ID(in.SpecHash)
	run, err := r.Client.SignalWithStartWorkflow(ctx, id, r.SubscribeSignal, r.Propose(gapVerb),
		client.StartWorkflowOptions{ID: id, TaskQueue: r.TaskQueue}, r.Workflow, r.Input(in))
	if err != nil {
		return "", fmt.Errorf("activities: propose review %s: %w", id, err)
	}
	return run.GetID(), nil
}

// OpenReview starts the review unless one is already running for the spec:
// with the SDK's default (WorkflowExecutionErrorWhenAlreadyStarted unset) a
// running review is returned as it is, so scanning twice opens one review.
func (r ClientReviews) OpenReview(ctx context.Context, in OpenReviewInput) (string, error) {
	id := r.ID(in.SpecHash)
	run, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.TaskQueue}, r.Workflow, r.Input(in))
	if err != nil {
		return "", fmt.Errorf("activities: open review %s: %w", id, err)
	}
	return run.GetID(), nil
}

// JoinReview signals the spec's review with a subscription, starting the
// review first when none is running.
func (r ClientReviews) JoinReview(ctx context.Context, in OpenReviewInput, subscriber string) (string, error) {
	id := r.ID(in.SpecHash)
	run, err := r.Client.SignalWithStartWorkflow(ctx, id, r.SubscribeSignal, r.Subscribe(subscriber),
		client.StartWorkflowOptions{ID: id, TaskQueue: r.TaskQueue}, r.Workflow, r.Input(in))
	if err != nil {
		return "", fmt.Errorf("activities: join review %s: %w", id, err)
	}
	return run.GetID(), nil
}

// CheckHealth probes every onboarded API once, records latency and error
// rate, and disables the tools of an API that keeps failing.
func (a *Airlock) CheckHealth(ctx context.Context) (airlock.HealthReport, error) {
	if a.Health == nil {
		return airlock.HealthReport{}, nil
	}
	return a.Health.CheckAll(ctx)
}
