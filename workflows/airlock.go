package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
)

// Airlock signal and query names. A pending external spec is one running
// AirlockWorkflow that waits for a person's decision.
const (
	// SignalApprove carries an ApproveSignal.
	SignalApprove = "approve"
	// SignalReject carries a RejectSignal.
	SignalReject = "reject"
	// SignalSubscribe carries a SubscribeSignal: the subscriber workflow is
	// signalled SignalAirlockOutcome when the review ends.
	SignalSubscribe = "subscribe"
	// SignalAirlockOutcome carries an AirlockOutcome to subscribers.
	SignalAirlockOutcome = "airlock-outcome"
	// ReviewQuery returns the AirlockState.
	ReviewQuery = "review"
	// UpdateDecide carries a Decision. Unlike the signals, an update is
	// answered: a decision on a review that is already decided (or ended)
	// is refused with ErrTypeReviewDecided and never reaches the history,
	// so two quick rejects give one rejection and one refusal.
	UpdateDecide = "decide"
	// ErrTypeReviewDecided is the application error type of a decision sent
	// to a review that is no longer pending.
	ErrTypeReviewDecided = "ReviewDecided"
	// DefaultReviewTimeout bounds a review without a decision.
	DefaultReviewTimeout = 7 * 24 * time.Hour
)

// AirlockWorkflowID is the workflow ID of a spec's review: one per spec
// content, so scanning twice or a find-or-build joining never opens two.
func AirlockWorkflowID(specHash string) string {
	if len(specHash) > 16 {
		specHash = specHash[:16]
	}
	return "airlock-" + specHash
}

// Review outcomes.
const (
	AirlockPreparing  = "preparing"
	AirlockPending    = "pending"
	AirlockOnboarding = "onboarding"
	AirlockOnboarded  = "onboarded"
	AirlockRejected   = "rejected"
	AirlockTimedOut   = "timed_out"
	AirlockFailed     = "failed"
)

// AirlockInput starts a review.
type AirlockInput struct {
	SpecHash string `json:"specHash"`
	SourceID string `json:"sourceId,omitempty"`
	Location string `json:"location"`
	// ReviewTimeout ends the review without a decision (0: DefaultReviewTimeout).
	ReviewTimeout time.Duration `json:"reviewTimeout,omitempty"`
}

// ApproveSignal is a reviewer's approval with its policies.
type ApproveSignal struct {
	Reviewer string `json:"reviewer,omitempty"`
	Policy   Policy `json:"policy"`
}

// RejectSignal is a reviewer's rejection.
type RejectSignal struct {
	Reviewer string `json:"reviewer,omitempty"`
	Reason   string `json:"reason"`
}

// Decision is a reviewer's approval or rejection (exactly one is set),
// sent with UpdateDecide.
type Decision struct {
	Approve *ApproveSignal `json:"approve,omitempty"`
	Reject  *RejectSignal  `json:"reject,omitempty"`
}

// SubscribeSignal asks for the outcome to be signalled to a workflow.
type SubscribeSignal struct {
	WorkflowID string `json:"workflowId"`
	// Gap, when set, is a verb nothing fulfilled that this spec is proposed
	// for (gap-driven discovery): onboarding the spec closes that gap.
	Gap string `json:"gap,omitempty"`
}

// AirlockOutcome is how a review ended.
type AirlockOutcome struct {
	SpecHash string   `json:"specHash"`
	Status   string   `json:"status"`
	Reviewer string   `json:"reviewer,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	ToolIDs  []string `json:"toolIds,omitempty"`
	// Stage is the onboarding stage that failed (status failed).
	Stage    string   `json:"failedStage,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// ClosedGaps are the gaps the onboarded tools closed.
	ClosedGaps []string `json:"closedGaps,omitempty"`
}

// AirlockState is what ReviewQuery returns.
type AirlockState struct {
	Status  string          `json:"status"`
	Review  SpecReview      `json:"review"`
	Policy  *Policy         `json:"policy,omitempty"`
	Outcome *AirlockOutcome `json:"outcome,omitempty"`
	Ignored []string        `json:"ignoredSignals,omitempty"`
	// Gaps are the verbs nothing fulfilled that this review was proposed
	// for; onboarding closes them.
	Gaps []string `json:"gaps,omitempty"`
	// Build is set when the review is of a tool built from scratch
	// (BuildToolWorkflow): the code, its rounds, hosts, model and prompt.
	Build *BuildState `json:"build,omitempty"`
}

// AirlockWorkflow is one pending external spec: it prepares the review,
// waits for approve or reject (signals) until the review timeout, then
// onboards (wrapper generated, built, tested, tools registered) or records
// the rejection, and finally tells every subscriber the outcome. A timed-out
// review ends cleanly and leaves the spec's definitions available.
func AirlockWorkflow(ctx workflow.Context, in AirlockInput) (AirlockOutcome, error) {
	if in.SpecHash == "" {
		return AirlockOutcome{}, activities.Fail(activities.ErrTypeInvalidInput, "airlock: spec hash is required")
	}
	timeout := in.ReviewTimeout
	if timeout <= 0 {
		timeout = DefaultReviewTimeout
	}
	state := &AirlockState{Status: AirlockPreparing}
	var subscribers []string
	if err := workflow.SetQueryHandler(ctx, ReviewQuery, func() (AirlockState, error) { return *state, nil }); err != nil {
		return AirlockOutcome{}, err
	}
	var approve *ApproveSignal
	var reject *RejectSignal
	timedOut := false
	// decided wakes the wait below when an update records a decision.
	decided := workflow.NewBufferedChannel(ctx, 1)
	canDecide := func(d Decision) error {
		if (d.Approve == nil) == (d.Reject == nil) {
			return activities.Fail(activities.ErrTypeInvalidInput, "airlock: a decision is an approval or a rejection")
		}
		if approve != nil || reject != nil || timedOut || (state.Status != AirlockPreparing && state.Status != AirlockPending) {
			status := state.Status
			switch {
			case approve != nil:
				status = "approved"
			case reject != nil:
				status = AirlockRejected
			}
			return activities.Fail(ErrTypeReviewDecided, "airlock: the review is %s, not pending", status)
		}
		if d.Approve != nil {
			if err := d.Approve.Policy.Validate(); err != nil {
				return activities.Fail(activities.ErrTypeInvalidInput, "airlock: policy: %v", err)
			}
		}
		return nil
	}
	// The validator refuses a decision before it is written to the history;
	// the handler checks again, as two updates may pass their validators
	// before either handler runs. Decisions sent while the review is being
	// prepared wait for the review to be ready.
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateDecide, func(ctx workflow.Context, d Decision) error {
		if err := canDecide(d); err != nil {
			return err
		}
		approve, reject = d.Approve, d.Reject
		decided.SendAsync(true)
		return nil
	}, workflow.UpdateHandlerOptions{Validator: canDecide}); err != nil {
		return AirlockOutcome{}, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var a *activities.Airlock
	var review airlock.Review
	if err := workflow.ExecuteActivity(actx, a.PrepareReview, activities.PrepareReviewInput{SpecHash: in.SpecHash, Location: in.Location}).Get(ctx, &review); err != nil {
		return AirlockOutcome{}, err
	}
	state.Review = SpecReviewOf(review)
	state.Status = AirlockPending

	approveCh := workflow.GetSignalChannel(ctx, SignalApprove)
	rejectCh := workflow.GetSignalChannel(ctx, SignalReject)
	subscribeCh := workflow.GetSignalChannel(ctx, SignalSubscribe)
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	timer := workflow.NewTimer(timerCtx, timeout)

	for approve == nil && reject == nil && !timedOut {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(approveCh, func(c workflow.ReceiveChannel, _ bool) {
			var s ApproveSignal
			c.Receive(ctx, &s)
			// The API validates before signalling; a signal sent some other
			// way is checked again here (Validate is pure, so deterministic).
			if err := s.Policy.Validate(); err != nil {
				state.Ignored = append(state.Ignored, "approve: "+err.Error())
				return
			}
			approve = &s
		})
		sel.AddReceive(rejectCh, func(c workflow.ReceiveChannel, _ bool) {
			var s RejectSignal
			c.Receive(ctx, &s)
			reject = &s
		})
		sel.AddReceive(subscribeCh, func(c workflow.ReceiveChannel, _ bool) {
			var s SubscribeSignal
			c.Receive(ctx, &s)
			subscribers = appendOnce(subscribers, s.WorkflowID)
			state.Gaps = appendOnce(state.Gaps, s.Gap)
		})
		sel.AddReceive(decided, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
		sel.Select(ctx)
	}
	cancelTimer()

	outcome := AirlockOutcome{SpecHash: in.SpecHash}
	switch {
	case approve != nil:
		state.Status, state.Policy = AirlockOnboarding, &approve.Policy
		octx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			// Building and testing a wrapper compiles Go code.
			StartToCloseTimeout: 10 * time.Minute,
			HeartbeatTimeout:    0,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2},
		})
		var res activities.OnboardOutput
		err := workflow.ExecuteActivity(octx, a.OnboardSpec, activities.OnboardInput{
			ApprovalID: workflow.GetInfo(ctx).WorkflowExecution.ID, SpecHash: in.SpecHash, Location: in.Location, Policy: approve.Policy.Airlock(),
		}).Get(ctx, &res)
		outcome.Reviewer = approve.Reviewer
		switch {
		case err != nil:
			outcome.Status, outcome.Reason = AirlockFailed, activities.Message(err)
		case res.Stage != "":
			outcome.Status, outcome.Stage, outcome.Reason, outcome.Warnings = AirlockFailed, res.Stage, res.Error, res.Warnings
		default:
			outcome.Status, outcome.ToolIDs, outcome.Warnings = AirlockOnboarded, res.ToolIDs, res.Warnings
			// The gaps this spec was proposed for are covered now (only
			// reviews proposed for gaps run this activity).
			if len(state.Gaps) > 0 && len(res.ToolIDs) > 0 {
				var closed []string
				if err := workflow.ExecuteActivity(actx, a.CloseGaps, activities.CloseGapsInput{Verbs: state.Gaps, ToolID: res.ToolIDs[0]}).Get(ctx, &closed); err != nil {
					outcome.Warnings = append(outcome.Warnings, "gaps not closed: "+activities.Message(err))
				} else {
					outcome.ClosedGaps = closed
				}
			}
		}
	case reject != nil:
		outcome.Status, outcome.Reviewer, outcome.Reason = AirlockRejected, reject.Reviewer, reject.Reason
	default:
		outcome.Status, outcome.Reason = AirlockTimedOut, "no decision within "+timeout.String()
	}
	if outcome.Status != AirlockOnboarded {
		// Rejected specs stay searchable as rejected (never offered again
		// by find-or-build); timed-out and failed ones become available.
		// Either way the wrapper name the review reserved is given back.
		status := "available"
		if outcome.Status == AirlockRejected {
			status = "rejected"
		}
		if err := workflow.ExecuteActivity(actx, a.SetSpecStatus, activities.SpecStatusInput{SpecHash: in.SpecHash, Status: status,
			Name: state.Review.Slug, Location: in.Location}).Get(ctx, nil); err != nil {
			return outcome, err
		}
	}
	state.Status, state.Outcome = outcome.Status, &outcome
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"state": outcome.Status}).Counter(MetricAirlockReviews).Inc(1)

	// Subscribers that asked while onboarding ran are still in the channel.
	for {
		var s SubscribeSignal
		if !subscribeCh.ReceiveAsync(&s) {
			break
		}
		subscribers = appendOnce(subscribers, s.WorkflowID)
		state.Gaps = appendOnce(state.Gaps, s.Gap)
	}
	// Decisions signalled after the first one are read and recorded as
	// ignored, never left unhandled (the review is decided once).
	for {
		var s ApproveSignal
		if !approveCh.ReceiveAsync(&s) {
			break
		}
		state.Ignored = append(state.Ignored, "approve: the review is "+outcome.Status)
	}
	for {
		var s RejectSignal
		if !rejectCh.ReceiveAsync(&s) {
			break
		}
		state.Ignored = append(state.Ignored, "reject: the review is "+outcome.Status)
	}
	for _, id := range subscribers {
		// Best effort: a subscriber that has ended no longer needs the news.
		_ = workflow.SignalExternalWorkflow(ctx, id, "", SignalAirlockOutcome, outcome).Get(ctx, nil)
	}
	return outcome, nil
}

func appendOnce(list []string, v string) []string {
	if v == "" {
		return list
	}
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// ScanInput asks to scan sources.
type ScanInput struct {
	// SourceIDs to scan; empty scans every source.
	SourceIDs []string `json:"sourceIds,omitempty"`
	// ReviewTimeout is passed to the reviews opened for new specs.
	ReviewTimeout time.Duration `json:"reviewTimeout,omitempty"`
}

// ScanOutput reports a scan.
type ScanOutput struct {
	Reports []ScanReport `json:"reports"`
	// Reviews are the AirlockWorkflow IDs opened for new specs.
	Reviews []string `json:"reviews"`
}

// ScanSourcesWorkflow fetches each source, indexes the operations of specs
// it has not seen as external definitions, and opens a review
// (AirlockWorkflow) for each new spec. It runs on a Temporal Schedule and
// on demand.
func ScanSourcesWorkflow(ctx workflow.Context, in ScanInput) (ScanOutput, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var a *activities.Airlock
	ids := in.SourceIDs
	if len(ids) == 0 {
		if err := workflow.ExecuteActivity(actx, a.ListSources).Get(ctx, &ids); err != nil {
			return ScanOutput{}, err
		}
	}
	out := ScanOutput{Reports: []ScanReport{}, Reviews: []string{}}
	for _, id := range ids {
		var scanned activities.ScanSourceOutput
		rep := ScanReport{SourceID: id}
		if err := workflow.ExecuteActivity(actx, a.ScanSource, id).Get(ctx, &scanned); err != nil {
			rep.Error = activities.Message(err)
		} else {
			rep = scanReportOf(scanned)
		}
		out.Reports = append(out.Reports, rep)
		for _, spec := range rep.NewSpecs {
			var wfID string
			err := workflow.ExecuteActivity(actx, a.OpenReview, activities.OpenReviewInput{
				SpecHash: spec.Hash, SourceID: id, Location: spec.Location, ReviewTimeout: in.ReviewTimeout,
			}).Get(ctx, &wfID)
			if err != nil {
				return out, err
			}
			out.Reviews = append(out.Reviews, wfID)
		}
	}
	return out, nil
}

// HealthCheckWorkflow probes every onboarded API once; it
// runs on a Temporal Schedule.
func HealthCheckWorkflow(ctx workflow.Context) (HealthCheckReport, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2},
	})
	var a *activities.Airlock
	var rep airlock.HealthReport
	err := workflow.ExecuteActivity(actx, a.CheckHealth).Get(ctx, &rep)
	return HealthCheckReport(rep), err
}

// HealthCheckReport is what a health check found: how many onboarded APIs
// it probed, which failed, and which it disabled (airlock.HealthReport).
type HealthCheckReport struct {
	Checked  int      `json:"checked"`
	Failing  []string `json:"failing,omitempty"`
	Disabled []string `json:"disabled,omitempty"`
}

// GapDiscoveryInput configures one round of gap-driven discovery.
type GapDiscoveryInput struct {
	// MinCount is how often a gap must have been asked (≥ 1).
	MinCount int `json:"minCount"`
	// MinScore is the similarity a definition needs.
	MinScore float64 `json:"minScore"`
	// Limit bounds how many gaps are examined (default 50).
	Limit int `json:"limit,omitempty"`
}

// GapProposal is one review proposed for a gap.
type GapProposal struct {
	Verb       string  `json:"verb"`
	Count      int     `json:"count"`
	ReviewID   string  `json:"reviewId"`
	API        string  `json:"api"`
	Definition string  `json:"definition"`
	Score      float64 `json:"score"`
}

// GapDiscoveryReport is what a round of gap-driven discovery did.
type GapDiscoveryReport struct {
	Examined  int           `json:"examined"`
	Proposals []GapProposal `json:"proposals"`
}

// GapDiscoveryWorkflow proposes, for the open gaps asked at least MinCount
// times, the external definitions that fit them for review (a schedule
// runs it when --gap-discovery-min-count is set; off by default).
func GapDiscoveryWorkflow(ctx workflow.Context, in GapDiscoveryInput) (GapDiscoveryReport, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var a *activities.Airlock
	var rep activities.ProposeReport
	if err := workflow.ExecuteActivity(actx, a.ProposeForGaps, activities.ProposeInput{MinCount: in.MinCount, MinScore: in.MinScore, Limit: in.Limit}).Get(ctx, &rep); err != nil {
		return GapDiscoveryReport{}, err
	}
	out := GapDiscoveryReport{Examined: rep.Examined, Proposals: make([]GapProposal, len(rep.Proposals))}
	for i, p := range rep.Proposals {
		out.Proposals[i] = GapProposal{Verb: p.Verb, Count: p.Count, ReviewID: p.ReviewID, API: p.API, Definition: p.Definition, Score: p.Score}
	}
	return out, nil
}
