package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/build"
)

// BuildQuery returns a build's BuildState.
const BuildQuery = "build"

// BuildWorkflowID is the workflow ID of the build for a verb's gap: one
// build per gap at a time.
func BuildWorkflowID(verb string) string { return "build-" + verb }

// Build statuses (BuildState.Status, BuildResult.Status).
const (
	BuildWriting     = "writing"     // a round is under way
	BuildPending     = "pending"     // a program passed; it awaits review
	BuildRegistering = "registering" // approved; being rebuilt and registered
	BuildRegistered  = "registered"  // approved, registered, the gap closed
	BuildRejected    = "rejected"    // the reviewer said no; the reason is on the gap
	BuildFailed      = "failed"      // no program passed, the budget ran out, the model timed out
	BuildNeedsModel  = "needs_model" // no model is configured
	BuildTimedOut    = "timed_out"   // no decision within the review timeout
)

// StageBudget is the stage of a round whose answer spent the build's
// token budget.
const StageBudget = "budget"

// ReasonNeedsModel is the gap's reason when no model can build.
const ReasonNeedsModel = "build needs a model"

// Defaults of BuildOptions.
const (
	DefaultBuildRounds       = 3
	DefaultBuildModelTimeout = 2 * time.Minute
	DefaultBuildTestTimeout  = 5 * time.Minute
)

// BuildOptions bound a build.
type BuildOptions struct {
	// Rounds bounds how many programs the model writes (0: DefaultBuildRounds).
	Rounds int `json:"rounds,omitempty"`
	// ModelTimeout bounds each attempt of a round's model call.
	ModelTimeout time.Duration `json:"modelTimeout,omitempty"`
	// TestTimeout bounds each attempt of a round's build and test.
	TestTimeout time.Duration `json:"testTimeout,omitempty"`
	// ReviewTimeout ends the wait for a decision (0: DefaultReviewTimeout).
	ReviewTimeout time.Duration `json:"reviewTimeout,omitempty"`
}

// BuildInput asks for a tool for a verb nothing fulfilled.
type BuildInput struct {
	Verb        string         `json:"verb"`
	Description string         `json:"description,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
	Expected    string         `json:"expected,omitempty"`
	Closest     []string       `json:"closest,omitempty"`
	Entities    []string       `json:"entities,omitempty"`
	// RequestedBy is who asked (a user, or the novel-verb run's ID).
	RequestedBy string       `json:"requestedBy,omitempty"`
	Options     BuildOptions `json:"options,omitempty"`
}

// BuildRound is one round as the review and the result show it.
type BuildRound struct {
	Round  int `json:"round"`
	Tokens int `json:"tokens"`
	// Stage is where the round stopped: answer (not a program), budget
	// (the answer spent the token budget), refused, build, test, or ""
	// when it passed.
	Stage   string      `json:"stage"`
	Summary string      `json:"summary"`
	Report  BuildReport `json:"report"`
	// Source is the round's program source (for the review's history).
	Source string `json:"source,omitempty"`
}

// BuildState is what BuildQuery returns: everything the review shows.
type BuildState struct {
	Status string       `json:"status"`
	Input  BuildInput   `json:"input"`
	Rounds []BuildRound `json:"rounds"`
	// Program is the program that passed (status pending and after).
	Program       *BuiltProgram `json:"program,omitempty"`
	Model         string        `json:"model,omitempty"`
	PromptVersion string        `json:"promptVersion,omitempty"`
	TokensUsed    int           `json:"tokensUsed"`
	TokenBudget   int           `json:"tokenBudget,omitempty"`
	Policy        *Policy       `json:"policy,omitempty"`
	Result        *BuildResult  `json:"result,omitempty"`
}

// BuildResult is how a build ended.
type BuildResult struct {
	Verb   string `json:"verb"`
	Status string `json:"status"`
	// Reason says why, in one sentence; the gap keeps it when it stays open.
	Reason   string `json:"reason"`
	Reviewer string `json:"reviewer,omitempty"`
	ToolID   string `json:"toolId,omitempty"`
	// ToolIDs is ToolID as a list, as an airlock outcome names its tools.
	ToolIDs   []string `json:"toolIds,omitempty"`
	ClosedGap bool     `json:"closedGap,omitempty"`
	Rounds    int      `json:"rounds"`
	Tokens    int      `json:"tokens"`
}

// BuildToolWorkflow builds a tool for a verb nothing fulfilled: in up to
// Rounds rounds the model writes a program with its tests and hosts, and
// the wrappers' sandbox refuses, builds and tests it, each problem going
// back to the model; a program that passes parks for review (UpdateDecide,
// or the approve and reject signals, as an airlock review). Approval
// registers the tool under its policy and closes the gap; rejection, a
// failed build, a spent budget or no model leave the gap open with the
// reason. Each round's activities have their own timeouts and retries,
// and the whole build is this run's history.
func BuildToolWorkflow(ctx workflow.Context, in BuildInput) (BuildResult, error) {
	if in.Verb == "" || !validVerb(in.Verb) {
		return BuildResult{}, activities.Fail(activities.ErrTypeInvalidInput, "build: verb %q must be UPPER_SNAKE", in.Verb)
	}
	o := in.Options
	if o.Rounds <= 0 {
		o.Rounds = DefaultBuildRounds
	}
	if o.ModelTimeout <= 0 {
		o.ModelTimeout = DefaultBuildModelTimeout
	}
	if o.TestTimeout <= 0 {
		o.TestTimeout = DefaultBuildTestTimeout
	}
	if o.ReviewTimeout <= 0 {
		o.ReviewTimeout = DefaultReviewTimeout
	}
	st := &BuildState{Status: BuildWriting, Input: in, Rounds: []BuildRound{}}
	if err := workflow.SetQueryHandler(ctx, BuildQuery, func() (BuildState, error) { return *st, nil }); err != nil {
		return BuildResult{}, err
	}
	// The build answers the airlock's review query too, so it parks on the
	// same pending-review list and decision routes as a spec's review.
	if err := workflow.SetQueryHandler(ctx, ReviewQuery, func() (AirlockState, error) { return st.AirlockView(workflow.GetInfo(ctx).WorkflowExecution.ID), nil }); err != nil {
		return BuildResult{}, err
	}
	b := &builder{ctx: ctx, in: in, o: o, st: st, decided: workflow.NewBufferedChannel(ctx, 1)}
	// The decision handler is there from the start, so a decision sent
	// while the build is still writing is refused as not pending (409 at
	// the API), not left unknown. Registering a handler adds nothing to the
	// history, so runs recorded before replay the same.
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateDecide, b.decide, workflow.UpdateHandlerOptions{Validator: b.canDecide}); err != nil {
		return BuildResult{}, err
	}
	// The gap says a build is under way (and later that it awaits review),
	// not the reason an earlier build left. Builds recorded before these
	// notes replay without them.
	b.progress = workflow.GetVersion(ctx, "build-gap-progress", workflow.DefaultVersion, 1) >= 1
	if b.progress {
		id := workflow.GetInfo(ctx).WorkflowExecution.ID
		b.note(fmt.Sprintf("a model is building a tool for it (status: GET /api/v1/builds/%s)", id))
	}
	res := b.run()
	res.Verb, res.Rounds, res.Tokens = in.Verb, len(st.Rounds), st.TokensUsed
	if res.ToolID != "" {
		res.ToolIDs = []string{res.ToolID}
	}
	st.Status, st.Result = res.Status, &res
	if res.Status != BuildRegistered {
		b.note(res.Reason)
	}
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"status": res.Status}).Counter(MetricBuilds).Inc(1)
	return res, nil
}

// MetricBuilds counts finished builds by status.
const MetricBuilds = "toolsmith_builds"

type builder struct {
	ctx workflow.Context
	in  BuildInput
	o   BuildOptions
	st  *BuildState
	// The review's decision: set by UpdateDecide or the signals.
	approve  *ApproveSignal
	reject   *RejectSignal
	timedOut bool
	// decided wakes the review's wait when an update records a decision.
	decided workflow.Channel
	// progress: the gap is told when the build starts and when it awaits
	// review (runs recorded before these notes have none).
	progress bool
}

// canDecide refuses a decision the build cannot take: one that is neither
// or both, a bad policy, a rejection without a reason, and any decision
// while the build is not pending (still writing, or decided or ended).
func (b *builder) canDecide(d Decision) error {
	if (d.Approve == nil) == (d.Reject == nil) {
		return activities.Fail(activities.ErrTypeInvalidInput, "build: a decision is an approval or a rejection")
	}
	if b.st.Status == BuildWriting {
		return activities.Fail(ErrTypeReviewDecided, "build: the build is still writing and testing its program (round %d), not pending; decide once a program has passed",
			len(b.st.Rounds)+1)
	}
	if b.approve != nil || b.reject != nil || b.timedOut || b.st.Status != BuildPending {
		return activities.Fail(ErrTypeReviewDecided, "build: the review is %s, not pending", b.st.Status)
	}
	if d.Approve != nil {
		if err := d.Approve.Policy.Validate(); err != nil {
			return activities.Fail(activities.ErrTypeInvalidInput, "build: policy: %v", err)
		}
	}
	if d.Reject != nil && strings.TrimSpace(d.Reject.Reason) == "" {
		return activities.Fail(activities.ErrTypeInvalidInput, "build: a rejection needs a reason")
	}
	return nil
}

// decide is UpdateDecide's handler: it checks again, as two updates may
// pass their validators before either handler runs.
func (b *builder) decide(_ workflow.Context, d Decision) error {
	if err := b.canDecide(d); err != nil {
		return err
	}
	b.approve, b.reject = d.Approve, d.Reject
	b.decided.SendAsync(true)
	return nil
}

func (b *builder) run() BuildResult {
	var a *activities.Build
	req := build.Request{Verb: b.in.Verb, Description: b.in.Description, Inputs: b.in.Inputs, Expected: b.in.Expected,
		Closest: b.in.Closest, Entities: b.in.Entities}
	// The model call: transient failures (network, 5xx) are retried once;
	// no model and a spent budget are not. Its timeout is per attempt.
	wctx := workflow.WithActivityOptions(b.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: b.o.ModelTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumAttempts: 2,
			NonRetryableErrorTypes: []string{activities.ErrTypeLLMUnavailable, activities.ErrTypeBuildBudget}},
	})
	// Building and testing: a refused, broken or failing program is a
	// result; only the sandbox's own failure is retried.
	tctx := workflow.WithActivityOptions(b.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: b.o.TestTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 2},
	})
	buildID := workflow.GetInfo(b.ctx).WorkflowExecution.ID
	var previous *build.Attempt
	last := ""
	for round := 1; round <= b.o.Rounds; round++ {
		var w activities.WriteProgramOutput
		err := workflow.ExecuteActivity(wctx, a.WriteProgram, activities.WriteProgramInput{Request: req, Previous: previous, TokensUsed: b.st.TokensUsed}).Get(b.ctx, &w)
		if err != nil {
			switch typeOr(err, "") {
			case activities.ErrTypeLLMUnavailable:
				return BuildResult{Status: BuildNeedsModel, Reason: ReasonNeedsModel + ": " + activities.Message(err)}
			case activities.ErrTypeBuildBudget:
				// The answer that spent the budget still counts: its
				// tokens, the model and the round (stage "budget").
				var spent activities.WriteProgramOutput
				if activities.Details(err, &spent) {
					b.st.TokensUsed += spent.Tokens
					b.st.Model, b.st.PromptVersion, b.st.TokenBudget = spent.Model, spent.PromptVersion, spent.Budget
				}
				b.st.Rounds = append(b.st.Rounds, BuildRound{Round: round, Tokens: spent.Tokens, Stage: StageBudget, Summary: activities.Message(err)})
				return BuildResult{Status: BuildFailed, Reason: fmt.Sprintf("round %d: %s", round, activities.Message(err))}
			case activities.ErrTypeModuleTimeout:
				return BuildResult{Status: BuildFailed, Reason: fmt.Sprintf("round %d: the model did not answer within %s (2 attempts)", round, b.o.ModelTimeout)}
			}
			return BuildResult{Status: BuildFailed, Reason: fmt.Sprintf("round %d: the model call failed: %s", round, activities.Message(err))}
		}
		b.st.TokensUsed += w.Tokens
		b.st.Model, b.st.PromptVersion, b.st.TokenBudget = w.Model, w.PromptVersion, w.Budget
		r := BuildRound{Round: round, Tokens: w.Tokens, Source: w.Program.Source}
		if w.Invalid != "" {
			r.Stage, r.Summary = "answer", w.Invalid
			b.st.Rounds = append(b.st.Rounds, r)
			previous, last = &build.Attempt{Source: w.Program.Source, Problem: w.Invalid}, w.Invalid
			continue
		}
		var rep build.Report
		err = workflow.ExecuteActivity(tctx, a.TestProgram, activities.TestProgramInput{BuildID: buildID, Round: round, Program: w.Program}).Get(b.ctx, &rep)
		if err != nil {
			return BuildResult{Status: BuildFailed, Reason: fmt.Sprintf("round %d: the sandbox failed: %s", round, activities.Message(err))}
		}
		r.Stage, r.Summary, r.Report = rep.Stage(), rep.Summary(), buildReportOf(rep)
		b.st.Rounds = append(b.st.Rounds, r)
		if rep.Passed {
			p := builtProgramOf(w.Program)
			b.st.Program = &p
			return b.review(w.Program)
		}
		problem := r.Summary
		if rep.Output != "" {
			problem += "\n" + rep.Output
		}
		previous, last = &build.Attempt{Source: w.Program.Source, Problem: problem}, r.Summary
	}
	return BuildResult{Status: BuildFailed, Reason: fmt.Sprintf("no program passed in %d rounds; the last: %s", b.o.Rounds, last)}
}

// review parks the passing program until a reviewer decides, as an
// airlock review does: UpdateDecide (answered, so a second decision is
// refused) or the approve and reject signals.
func (b *builder) review(p build.Program) BuildResult {
	ctx := b.ctx
	b.st.Status = BuildPending
	if b.progress {
		id := workflow.GetInfo(ctx).WorkflowExecution.ID
		b.note(fmt.Sprintf("a built tool awaits review (review it at /api/v1/tools/pending/%s)", id))
	}
	approveCh := workflow.GetSignalChannel(ctx, SignalApprove)
	rejectCh := workflow.GetSignalChannel(ctx, SignalReject)
	timerCtx, cancel := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(timerCtx, b.o.ReviewTimeout)
	for b.approve == nil && b.reject == nil && !b.timedOut {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(approveCh, func(c workflow.ReceiveChannel, _ bool) {
			var s ApproveSignal
			c.Receive(ctx, &s)
			if s.Policy.Validate() == nil {
				b.approve = &s
			}
		})
		sel.AddReceive(rejectCh, func(c workflow.ReceiveChannel, _ bool) {
			var s RejectSignal
			c.Receive(ctx, &s)
			b.reject = &s
		})
		sel.AddReceive(b.decided, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		sel.AddFuture(timer, func(workflow.Future) { b.timedOut = true })
		sel.Select(ctx)
	}
	cancel()
	approve, reject := b.approve, b.reject
	switch {
	case reject != nil:
		return BuildResult{Status: BuildRejected, Reviewer: reject.Reviewer,
			Reason: fmt.Sprintf("the built tool %s was rejected by %s: %s", p.Tool, nonEmpty(reject.Reviewer, "a reviewer"), reject.Reason)}
	case b.timedOut:
		return BuildResult{Status: BuildTimedOut, Reason: fmt.Sprintf("the built tool %s had no decision within %s", p.Tool, b.o.ReviewTimeout)}
	}
	b.st.Status, b.st.Policy = BuildRegistering, &approve.Policy
	var a *activities.Build
	rctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: b.o.TestTimeout,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
	})
	var out activities.RegisterBuiltOutput
	err := workflow.ExecuteActivity(rctx, a.RegisterBuiltTool, activities.RegisterBuiltInput{
		BuildID: workflow.GetInfo(ctx).WorkflowExecution.ID, Verb: b.in.Verb, Program: p, Policy: approve.Policy.Airlock(), Reviewer: approve.Reviewer,
	}).Get(ctx, &out)
	if err != nil {
		return BuildResult{Status: BuildFailed, Reviewer: approve.Reviewer, Reason: "approved, but registering failed: " + activities.Message(err)}
	}
	return BuildResult{Status: BuildRegistered, Reviewer: approve.Reviewer, ToolID: out.ToolID, ClosedGap: out.ClosedGap,
		Reason: fmt.Sprintf("approved by %s and registered as %s", nonEmpty(approve.Reviewer, "a reviewer"), out.ToolID)}
}

// note records the reason on the verb's gap (best effort: the reason is in
// the result either way).
func (b *builder) note(reason string) {
	var a *activities.Build
	nctx := workflow.WithActivityOptions(b.ctx, gapOptions)
	_ = workflow.ExecuteActivity(nctx, a.NoteGap, activities.NoteGapInput{Verb: b.in.Verb, Reason: reason}).Get(b.ctx, nil)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// airlockStatus maps a build's status onto the airlock review's.
func airlockStatus(s string) string {
	switch s {
	case BuildWriting:
		return AirlockPreparing
	case BuildPending:
		return AirlockPending
	case BuildRegistering:
		return AirlockOnboarding
	case BuildRegistered:
		return AirlockOnboarded
	case BuildRejected:
		return AirlockRejected
	case BuildTimedOut:
		return AirlockTimedOut
	}
	return AirlockFailed
}

// AirlockView is the build as an airlock review: its title and location
// name the build, its one operation is the program's tool, its servers
// are the hosts it asks for (with their reasons in the warnings' place,
// so a reviewer reads them beside the code), and Build holds the rest.
func (s BuildState) AirlockView(id string) AirlockState {
	rv := SpecReview{
		Location: "build:" + id, Slug: activities.BuiltSlug(s.Input.Verb),
		Title:       "Built tool for " + s.Input.Verb,
		Description: s.Input.Description, Servers: []string{}, AuthSchemes: []string{}, Warnings: []string{},
		Operations: []ReviewOperation{},
	}
	if p := s.Program; p != nil {
		rv.Description = p.Description
		rv.Operations = append(rv.Operations, ReviewOperation{Name: p.Tool, Method: "RUN", Path: "built program", Summary: p.Description})
		for _, h := range p.Hosts {
			rv.Servers = append(rv.Servers, "https://"+h.Host)
			rv.Warnings = append(rv.Warnings, fmt.Sprintf("calls %s: %s", h.Host, h.Reason))
		}
	}
	out := AirlockState{Status: airlockStatus(s.Status), Review: rv, Policy: s.Policy, Gaps: []string{s.Input.Verb}}
	if r := s.Result; r != nil {
		out.Outcome = &AirlockOutcome{Status: airlockStatus(r.Status), Reviewer: r.Reviewer, Reason: r.Reason, ToolIDs: r.ToolIDs}
		if r.ClosedGap {
			out.Outcome.ClosedGaps = []string{r.Verb}
		}
	}
	st := s
	out.Build = &st
	return out
}
