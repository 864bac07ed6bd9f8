package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/cursor"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// Temporal is the part of the SDK client the service uses.
type Temporal interface {
	ExecuteWorkflow(ctx context.Context, opts client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	UpdateWorkflow(ctx context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error)
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
	ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
	GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun
}

// Config configures the service.
type Config struct {
	// TaskQueue runs the scans (default workflows.TaskQueue).
	TaskQueue string
	// Namespace holds the reviews (default "default").
	Namespace string
	// ReviewTimeout is how long a review a scan opens waits for a decision.
	ReviewTimeout time.Duration
}

// Service is the airlock's review lifecycle. Its methods are safe for
// concurrent use.
type Service struct {
	temporal Temporal
	sources  Store
	cfg      Config
	now      func() time.Time
	// prepareWait replaces PrepareWait (tests).
	prepareWait time.Duration
}

// Store is what the service reads of the graph store: the sources, and
// the tools a review names (shown only to callers who may execute them).
type Store interface {
	graph.Definitions
	airlock.ToolLister
}

// New returns the service over a Temporal client and the store (nil for a
// service that only reviews and names no tool).
func New(t Temporal, sources Store, cfg Config) *Service {
	if t == nil {
		panic("review: nil Temporal client")
	}
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = workflows.TaskQueue
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	return &Service{temporal: t, sources: sources, cfg: cfg, now: time.Now}
}

// MaxWait bounds how long a call waits for a scan or a decision's outcome.
const MaxWait = 10 * time.Minute

// Reviewer names the authenticated identity that decides a review: its
// subject, with the owner's name when the credential has one, or the
// caller it acts for.
func Reviewer(p identity.Principal, caller access.Caller) string {
	if p.Name != "" && p.Name != p.Subject {
		return p.Subject + " (" + p.Name + ")"
	}
	return caller.UserID
}

// ---- sources and scans ----

// SourceID is the id a source's location gets.
func SourceID(location string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(location)))
	return "src-" + hex.EncodeToString(sum[:6])
}

// AddedSource is what adding a source did: the source as stored (after
// its first scan, when there was one), the scan's id and its outcome.
type AddedSource struct {
	Source graph.Source
	// ScanID is "" when no scan was started.
	ScanID string
	Scan   *ScanOutcome
}

// AddSource validates and registers a source (an untyped one is openapi)
// for caller and, when scan is set, starts its first scan and waits up to
// wait for it. A local file or folder (a path or a file:// URL) is the
// owner's to register: reading one lists and probes the server's file
// system, so anyone else is refused (ErrForbidden on location) before
// the path is looked at. A location already registered is ErrConflict.
// The source stays registered whatever its scan finds; a failed fetch is
// also its lastError.
func (s *Service) AddSource(ctx context.Context, caller access.Caller, src airlock.Source, scan bool, wait time.Duration) (AddedSource, error) {
	src.Location = strings.TrimSpace(src.Location)
	if err := airlock.ValidateSource(src); err != nil {
		return AddedSource{}, err
	}
	if airlock.IsLocal(src.Location) && access.LevelRank(caller.Level) < access.LevelRank("owner") {
		return AddedSource{}, fmt.Errorf("location: a local file or folder is read from the server's own disk, so only the owner may register one; give an http(s) URL, or ask the owner: %w", fault.ErrForbidden)
	}
	if src.Type == "" {
		src.Type = airlock.SourceOpenAPI
	}
	id := SourceID(src.Location)
	if _, err := s.sources.GetSource(ctx, id); err == nil {
		return AddedSource{}, fmt.Errorf("source %s (%s) is already registered: %w", id, src.Location, fault.ErrConflict)
	} else if !errors.Is(err, fault.ErrNotFound) {
		return AddedSource{}, err
	}
	rec := graph.Source{ID: id, Type: src.Type, Location: src.Location, CreatedAt: s.now().UTC()}
	if err := s.sources.PutSource(ctx, rec); err != nil {
		return AddedSource{}, err
	}
	out := AddedSource{Source: rec}
	if !scan {
		return out, nil
	}
	run, err := s.startScan(ctx, []string{id})
	if err != nil {
		return AddedSource{}, err
	}
	first := s.firstScan(ctx, run, wait)
	out.ScanID, out.Scan = run.GetID(), &first
	if after, err := s.sources.GetSource(ctx, id); err == nil {
		out.Source = after // with the scan's specs count and lastError
	}
	return out, nil
}

// Sources lists the registered sources.
func (s *Service) Sources(ctx context.Context) ([]graph.Source, error) {
	return s.sources.Sources(ctx)
}

// DeleteSource removes a source (unknown: ErrNotFound); its reviews stay.
func (s *Service) DeleteSource(ctx context.Context, id string) error {
	return s.sources.DeleteSource(ctx, id)
}

// ScanAll starts a scan of every source and returns its id.
func (s *Service) ScanAll(ctx context.Context) (string, error) {
	run, err := s.startScan(ctx, nil)
	if err != nil {
		return "", err
	}
	return run.GetID(), nil
}

func (s *Service) firstScan(ctx context.Context, run client.WorkflowRun, wait time.Duration) ScanOutcome {
	if wait <= 0 {
		return ScanOutcome{Status: ScanRunning}
	}
	wctx, cancel := context.WithTimeout(ctx, min(wait, MaxWait))
	defer cancel()
	var res workflows.ScanOutput
	if err := run.Get(wctx, &res); err != nil {
		if wctx.Err() != nil {
			return ScanOutcome{Status: ScanRunning}
		}
		return ScanOutcome{Status: ScanFailed, Error: err.Error()}
	}
	out := ScanOutcome{Status: ScanCompleted}
	if len(res.Reports) > 0 {
		out.Report = scanReportOf(res.Reports[0])
	}
	return out
}

func (s *Service) startScan(ctx context.Context, ids []string) (client.WorkflowRun, error) {
	now := s.now().UTC()
	id := "scan-" + now.Format("20060102T150405.000")
	if len(ids) == 1 {
		id = "scan-" + ids[0] + "-" + now.Format("150405.000")
	}
	run, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: s.cfg.TaskQueue},
		workflows.ScanSourcesWorkflow, workflows.ScanInput{SourceIDs: ids, ReviewTimeout: s.cfg.ReviewTimeout})
	if err != nil {
		return nil, fmt.Errorf("start scan: %w: %w", fault.ErrUnavailable, err)
	}
	return run, nil
}

// ---- reviews ----

// pendingQuery lists running reviews.
// Builds from scratch (BuildToolWorkflow) answer the review query too,
// and are listed and decided with the specs.
const pendingQuery = "WorkflowType IN ('AirlockWorkflow', 'BuildToolWorkflow') AND ExecutionStatus = 'Running'"

// Pending lists the running reviews (at most 200), each with its state; a
// review that ends between the listing and its query is left out.
func (s *Service) Pending(ctx context.Context) ([]Pending, error) {
	resp, err := s.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.cfg.Namespace, Query: pendingQuery, PageSize: 200})
	if err != nil {
		return nil, fmt.Errorf("list pending reviews: %w: %w", fault.ErrUnavailable, err)
	}
	items := []Pending{}
	for _, ex := range resp.GetExecutions() {
		id := ex.GetExecution().GetWorkflowId()
		st, err := s.Get(ctx, id)
		if err != nil {
			continue // ended between the listing and the query
		}
		rv := st.Review
		items = append(items, Pending{ID: id, SpecHash: rv.SpecHash, Title: rv.Title, Location: rv.Location,
			Operations: len(rv.Operations), Warnings: len(rv.Warnings), Slug: rv.Slug, NameTakenBy: rv.NameTakenBy, NamePending: rv.NamePending,
			Status: st.Status, StartedAt: ex.GetStartTime().AsTime().UTC().Format(time.RFC3339)})
	}
	return items, nil
}

// Get returns a review's state (unknown or ended: ErrNotFound).
func (s *Service) Get(ctx context.Context, id string) (State, error) {
	st, err := s.query(ctx, id)
	if err != nil {
		return State{}, err
	}
	return stateOf(st), nil
}

// View is Get as caller may see it: the tools it names, a build's
// closest tools and the tools its outcome onboarded, are only those
// caller may execute (access.VisibleIDs), as the decided list shows them.
// An approver who may not run what a review onboarded sees the outcome
// without those ids.
func (s *Service) View(ctx context.Context, id string, caller access.Caller) (State, error) {
	st, err := s.Get(ctx, id)
	if err != nil {
		return st, err
	}
	if st.Build != nil && len(st.Build.Input.Closest) > 0 {
		if st.Build.Input.Closest, err = s.visibleTools(ctx, st.Build.Input.Closest, caller); err != nil {
			return State{}, fmt.Errorf("review %s: %w", id, err)
		}
	}
	if st.Outcome != nil && len(st.Outcome.ToolIDs) > 0 {
		if st.Outcome.ToolIDs, err = s.visibleTools(ctx, st.Outcome.ToolIDs, caller); err != nil {
			return State{}, fmt.Errorf("review %s: %w", id, err)
		}
	}
	return st, nil
}

// visibleTools keeps the tool ids caller may execute; a service without a
// store names none.
func (s *Service) visibleTools(ctx context.Context, ids []string, caller access.Caller) ([]string, error) {
	if len(ids) == 0 {
		return ids, nil
	}
	if s.sources == nil {
		return nil, nil
	}
	return access.VisibleIDs(ctx, s.sources, ids, caller)
}

func (s *Service) query(ctx context.Context, id string) (workflows.AirlockState, error) {
	v, err := s.temporal.QueryWorkflow(ctx, id, "", workflows.ReviewQuery)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return workflows.AirlockState{}, fmt.Errorf("no review %q: %w", id, fault.ErrNotFound)
		}
		return workflows.AirlockState{}, fmt.Errorf("query review %q: %w: %w", id, fault.ErrUnavailable, err)
	}
	var st workflows.AirlockState
	if err := v.Get(&st); err != nil {
		return workflows.AirlockState{}, fmt.Errorf("decode review %q: %w", id, err)
	}
	return st, nil
}

// Approve approves a review with a policy (validated: a ValidationError
// names each policy.<field>, and policy.operations[i] must name one of the
// review's operations), as reviewer, and waits up to wait for its
// outcome. A review already decided or ended is ErrConflict. When the
// policy names operations, a review still being prepared is waited for
// (at least PrepareWait); one still preparing after that is ErrConflict.
// The outcome names only the tools caller (the approver) may execute, as
// View does: an approval that required a role the approver lacks answers
// without the ids of the tools it onboarded.
func (s *Service) Approve(ctx context.Context, id, reviewer string, caller access.Caller, p airlock.Policy, wait time.Duration) (DecisionResult, error) {
	if err := p.Validate(); err != nil {
		return DecisionResult{}, policyFields(err)
	}
	// The operations are checked here, before the workflow takes the
	// decision: a name that matches nothing would otherwise fail the
	// onboarding after the decision, and the review with it.
	check := func(st State) error {
		if st.Build != nil {
			return nil
		}
		if err := s.namespaceFree(ctx, st, caller); err != nil {
			return err
		}
		if len(p.Operations) == 0 {
			return nil
		}
		if st.Status == StatusPreparing {
			return fmt.Errorf("review %s is still preparing: policy.operations can be checked once it is pending; approve again then: %w", id, fault.ErrConflict)
		}
		if err := p.ValidateOperations(st.Review.Operations); err != nil {
			return policyFields(err)
		}
		return nil
	}
	if len(p.Operations) > 0 {
		// The names are checked against the prepared review: one still
		// preparing (a scan has just opened it) is waited for, briefly.
		least := PrepareWait
		if s.prepareWait > 0 {
			least = s.prepareWait
		}
		s.awaitPrepared(ctx, id, min(max(wait, least), MaxWait))
	}
	return s.decide(ctx, id, caller, workflows.Decision{Approve: &workflows.ApproveSignal{Reviewer: reviewer, Policy: workflows.PolicyOf(p)}}, check, wait)
}

// namespaceFree refuses an approval whose wrapper name (the review's
// slug) is held by catalogue tools the spec did not register
// (airlock.ForeignTools): approving would replace those of the same ids
// and deprecate the others. The refusal names only the tools caller may
// execute, and does not count the rest, so it tells no one of a tool
// hidden from them beyond that the name is taken. A review still being prepared has no name yet; the onboarding
// checks it again before it registers anything.
func (s *Service) namespaceFree(ctx context.Context, st State, caller access.Caller) error {
	if s.sources == nil || st.Review.Slug == "" {
		return nil
	}
	held, err := airlock.ForeignTools(ctx, s.sources, st.Review.Slug, st.Review.Location)
	if err != nil || len(held) == 0 {
		return err
	}
	shown, err := access.VisibleIDs(ctx, s.sources, held, caller)
	if err != nil {
		return err
	}
	// Only the tools caller may execute are named, and those it may not
	// are not counted either: how many hidden tools a name holds is theirs.
	holders := ""
	if len(shown) > 0 {
		holders = " (among them " + strings.Join(shown, ", ") + ")"
	}
	return fault.Invalid("slug", "the name %q is held by catalogue tools this spec did not onboard%s: approving would replace or deprecate them, so it is refused and the review stays pending; give the spec another info.title and scan its source again, or remove those tools first", st.Review.Slug, holders)
}

// PrepareWait is how long an approval that names operations waits, at
// least, for a review still being prepared before it is refused (409).
const PrepareWait = 30 * time.Second

// awaitPrepared polls a review until it is no longer being prepared, or
// within has passed, or the review cannot be read (decide then reports
// what it finds).
func (s *Service) awaitPrepared(ctx context.Context, id string, within time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := s.Get(ctx, id)
		if err != nil || st.Status != StatusPreparing {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// policyFields names a policy's ValidationError fields policy.<field>.
func policyFields(err error) error {
	v := &fault.ValidationError{}
	for _, f := range fault.Fields(err) {
		v.Add("policy."+f.Path, "%s", f.Message)
	}
	return v
}

// Reject rejects a review with a reason (required), as reviewer, and
// waits up to wait for its outcome. A review already decided or ended is
// ErrConflict. Its outcome names tools as Approve's does.
func (s *Service) Reject(ctx context.Context, id, reviewer string, caller access.Caller, reason string, wait time.Duration) (DecisionResult, error) {
	if strings.TrimSpace(reason) == "" {
		return DecisionResult{}, fault.Invalid("reason", "is required: say why the tool is rejected")
	}
	return s.decide(ctx, id, caller, workflows.Decision{Reject: &workflows.RejectSignal{Reviewer: reviewer, Reason: reason}}, nil, wait)
}

// decide sends the review its decision (the workflow's UpdateDecide),
// then waits (at most MaxWait) for its outcome. The review answers the
// update itself, so a decision on a review already decided (two quick
// rejects, an approval after a rejection) is refused, never accepted and
// dropped. check, when set, vets the decision against the pending review.
// The outcome names only the tools caller may execute.
func (s *Service) decide(ctx context.Context, id string, caller access.Caller, d workflows.Decision, check func(State) error, wait time.Duration) (DecisionResult, error) {
	st, err := s.Get(ctx, id)
	if err != nil {
		return DecisionResult{}, err
	}
	if !st.Decidable() {
		return DecisionResult{}, fmt.Errorf("%s: %w", st.notPending(id), fault.ErrConflict)
	}
	if check != nil {
		if err := check(st); err != nil {
			return DecisionResult{}, err
		}
	}
	if err := s.update(ctx, id, d); err != nil {
		return DecisionResult{}, err
	}
	out := DecisionResult{ID: id, Decision: DecisionApprove}
	if d.Reject != nil {
		out.Decision = DecisionReject
	}
	if wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, min(wait, MaxWait))
		defer cancel()
		var outcome workflows.AirlockOutcome
		if err := s.temporal.GetWorkflow(wctx, id, "").Get(wctx, &outcome); err == nil {
			out.Outcome = outcomeOf(&outcome)
			if out.Outcome.ToolIDs, err = s.visibleTools(ctx, out.Outcome.ToolIDs, caller); err != nil {
				return DecisionResult{}, fmt.Errorf("review %s: %w", id, err)
			}
		}
	}
	return out, nil
}

// update sends the update and waits until the review has recorded (or
// refused) the decision; refusals become fault errors.
func (s *Service) update(ctx context.Context, id string, d workflows.Decision) error {
	handle, err := s.temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: workflows.UpdateDecide, Args: []any{d}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	if err == nil {
		return nil
	}
	var appErr *temporal.ApplicationError
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeReviewDecided:
		return fmt.Errorf("review %s: %s: %w", id, appErr.Message(), fault.ErrConflict)
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeInvalidInput:
		return fmt.Errorf("review %s: %s: %w", id, appErr.Message(), fault.ErrInvalid)
	case errors.As(err, &nf):
		// The review ended between the state query and the update.
		if st, qerr := s.Get(ctx, id); qerr == nil {
			return fmt.Errorf("%s: %w", st.notPending(id), fault.ErrConflict)
		}
		return fmt.Errorf("no running review %q: %w", id, fault.ErrNotFound)
	}
	return fmt.Errorf("decide review %q: %w: %w", id, fault.ErrUnavailable, err)
}

// decidedQuery lists reviews that ended: decided, timed out or failed.
// Builds from scratch are listed too, whatever ended them.
const decidedQuery = "WorkflowType IN ('AirlockWorkflow', 'BuildToolWorkflow') AND ExecutionStatus != 'Running'"

// Decided lists reviews that ended, newest first, limit to a page (1 to
// 100), paged by cursor (the previous page's Next; a cursor that is not
// one is a ValidationError on "cursor"), as caller may see them: each
// review's ToolIDs are only the tools caller may execute.
func (s *Service) Decided(ctx context.Context, caller access.Caller, limit int, cursor string) (DecidedPage, error) {
	limit = max(1, min(limit, 100))
	var token []byte
	if cursor != "" {
		var ok bool
		if token, ok = openCursor(cursor); !ok {
			return DecidedPage{}, fault.Malformed("cursor", "must be the nextCursor of the previous page")
		}
	}
	resp, err := s.temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: s.cfg.Namespace, Query: decidedQuery,
		PageSize: int32(limit), NextPageToken: token})
	if err != nil {
		return DecidedPage{}, fmt.Errorf("list decided reviews: %w: %w", fault.ErrUnavailable, err)
	}
	items := []Decided{}
	for _, ex := range resp.GetExecutions() {
		id := ex.GetExecution().GetWorkflowId()
		d := Decided{ID: id, Status: strings.ToLower(strings.TrimPrefix(ex.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_")), ClosedAt: ex.GetCloseTime().AsTime().UTC()}
		// A closed review is read from its history (its review and its
		// outcome), which needs no worker: a query would wait for one.
		if rev, out, ok := s.closedReview(ctx, id, ex.GetExecution().GetRunId()); ok {
			d.Title, d.Location = rev.Title, rev.Location
			if out != nil {
				d.Status, d.Reviewer, d.Reason = out.Status, out.Reviewer, out.Reason
				if d.ToolIDs, err = s.visibleTools(ctx, out.ToolIDs, caller); err != nil {
					return DecidedPage{}, fmt.Errorf("review %s: %w", id, err)
				}
				if d.Reason == "" && out.Stage != "" {
					d.Reason = "failed at " + out.Stage
				}
			}
		}
		items = append(items, d)
	}
	page := DecidedPage{Reviews: items}
	if t := resp.GetNextPageToken(); len(t) > 0 {
		page.Next = sealCursor(t)
	}
	return page, nil
}

// cursorLabel names the decided list's cursors (internal/cursor): a
// made-up or mistyped cursor is refused at once instead of reaching
// Temporal, which retries on a token it cannot read until the request's
// deadline.
const cursorLabel = "toolsmith decided reviews"

// sealCursor is the cursor of Temporal's page token t.
func sealCursor(t []byte) string { return cursor.Seal(cursorLabel, t) }

// openCursor is the page token a cursor sealed, false when it is not one.
func openCursor(c string) ([]byte, bool) { return cursor.Open(cursorLabel, c) }
