package workflows

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/llm"
	"github.com/toolsmith/toolsmith/retrieval"
)

// NovelVerbOptions tune a fulfilment.
type NovelVerbOptions struct {
	// Confidence, Threshold, Margin, ScoreMargin and EvidenceMargin are the
	// substitution rule (retrieval.SubstituteRule). They come as a whole:
	// with none set the run uses retrieval.DefaultSubstituteRule; with any
	// set, an unset bar is off (and with neither a confidence nor a
	// threshold, the default's confidence applies).
	//
	// Confidence is the decision model's confidence the best match needs.
	Confidence float64 `json:"confidence,omitempty"`
	// Threshold is the similarity the best match needs to be substituted.
	Threshold float64 `json:"threshold,omitempty"`
	// Margin, when > 0, is how far the best match's similarity must stand
	// above every other candidate's to be substituted.
	Margin float64 `json:"margin,omitempty"`
	// ScoreMargin, when > 0, is how far the best match's hybrid score must
	// stand above the second's.
	ScoreMargin float64 `json:"scoreMargin,omitempty"`
	// EvidenceMargin, when > 0, is a lead of the best match's hybrid score
	// over the second's that substitutes whatever the similarity.
	EvidenceMargin float64 `json:"evidenceMargin,omitempty"`
	// MaxDepth bounds child workflow nesting: the top-level run is depth 0
	// and a child may run at depth MaxDepth at most; 0 means DefaultMaxDepth.
	MaxDepth int `json:"maxDepth,omitempty"`
	// DryRun searches, maps inputs and plans, but executes nothing: the
	// substitute branch validates the mapped arguments without calling the
	// module, and the decompose branch returns the plan without running it.
	DryRun bool `json:"dryRun,omitempty"`
	// Chain lists the verbs being fulfilled above this one (set by parent
	// workflows for the cycle guard); Depth is len(Chain).
	Chain []string `json:"chain,omitempty"`
	// SearchLimit is how many candidates to fetch; 0 means DefaultSearchLimit.
	SearchLimit int `json:"searchLimit,omitempty"`
	// AirlockWait bounds how long find-or-build waits for the review of an
	// external definition it found; 0 means DefaultAirlockWait.
	AirlockWait time.Duration `json:"airlockWait,omitempty"`
	// JudgeTimeout bounds each attempt of the configured model's judgement
	// of the substitution; 0 means DefaultJudgeTimeout.
	JudgeTimeout time.Duration `json:"judgeTimeout,omitempty"`
}

// DefaultAirlockWait is how long find-or-build waits for a review outcome.
const DefaultAirlockWait = 10 * time.Minute

// AirlockRef records the external definition find-or-build found and the
// review it joined.
type AirlockRef struct {
	ReviewID   string  `json:"reviewWorkflowId"`
	SpecHash   string  `json:"specHash"`
	API        string  `json:"api"`
	Definition string  `json:"definition"`
	Score      float64 `json:"score"`
	// Status is the review's outcome, or "pending" when the wait ended first.
	Status  string   `json:"status"`
	ToolIDs []string `json:"toolIds,omitempty"`
}

// NovelVerbInput is a verb to fulfil.
type NovelVerbInput struct {
	Verb        string           `json:"verb"`
	Description string           `json:"description,omitempty"`
	Inputs      map[string]any   `json:"inputs,omitempty"`
	Context     string           `json:"context,omitempty"`
	Caller      Caller           `json:"caller"`
	Options     NovelVerbOptions `json:"options,omitempty"`
}

// Caller is who a run acts for, as its input carries it: the fields of
// access.Caller, whose rules (visibility, groups, state) the run applies.
type Caller struct {
	UserID      string   `json:"userId,omitempty"`
	SessionID   string   `json:"sessionId,omitempty"`
	Roles       []string `json:"roles,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
	Level       string   `json:"level,omitempty"`
	// Groups: nil is the default group, empty and non-nil is none; the
	// JSON keeps the difference (null against []).
	Groups []string `json:"groups"`
	State  string   `json:"state,omitempty"`
	// AllowedModules: nil is every module.
	AllowedModules []string `json:"allowedModules"`
}

// ScoredTool is a candidate as the workflow saw it.
type ScoredTool struct {
	ToolID string `json:"toolId"`
	Verb   string `json:"verb"`
	// Score is the search's hybrid rank score; a result's scores are sorted
	// by it, highest first.
	Score float64 `json:"score"`
	// Similarity is what the substitution threshold is compared against.
	Similarity float64 `json:"similarity"`
}

// Step kinds.
const (
	StepTool  = "tool"  // the step's verb is a known, visible tool
	StepNovel = "novel" // the step ran as a child NovelVerbWorkflow
)

// StepResult reports one executed plan step.
type StepResult struct {
	ID          string         `json:"id"`
	Verb        string         `json:"verb"`
	Kind        string         `json:"kind"`
	ToolID      string         `json:"toolId,omitempty"`
	ChildID     string         `json:"childWorkflowId,omitempty"`
	ChildBranch string         `json:"childBranch,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
	Output      any            `json:"output,omitempty"`
	State       string         `json:"state,omitempty"`
	Error       string         `json:"error,omitempty"`
	ErrorType   string         `json:"errorType,omitempty"`
}

// NovelVerbResult records what a fulfilment did and why.
type NovelVerbResult struct {
	Verb string `json:"verb"`
	// Branch is substitute, decompose, no_capability or needs_inputs (or
	// the branch that was under way when the workflow failed).
	Branch string `json:"branch"`
	// Reason explains the branch in one sentence.
	Reason    string  `json:"reason"`
	Threshold float64 `json:"threshold"`
	// Rule is the substitution rule the run decided with (Threshold is
	// its threshold).
	Rule   SubstituteRule `json:"rule"`
	Depth  int            `json:"depth"`
	Query  string         `json:"query,omitempty"`
	Scores []ScoredTool   `json:"scores"`
	// Tools lists every tool executed (children's included), in order.
	Tools []string `json:"tools"`
	// Tool and MissingInputs are set on branch needs_inputs: the confident
	// match, which did not run, and its required parameters the verb's
	// inputs do not fill (resubmit with them, or execute the tool).
	Tool          string            `json:"tool,omitempty"`
	MissingInputs []string          `json:"missingInputs,omitempty"`
	Arguments     map[string]any    `json:"arguments,omitempty"`
	Renamed       map[string]string `json:"renamed,omitempty"`
	Plan          *Plan             `json:"plan,omitempty"`
	Steps         []StepResult      `json:"steps,omitempty"`
	// Output is the substituted tool's output, or the last step's.
	Output any `json:"output,omitempty"`
	// State is the caller's state after the run (a tool may move it).
	State  string `json:"state"`
	DryRun bool   `json:"dryRun,omitempty"`
	// GapRecorded says where the no_capability gap was recorded.
	GapRecorded string `json:"gapRecorded,omitempty"`
	// Airlock is set when find-or-build found an external definition.
	Airlock *AirlockRef `json:"airlock,omitempty"`
	// Build is set when find-or-build started building a tool.
	Build *BuildRef `json:"build,omitempty"`
	// Judge records who decided the substitution (the rule, or the
	// configured model) and the model's reason; nil for runs recorded
	// before the judge and for searches with no candidates.
	Judge *Judgement `json:"judge,omitempty"`
	// Error and ErrorType are set when the workflow failed; the failure's
	// details carry this result.
	Error     string `json:"error,omitempty"`
	ErrorType string `json:"errorType,omitempty"`
}

// Plan is the decomposition a run followed, as its result records it: the
// planner's steps (llm.Plan) in order, or none and the planner's reason.
type Plan struct {
	Steps  []PlanStep `json:"steps"`
	Reason string     `json:"reason,omitempty"`
}

// PlanStep is one step of a Plan; its inputs are literals or references
// ("$inputs.<name>", "$steps.<id>.output").
type PlanStep struct {
	ID          string         `json:"id"`
	Verb        string         `json:"verb"`
	Description string         `json:"description,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
}

func planOf(p llm.Plan) *Plan {
	out := &Plan{Reason: p.Reason}
	if p.Steps != nil {
		out.Steps = make([]PlanStep, len(p.Steps))
	}
	for i, s := range p.Steps {
		out.Steps[i] = PlanStep{ID: s.ID, Verb: s.Verb, Description: s.Description, Inputs: s.Inputs}
	}
	return out
}

// SubstituteRule is the substitution rule a run decided with, as its
// result records it: the bars of retrieval.SubstituteRule (0: off).
type SubstituteRule struct {
	Confidence     float64 `json:"confidence,omitempty"`
	Threshold      float64 `json:"threshold,omitempty"`
	Margin         float64 `json:"margin,omitempty"`
	ScoreMargin    float64 `json:"scoreMargin,omitempty"`
	EvidenceMargin float64 `json:"evidenceMargin,omitempty"`
}

func substituteRule(r retrieval.SubstituteRule) SubstituteRule {
	return SubstituteRule{Confidence: r.Confidence, Threshold: r.Threshold, Margin: r.Margin, ScoreMargin: r.ScoreMargin, EvidenceMargin: r.EvidenceMargin}
}

// Progress is what the progress query returns.
type Progress struct {
	Verb        string   `json:"verb"`
	Status      string   `json:"status"`
	Stage       string   `json:"stage"`
	Depth       int      `json:"depth"`
	Tools       []string `json:"tools,omitempty"`
	StepsTotal  int      `json:"stepsTotal,omitempty"`
	StepsDone   int      `json:"stepsDone,omitempty"`
	CurrentStep string   `json:"currentStep,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// Activity options. Retries are safe for every activity: reads are pure and
// every module call carries the workflow+activity idempotency key.
var (
	searchOptions = workflow.LocalActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2, MaximumAttempts: 3},
	}
	// executeOptions outlive the slowest module timeout (120 s) so the
	// router, not Temporal, reports a module timeout. The activity
	// heartbeats while the module works, so a worker that dies mid-call
	// is noticed within HeartbeatTimeout and the call retried on another
	// worker (with the same idempotency key), not after 150 s.
	executeOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 150 * time.Second,
		HeartbeatTimeout:    executeHeartbeat,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
	}
	decomposeOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
	}
	gapOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5},
	}
)

// executeHeartbeat is the execute activity's heartbeat timeout.
const executeHeartbeat = 10 * time.Second

// fulfilment is one run's mutable state; it lives only inside the workflow.
type fulfilment struct {
	ctx      workflow.Context
	in       NovelVerbInput
	res      NovelVerbResult
	progress Progress
	caller   access.Caller
	// ownRule says the caller set (part of) the substitution rule; such a
	// run's substitution teaches no query unless the default rule would
	// have made it too (untaught).
	ownRule bool
	// untaught, when set, says why the substitution's use is recorded
	// without the verb's text (it lifts the tool in no one's searches for
	// that text): the caller's rule alone made it, or the match is weak.
	untaught string
}

// NovelVerbWorkflow fulfils a verb by substitution, decomposition or, failing
// both, by recording the gap (branch no_capability). Failures end the
// workflow with a non-retryable application error whose type is one of the
// activities.ErrType* constants and whose details hold the partial
// NovelVerbResult.
func NovelVerbWorkflow(ctx workflow.Context, in NovelVerbInput) (NovelVerbResult, error) {
	in.Verb = llm.NormalizeVerb(in.Verb)
	ownRule := !in.Options.Rule().IsZero()
	if in.Options.Threshold <= 0 && in.Options.Confidence <= 0 {
		// Runs started before the decision model keep the rule they were
		// started under, so their histories replay.
		switch workflow.GetVersion(ctx, "default-substitute-rule", workflow.DefaultVersion, 2) {
		case workflow.DefaultVersion:
			in.Options.Threshold = legacyDefaultThreshold
		case 1:
			in.Options.SetRule(in.Options.Rule().Or(retrieval.CloseMatchRule()))
		default:
			in.Options.SetRule(in.Options.Rule().Or(retrieval.DefaultSubstituteRule()))
		}
	}
	if in.Options.MaxDepth <= 0 {
		in.Options.MaxDepth = DefaultMaxDepth
	}
	if in.Options.SearchLimit <= 0 {
		in.Options.SearchLimit = DefaultSearchLimit
	}
	f := &fulfilment{ctx: ctx, in: in, caller: access.Caller(in.Caller), ownRule: ownRule}
	f.res = NovelVerbResult{
		Verb: in.Verb, Branch: BranchSearch, Threshold: in.Options.Threshold, Rule: substituteRule(in.Options.Rule()), Depth: len(in.Options.Chain),
		Scores: []ScoredTool{}, Tools: []string{}, State: f.caller.EffectiveState(), DryRun: in.Options.DryRun,
	}
	f.progress = Progress{Verb: in.Verb, Status: StatusRunning, Stage: BranchSearch, Depth: f.res.Depth}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return f.progress, nil }); err != nil {
		return f.res, fmt.Errorf("workflows: register progress query: %w", err)
	}
	res, err := f.run()
	outcome := "completed"
	if err != nil {
		outcome = "failed"
	}
	// Replay-safe: the SDK records through the client's metrics handler
	// (Prometheus in cmd/toolsmith) only when the workflow is not replaying.
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"branch": res.Branch, "outcome": outcome}).Counter(MetricFulfilments).Inc(1)
	if err != nil {
		f.progress.Status, f.progress.Error = StatusFailed, err.Error()
		return res, err
	}
	f.progress.Status = StatusCompleted
	return res, nil
}

// Metrics the workflows record through workflow.GetMetricsHandler (the
// Prometheus adapter adds "_total" to counters).
const (
	// MetricFulfilments counts finished novel-verb runs by branch and outcome.
	MetricFulfilments = "toolsmith_fulfilments"
	// MetricAirlockReviews counts airlock reviews by final state.
	MetricAirlockReviews = "toolsmith_airlock_reviews"
)

func (f *fulfilment) run() (NovelVerbResult, error) {
	in := f.in
	if in.Verb == "" || !validVerb(in.Verb) {
		return f.fail(activities.ErrTypeInvalidInput, "verb %q must be UPPER_SNAKE (e.g. CONVERT_CURRENCY)", in.Verb)
	}
	if slices.Contains(in.Options.Chain, in.Verb) {
		return f.fail(activities.ErrTypeCycle, "verb %s is already being fulfilled by an ancestor (chain %v)", in.Verb, in.Options.Chain)
	}
	f.stage(BranchSearch, SAVerb.ValueSet(in.Verb))

	var g *activities.Graph
	var search activities.SearchOutput
	// Search is a local activity: a read-only, idempotent call of a few
	// milliseconds, so running it inside the workflow task saves the
	// schedule/poll/complete round trip of a regular activity (the
	// substitute branch's latency budget). Its result is still recorded in
	// history, so replay does not search again.
	sctx := workflow.WithLocalActivityOptions(f.ctx, searchOptions)
	// The JSON types of the candidates' required parameters are read from
	// version "decision-input-types" 1 on, for a verb that brings inputs:
	// an input of another type does not fill its parameter (it would fail
	// the execution's schema check). Earlier runs replay by names alone.
	types := len(in.Inputs) > 0 && workflow.GetVersion(f.ctx, "decision-input-types", workflow.DefaultVersion, 1) >= 1
	err := workflow.ExecuteLocalActivity(sctx, g.SearchTools, activities.SearchInput{
		Verb: in.Verb, Description: in.Description, Context: in.Context, Caller: f.caller, Limit: in.Options.SearchLimit,
		ParamTypes: types,
	}).Get(f.ctx, &search)
	if err != nil {
		return f.fail(typeOr(err, activities.ErrTypeStepFailed), "search for %s failed: %s", in.Verb, activities.Message(err))
	}
	f.res.Query = search.Query
	for _, c := range search.Candidates {
		f.res.Scores = append(f.res.Scores, ScoredTool{ToolID: c.ToolID, Verb: c.Verb, Score: c.Score, Similarity: c.Similarity})
	}

	// The decision `toolsmith eval --protocol leave-one-out` measures.
	// Input fit (do the verb's inputs fill the tool's required
	// parameters?) is read from version "decision-input-fit" 1 on.
	var inputs []string
	if workflow.GetVersion(f.ctx, "decision-input-fit", workflow.DefaultVersion, 1) >= 1 {
		inputs = sortedKeys(in.Inputs)
	}
	// A candidate that provides the requested verb itself is read from
	// version "decision-same-verb" 1 on (retrieval.Candidate.SameVerb).
	sameVerb := workflow.GetVersion(f.ctx, "decision-same-verb", workflow.DefaultVersion, 1) >= 1
	// A tool's record as a first candidate, learned from use by the
	// retraining workflow, is read from version "decision-record" 1 on;
	// runs started before it replay as if no tool had one.
	record := workflow.GetVersion(f.ctx, "decision-record", workflow.DefaultVersion, 1) >= 1
	// A candidate this deployment cannot run (its module is not routed) is
	// read from version "decision-unavailable" 1 on: it is never
	// substituted, and no alternative to the first.
	unavailable := slices.ContainsFunc(search.Candidates, func(c activities.Candidate) bool { return c.Unavailable }) &&
		workflow.GetVersion(f.ctx, "decision-unavailable", workflow.DefaultVersion, 1) >= 1
	// From version "decision-unavailable-rival" 1 on, such a candidate
	// stays a rival of the others and nothing after it is read in its
	// place (retrieval.SubstituteRule.ChooseWith); runs started before it
	// replay reading it as one the inputs cannot fill, as the rule then did.
	unservedRival := unavailable && workflow.GetVersion(f.ctx, "decision-unavailable-rival", workflow.DefaultVersion, 1) >= 1
	cands := make([]retrieval.Candidate, len(search.Candidates))
	for i, c := range search.Candidates {
		cands[i] = retrieval.Candidate{Similarity: c.Similarity, Score: c.Score, Keyword: c.Keyword, Subword: c.Subword, Learned: c.Learned,
			InputFit: retrieval.InputFit(c.Required, inputs), SameVerb: sameVerb && c.Verb == in.Verb, Unavailable: unavailable && c.Unavailable}
		if types && inputs != nil {
			cands[i].InputFit, cands[i].Misfit = retrieval.InputFitValues(requiredParams(c), in.Inputs)
		}
		if cands[i].Unavailable && !unservedRival {
			cands[i].InputFit = -1
		}
		if record && c.Recorded {
			cands[i].Record, cands[i].Recorded = c.Record, true
		}
	}
	// The zero-shot part's similarity floor holds from version
	// "decision-zero-shot-floor" 1 on; runs started before it replay
	// without it.
	model := retrieval.DefaultDecisionModel
	if workflow.GetVersion(f.ctx, "decision-zero-shot-floor", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		model.ZeroShotFloor = 0
	}
	// The evidence part refitted for the ranking whose open gate reaches
	// only related tools holds from version "decision-evidence-refit" 1
	// on; runs started before it replay with the earlier evidence part.
	// A first without a record reads less sure from version
	// "decision-no-record" 1 on (the shift moved onto "has a record");
	// runs started before it replay with the refit's two weights.
	if workflow.GetVersion(f.ctx, "decision-evidence-refit", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		earlier := retrieval.EarlierDecisionModel
		model.EvidenceBias, model.EvidenceWeights, model.EvidenceShift = earlier.EvidenceBias, earlier.EvidenceWeights, earlier.EvidenceShift
	} else if workflow.GetVersion(f.ctx, "decision-no-record", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		model.EvidenceShift = retrieval.RefitEvidenceShift
		model.EvidenceWeights[retrieval.DecisionEvidenceFeatures-1] = retrieval.RefitRecordShift
	}
	pick, why := f.decide(f.in.Options.Rule(), model, search.Candidates, cands)
	// A configured model judges the rule's decision from version
	// "llm-judge" 1 on; runs recorded before it replay without the judge.
	if len(cands) > 0 && workflow.GetVersion(f.ctx, "llm-judge", workflow.DefaultVersion, 1) >= 1 {
		pick, why = f.judge(search.Candidates, cands, pick, why)
	}
	// From version "substitute-teaches-default" 1 on, a substitution's use
	// is recorded without the verb's text (it teaches no search) when:
	//   - only the caller's own rule makes it (a lower confidence bar, a
	//     similarity threshold): the caller's choice, not the service's
	//     judgement, so no caller can teach everyone's searches by forcing
	//     substitutions;
	//   - or the verb's text is less like the tool than a reported use's
	//     query must be to be learned (retrieval.ReportFloor): one rule
	//     for what a use teaches, so a substitution that usage evidence
	//     carried past a weak match does not become evidence for the next
	//     (paying a bill run as a currency conversion, then paying a
	//     plumber).
	if pick >= 0 && workflow.GetVersion(f.ctx, "substitute-teaches-default", workflow.DefaultVersion, 1) >= 1 {
		if sim := search.Candidates[pick].Similarity; sim < retrieval.ReportFloor {
			f.untaught = fmt.Sprintf("the verb is little like the tool (similarity %.3f < %.2f), so this use teaches no search", sim, retrieval.ReportFloor)
		} else if f.ownRule {
			if def, _ := f.decide(retrieval.DefaultSubstituteRule(), model, search.Candidates, cands); def != pick {
				f.untaught = "the default rule would not have substituted it, so this use teaches no search"
			}
		}
	}
	// From version "substitute-teaches-confident" 1 on, a substitution
	// teaches the verb's text only when the default rule with the higher
	// bar retrieval.TeachConfidence picks it too: the service does not
	// learn from its own unsure choices, which would feed a wrong
	// substitution back into the next decision.
	if pick >= 0 && f.untaught == "" && workflow.GetVersion(f.ctx, "substitute-teaches-confident", workflow.DefaultVersion, 1) >= 1 {
		sure := retrieval.SubstituteRule{Confidence: retrieval.TeachConfidence}
		if def, _ := f.decide(sure, model, search.Candidates, cands); def != pick {
			f.untaught = fmt.Sprintf("the decision is not sure enough (below %.2f) to learn from its own choice, so this use teaches no search", retrieval.TeachConfidence)
		}
	}
	// From version "guest-teaches-nothing" 1 on, the reason says so when
	// the caller may not teach the shared learned data (a guest key, an
	// anonymous caller; access.MayTeach): the run's use is recorded
	// without the verb's text (retrieval.Service.RecordUsage), whatever
	// the rule.
	if pick >= 0 && f.untaught == "" && !access.MayTeach(f.caller.Level) &&
		workflow.GetVersion(f.ctx, "guest-teaches-nothing", workflow.DefaultVersion, 1) >= 1 {
		f.untaught = "a guest's use teaches no search"
	}
	if pick >= 0 {
		// A verb asked without inputs whose match has required parameters
		// could only fail on them: the match is named, with what it needs,
		// and nothing runs (from version "needs-inputs" 1 on; earlier runs
		// replay their substitution). A plan's step (a child run) keeps
		// failing on them: its inputs are the plan's, not a planner's to add.
		best := search.Candidates[pick]
		if len(in.Inputs) == 0 && len(in.Options.Chain) == 0 && len(retrieval.MissingInputs(best.Required, nil)) > 0 &&
			workflow.GetVersion(f.ctx, "needs-inputs", workflow.DefaultVersion, 1) >= 1 {
			return f.needsInputs(best, why)
		}
		return f.substitute(best, why)
	}
	return f.decompose(search.Candidates, why)
}

// decide applies rule (the run's) to the candidates (cands, read from all)
// and returns the index of the one to substitute (-1 for none) and why.
// A first candidate that could not run (the inputs do not fill it, or this
// deployment cannot run it) gives way to the first that could, read as if
// it ranked first (retrieval.SubstituteRule.ChooseWith), from version
// "decision-runnable-first" 1 on; earlier runs replay refusing it. The
// version is asked only of such searches, so other runs' histories do not
// change.
func (f *fulfilment) decide(rule retrieval.SubstituteRule, model retrieval.DecisionModel, all []activities.Candidate, cands []retrieval.Candidate) (int, string) {
	if len(cands) == 0 || (cands[0].InputFit >= 0 && !cands[0].Unavailable) ||
		workflow.GetVersion(f.ctx, "decision-runnable-first", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		ok, why := rule.DecideWith(model, cands)
		if !ok {
			return -1, why
		}
		return 0, why
	}
	ch := rule.ChooseWith(model, cands)
	if ch.Read <= 0 {
		return ch.Pick, ch.Why
	}
	first, read := all[0], all[ch.Read]
	if ch.Pick >= 0 {
		return ch.Pick, fmt.Sprintf("%s; it is the first candidate that can run, %s ranks first but could not: %s", ch.Why, first.ToolID, ch.Skipped)
	}
	// decompose names the first before this reason.
	return -1, fmt.Sprintf("%s; the first candidate that could run, %s (score %.3f): %s", ch.Skipped, read.ToolID, read.Score, ch.Why)
}

// requiredParams are a candidate's required parameters with the JSON types
// its schema gives them, as the inputs' fit reads them.
func requiredParams(c activities.Candidate) []retrieval.Param {
	out := make([]retrieval.Param, len(c.Required))
	for i, name := range c.Required {
		out[i] = retrieval.Param{Name: name, Types: c.RequiredTypes[name]}
	}
	return out
}

// needsInputs ends the run with the confident match named and the required
// inputs it lacks; no tool runs, so no use is recorded.
func (f *fulfilment) needsInputs(best activities.Candidate, why string) (NovelVerbResult, error) {
	f.res.Tool = best.ToolID
	f.res.MissingInputs = retrieval.MissingInputs(best.Required, sortedKeys(f.in.Inputs))
	f.res.Reason = fmt.Sprintf("%s matches %s (%s): %s; it needs the inputs %s, which the verb did not bring: ask again with them, or execute %s",
		f.in.Verb, best.ToolID, best.Verb, why, strings.Join(f.res.MissingInputs, ", "), best.ToolID)
	f.stage(BranchNeedsInputs, SABranch.ValueSet(BranchNeedsInputs), SAToolID.ValueSet(best.ToolID))
	return f.res, nil
}

// Who decided a substitution (Judgement.DecidedBy).
const (
	DecidedByRule  = "rule"
	DecidedByModel = "model"
)

// The model's verdicts on the rule's decision (Judgement.Verdict).
const (
	VerdictConfirm = "confirm" // the model picked the rule's pick
	VerdictVeto    = "veto"    // the rule would substitute; the model said none fits
	VerdictPick    = "pick"    // the model picked another candidate than the rule (or one where the rule picked none)
	VerdictNone    = "none"    // neither the rule nor the model found a fit
)

// Judgement records how a run's substitution was decided: by the rule
// alone, or by the configured model judging the top candidates.
type Judgement struct {
	// DecidedBy is DecidedByRule or DecidedByModel.
	DecidedBy string `json:"decidedBy"`
	// RulePick is the tool the rule would substitute ("" for none).
	RulePick string `json:"rulePick,omitempty"`
	// Offered are the candidates the model was offered, best first.
	Offered []string `json:"offered,omitempty"`
	// ModelPick is the model's answer (a tool of Offered, or llm.JudgeNone)
	// and Verdict what it made of the rule's decision; both are empty when
	// the rule decided.
	ModelPick string `json:"modelPick,omitempty"`
	Verdict   string `json:"verdict,omitempty"`
	// Reason is the model's reason, or why the rule decided alone (no
	// model configured, the call failed or timed out, the answer was
	// invalid).
	Reason string `json:"reason,omitempty"`
}

// DefaultJudgeTimeout bounds each attempt of the model's judgement.
const DefaultJudgeTimeout = 20 * time.Second

// judgeOptions bound the judge: a short call (it stands between the search
// and the substitution) tried twice, after which the rule decides. It is a
// local activity: without a model it answers at once, so the substitute
// branch pays no schedule/poll round trip for asking, and its result is
// still recorded in history as a marker.
func judgeOptions(attempt time.Duration) workflow.LocalActivityOptions {
	if attempt <= 0 {
		attempt = DefaultJudgeTimeout
	}
	const attempts, backoff = 2, time.Second
	return workflow.LocalActivityOptions{
		StartToCloseTimeout:    attempt,
		ScheduleToCloseTimeout: attempts*attempt + backoff,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: backoff, BackoffCoefficient: 2, MaximumAttempts: attempts},
	}
}

// judge asks the configured model which of the top runnable candidates, if
// any, can run in the verb's place, and returns the index (into cands) to
// substitute, -1 for none, and the reason. rulePick is the rule's decision
// (0 or -1) and why its reason: they stand whenever no model is configured
// or it fails, times out, or answers badly. The model is asked whatever the
// rule decided, because with a model configured either error costs more
// than the call: a wrong substitution runs the wrong tool (the veto guards
// it), and a missed one costs a decomposition, itself a longer model call
// and a multi-step plan (a pick among the top candidates saves it). It is
// offered only the first MaxJudgeCandidates candidates the verb's inputs
// can fill; the search returned only tools the caller may use, and the
// execution checks access again, so its pick can never widen what runs.
func (f *fulfilment) judge(all []activities.Candidate, cands []retrieval.Candidate, rulePick int, why string) (int, string) {
	j := &Judgement{DecidedBy: DecidedByRule}
	f.res.Judge = j
	if rulePick >= 0 {
		j.RulePick = all[rulePick].ToolID
	}
	req := activities.JudgeInput{Verb: f.in.Verb, Description: f.in.Description, Context: f.in.Context, InputNames: sortedKeys(f.in.Inputs)}
	var idx []int
	for i, c := range all {
		if len(idx) == llm.MaxJudgeCandidates {
			break
		}
		if cands[i].InputFit < 0 || cands[i].Unavailable {
			continue
		}
		idx = append(idx, i)
		j.Offered = append(j.Offered, c.ToolID)
		req.Candidates = append(req.Candidates, llm.JudgeCandidate{ToolID: c.ToolID, Verb: c.Verb, Description: c.Description, Required: c.Required})
	}
	if len(idx) == 0 {
		j.Reason = "no candidate the inputs can fill to judge"
		return rulePick, why
	}
	var l *activities.LLM
	var ans llm.Judgement
	jctx := workflow.WithLocalActivityOptions(f.ctx, judgeOptions(f.in.Options.JudgeTimeout))
	if err := workflow.ExecuteLocalActivity(jctx, l.JudgeSubstitution, req).Get(f.ctx, &ans); err != nil {
		j.Reason = "the rule decided: " + judgeFailure(err)
		return rulePick, why
	}
	// The activity validated the answer; validating again here is pure and
	// guards against an answer recorded by an older activity version.
	pick := -1
	if ans.Tool != llm.JudgeNone {
		pick = slices.IndexFunc(idx, func(i int) bool { return all[i].ToolID == ans.Tool })
		if pick < 0 {
			j.Reason = fmt.Sprintf("the rule decided: the model named %q, which it was not offered", ans.Tool)
			return rulePick, why
		}
		pick = idx[pick]
	}
	j.DecidedBy, j.ModelPick, j.Reason = DecidedByModel, ans.Tool, ans.Reason
	switch {
	case pick >= 0 && pick == rulePick:
		j.Verdict = VerdictConfirm
		return pick, fmt.Sprintf("%s; the model confirmed: %s", why, ans.Reason)
	case pick >= 0:
		j.Verdict = VerdictPick
		return pick, fmt.Sprintf("the model picked it (the rule: %s): %s", why, ans.Reason)
	case rulePick >= 0:
		j.Verdict = VerdictVeto
		return -1, fmt.Sprintf("the model vetoed %s (the rule: %s): %s", all[rulePick].ToolID, why, ans.Reason)
	default:
		j.Verdict = VerdictNone
		return -1, fmt.Sprintf("%s; the model agreed none fits: %s", why, ans.Reason)
	}
}

// judgeFailure says why the model did not judge.
func judgeFailure(err error) string {
	switch t := typeOr(err, ""); t {
	case activities.ErrTypeLLMUnavailable:
		return "no language model is configured"
	case activities.ErrTypeInvalidJudgement:
		return "the model's answer was invalid: " + activities.Message(err)
	case activities.ErrTypeModuleTimeout:
		return "the model did not answer in time"
	default:
		return "the model failed: " + activities.Message(err)
	}
}

// Rule is the options' substitution rule.
func (o NovelVerbOptions) Rule() retrieval.SubstituteRule {
	return retrieval.SubstituteRule{Confidence: o.Confidence, Threshold: o.Threshold, Margin: o.Margin, ScoreMargin: o.ScoreMargin, EvidenceMargin: o.EvidenceMargin}
}

// SetRule sets the options' substitution rule.
func (o *NovelVerbOptions) SetRule(r retrieval.SubstituteRule) {
	o.Confidence, o.Threshold, o.Margin, o.ScoreMargin, o.EvidenceMargin = r.Confidence, r.Threshold, r.Margin, r.ScoreMargin, r.EvidenceMargin
}

// substitute executes the best match with the original inputs.
func (f *fulfilment) substitute(best activities.Candidate, why string) (NovelVerbResult, error) {
	query := activities.VerbQuery(f.in.Verb, f.in.Description)
	if f.untaught != "" {
		query = ""
		why += "; " + f.untaught
	}
	f.res.Reason = fmt.Sprintf("%s matches %s (%s): %s", f.in.Verb, best.ToolID, best.Verb, why)
	f.stage(BranchSubstitute, SABranch.ValueSet(BranchSubstitute), SAToolID.ValueSet(best.ToolID))
	out, err := f.execute(best.ToolID, f.in.Inputs, query)
	if err != nil {
		return f.fail(typeOr(err, activities.ErrTypeToolFailed), "substitute %s for %s: %s", best.ToolID, f.in.Verb, activities.Message(err))
	}
	f.res.Arguments, f.res.Renamed, f.res.Output = out.Arguments, out.Renamed, out.Output
	return f.res, nil
}

// execute runs one tool for query (the verb it serves, which its usage
// records) and applies its state transition. The tools this run executed
// before it (a plan's earlier steps, its children's) are paired with it
// when it succeeds.
func (f *fulfilment) execute(toolID string, inputs map[string]any, query string) (activities.ExecuteOutput, error) {
	var m *activities.Modules
	var out activities.ExecuteOutput
	ectx := workflow.WithActivityOptions(f.ctx, executeOptions)
	err := workflow.ExecuteActivity(ectx, m.ExecuteTool, activities.ExecuteInput{
		ToolID: toolID, Inputs: inputs, Caller: f.caller, DryRun: f.in.Options.DryRun,
		Query: query, PairWith: slices.Clone(f.res.Tools), Attempts: executeOptions.RetryPolicy.MaximumAttempts,
	}).Get(f.ctx, &out)
	if err != nil {
		return out, err
	}
	f.res.Tools = append(f.res.Tools, toolID)
	f.progress.Tools = f.res.Tools
	if out.State != "" {
		f.caller.State = out.State
		f.res.State = out.State
	}
	return out, nil
}

// decompose asks the LLM for a plan and runs it.
func (f *fulfilment) decompose(cands []activities.Candidate, why string) (NovelVerbResult, error) {
	in := f.in
	if len(cands) > 0 {
		why = fmt.Sprintf("best %s (score %.3f): %s", cands[0].ToolID, cands[0].Score, why)
	}
	f.res.Reason = fmt.Sprintf("no tool is a confident match (%s); decomposing", why)
	f.stage(BranchDecompose, SABranch.ValueSet(BranchDecompose))

	// Known verbs: the visible candidates, one tool per verb (best first).
	known := map[string]string{}
	var verbs []llm.KnownVerb
	for _, c := range cands {
		if c.Verb == "" || c.Verb == in.Verb || known[c.Verb] != "" {
			continue
		}
		known[c.Verb] = c.ToolID
		verbs = append(verbs, llm.KnownVerb{Verb: c.Verb, ToolID: c.ToolID, Description: c.Description, Inputs: append(slices.Clone(c.Required), c.Optional...)})
	}

	var l *activities.LLM
	var plan llm.Plan
	dctx := workflow.WithActivityOptions(f.ctx, decomposeOptions)
	err := workflow.ExecuteActivity(dctx, l.DecomposeVerb, activities.DecomposeInput{
		Verb: in.Verb, Description: in.Description, Inputs: in.Inputs, Context: in.Context, KnownVerbs: verbs,
	}).Get(f.ctx, &plan)
	if err != nil {
		if typeOr(err, "") == activities.ErrTypeLLMUnavailable {
			// No planner: an external definition may still fulfil the verb.
			// Only when none does does the run end with the planner's reason.
			if res, found, ferr := f.airlock(activities.Message(err)); found {
				return res, ferr
			}
			// Nothing fulfilled the verb: it is a gap even though the run
			// fails for want of a planner (runs recorded before gaps were
			// kept here replay without it).
			if workflow.GetVersion(f.ctx, "gap-without-planner", workflow.DefaultVersion, 1) == 1 {
				// The gap keeps the reason it stays open: nothing can build
				// a tool for it either.
				if out, gerr := f.recordGap(ReasonNeedsModel+": "+activities.Message(err), cands); gerr == nil {
					f.res.GapRecorded = out.Where
				}
			}
			return f.fail(activities.ErrTypeLLMUnavailable, "decompose %s: %s; the gap stays open (%s)", in.Verb, activities.Message(err), ReasonNeedsModel)
		}
		return f.fail(typeOr(err, activities.ErrTypeInvalidPlan), "decompose %s: %s", in.Verb, activities.Message(err))
	}
	// The activity validated the plan; validating again here is pure and
	// guards against a plan recorded by an older activity version.
	if err := llm.ValidatePlan(plan, sortedKeys(in.Inputs)); err != nil {
		return f.fail(activities.ErrTypeInvalidPlan, "decompose %s: %s", in.Verb, activities.Message(err))
	}
	f.res.Plan = planOf(plan)
	if len(plan.Steps) == 0 {
		return f.findOrBuild(fmt.Sprintf("the planner could not decompose %s: %s", in.Verb, plan.Reason), cands)
	}
	f.progress.StepsTotal = len(plan.Steps)
	if in.Options.DryRun {
		for _, s := range plan.Steps {
			kind := StepNovel
			if known[s.Verb] != "" {
				kind = StepTool
			}
			f.res.Steps = append(f.res.Steps, StepResult{ID: s.ID, Verb: s.Verb, Kind: kind, ToolID: known[s.Verb], Inputs: s.Inputs})
		}
		f.res.Reason += "; dry run: plan not executed"
		return f.res, nil
	}

	outputs := map[string]any{}
	for i, s := range plan.Steps {
		f.progress.CurrentStep = s.ID
		args, err := llm.Resolve(s.Inputs, in.Inputs, outputs)
		if err != nil {
			return f.fail(activities.ErrTypeInvalidPlan, "step %s (%s): %s", s.ID, s.Verb, activities.Message(err))
		}
		sr := StepResult{ID: s.ID, Verb: s.Verb, Inputs: args}
		if toolID := known[s.Verb]; toolID != "" {
			sr.Kind, sr.ToolID = StepTool, toolID
			_ = workflow.UpsertTypedSearchAttributes(f.ctx, SAToolID.ValueSet(toolID)) // best-effort visibility
			// The step's tool served the step's verb, not the whole plan's.
			out, err := f.execute(toolID, args, activities.VerbQuery(s.Verb, s.Description))
			if err != nil {
				sr.Error, sr.ErrorType = activities.Message(err), activities.ErrorType(err)
				f.res.Steps = append(f.res.Steps, sr)
				return f.fail(typeOr(err, activities.ErrTypeStepFailed), "step %s (%s) via %s: %s", s.ID, s.Verb, toolID, activities.Message(err))
			}
			sr.Output, sr.State = out.Output, out.State
		} else {
			child, err := f.child(s, args, &sr)
			if err != nil {
				f.res.Steps = append(f.res.Steps, sr)
				return f.fail(typeOr(err, activities.ErrTypeStepFailed), "step %s (%s): %s", s.ID, s.Verb, activities.Message(err))
			}
			if child.Branch == BranchNoCapability {
				f.res.Steps = append(f.res.Steps, sr)
				f.res.Branch, f.res.GapRecorded = BranchNoCapability, child.GapRecorded
				f.res.Reason = fmt.Sprintf("step %s (%s) has no capability: %s", s.ID, s.Verb, child.Reason)
				f.stage(BranchNoCapability, SABranch.ValueSet(BranchNoCapability))
				return f.res, nil
			}
			sr.Output, sr.State = child.Output, child.State
		}
		outputs[s.ID] = sr.Output
		f.res.Steps = append(f.res.Steps, sr)
		f.res.Output = sr.Output
		f.progress.StepsDone = i + 1
	}
	f.progress.CurrentStep = ""
	f.res.Reason = fmt.Sprintf("decomposed %s into %d steps", in.Verb, len(plan.Steps))
	return f.res, nil
}

// child fulfils a novel step as a child NovelVerbWorkflow, after the depth
// limit and the cycle guard.
func (f *fulfilment) child(s llm.Step, args map[string]any, sr *StepResult) (NovelVerbResult, error) {
	sr.Kind = StepNovel
	chain := append(slices.Clone(f.in.Options.Chain), f.in.Verb)
	if slices.Contains(chain, s.Verb) {
		err := activities.Fail(activities.ErrTypeCycle, "verb cycle: %s would fulfil itself (chain %v)", s.Verb, chain)
		sr.Error, sr.ErrorType = activities.Message(err), activities.ErrTypeCycle
		return NovelVerbResult{}, err
	}
	if len(chain) > f.in.Options.MaxDepth {
		err := activities.Fail(activities.ErrTypeDepthLimit, "novel step %s would nest at depth %d; max depth is %d", s.Verb, len(chain), f.in.Options.MaxDepth)
		sr.Error, sr.ErrorType = activities.Message(err), activities.ErrTypeDepthLimit
		return NovelVerbResult{}, err
	}
	id := workflow.GetInfo(f.ctx).WorkflowExecution.ID + "/" + s.ID
	sr.ChildID = id
	cctx := workflow.WithChildOptions(f.ctx, workflow.ChildWorkflowOptions{WorkflowID: id})
	opts := f.in.Options
	opts.Chain = chain
	var out NovelVerbResult
	err := workflow.ExecuteChildWorkflow(cctx, NovelVerbWorkflow, NovelVerbInput{
		Verb: s.Verb, Description: s.Description, Inputs: args, Context: f.in.Context, Caller: Caller(f.caller), Options: opts,
	}).Get(f.ctx, &out)
	if err != nil {
		sr.Error, sr.ErrorType = activities.Message(err), activities.ErrorType(err)
		return out, err
	}
	sr.ChildBranch = out.Branch
	f.res.Tools = append(f.res.Tools, out.Tools...)
	f.progress.Tools = f.res.Tools
	if out.State != "" {
		f.caller.State = out.State
		f.res.State = out.State
	}
	return out, nil
}

// findOrBuild records the gap and ends cleanly with no_capability. The
// airlock issue replaces this with a search of un-onboarded definitions.
func (f *fulfilment) findOrBuild(reason string, cands []activities.Candidate) (NovelVerbResult, error) {
	if res, found, err := f.airlock(reason); found {
		return res, err
	}
	f.stage(BranchFindOrBuild, SABranch.ValueSet(BranchFindOrBuild))
	out, err := f.recordGap(reason, cands)
	if err != nil {
		return f.fail(typeOr(err, activities.ErrTypeStepFailed), "record gap for %s: %s", f.in.Verb, activities.Message(err))
	}
	f.res.GapRecorded = out.Where
	f.res.Reason = reason
	f.res.Branch = BranchNoCapability
	f.stage(BranchNoCapability, SABranch.ValueSet(BranchNoCapability))
	// A model is configured (it planned, and found no plan): it may build
	// the tool. Runs recorded before builds replay without one.
	if workflow.GetVersion(f.ctx, "find-or-build-build", workflow.DefaultVersion, 1) >= 1 && !f.in.Options.DryRun {
		f.startBuild(cands)
	}
	return f.res, nil
}

// BuildRef records the build a run started for its gap.
type BuildRef struct {
	WorkflowID string `json:"workflowId"`
	// Started is false when a build for the verb is under way or already
	// ran (Reason says so and how to build again).
	Started bool   `json:"started"`
	Reason  string `json:"reason,omitempty"`
}

// startBuild starts BuildToolWorkflow for the run's gap, abandoned to run
// on its own (its review may take days), and waits only for it to start.
func (f *fulfilment) startBuild(cands []activities.Candidate) {
	id := BuildWorkflowID(f.in.Verb)
	ref := &BuildRef{WorkflowID: id}
	f.res.Build = ref
	closest := make([]string, 0, len(cands))
	for _, c := range cands[:min(len(cands), activities.MaxGapClosest)] {
		closest = append(closest, c.ToolID)
	}
	// One automatic build per verb: a verb whose build was rejected or
	// failed is not built again by every later ask (each costs tokens); a
	// reviewer asks again on demand (POST /api/v1/gaps/:verb/build).
	cctx := workflow.WithChildOptions(f.ctx, workflow.ChildWorkflowOptions{
		WorkflowID: id, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	})
	child := workflow.ExecuteChildWorkflow(cctx, BuildToolWorkflow, BuildInput{
		Verb: f.in.Verb, Description: f.in.Description, Inputs: f.in.Inputs, Closest: closest,
		RequestedBy: workflow.GetInfo(f.ctx).WorkflowExecution.ID,
	})
	if err := child.GetChildWorkflowExecution().Get(f.ctx, nil); err != nil {
		// Said in words: the SDK's message names event IDs and run IDs.
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			ref.Reason = fmt.Sprintf("a build for %s is already running or already ran (status: GET /api/v1/builds/%s; build again with POST /api/v1/gaps/%s/build)",
				f.in.Verb, id, f.in.Verb)
		} else {
			ref.Reason = fmt.Sprintf("the build for %s could not start: %s", f.in.Verb, activities.Message(err))
		}
		f.res.Reason += "; " + ref.Reason
		return
	}
	ref.Started = true
	f.res.Reason += fmt.Sprintf("; a model is building a tool for it (review it as %s)", id)
}

// recordGap records that nothing fulfilled the verb, with the closest
// candidates the search found.
func (f *fulfilment) recordGap(reason string, cands []activities.Candidate) (activities.GapOutput, error) {
	gap := activities.Gap{Verb: f.in.Verb, Description: f.in.Description, Context: f.in.Context, UserID: f.caller.UserID, Reason: reason}
	if len(cands) > 0 {
		gap.BestToolID, gap.BestScore = cands[0].ToolID, cands[0].Similarity
	}
	for _, c := range cands[:min(len(cands), activities.MaxGapClosest)] {
		gap.Closest = append(gap.Closest, activities.GapCandidate{ToolID: c.ToolID, Score: c.Similarity})
	}
	var g *activities.Graph
	var out activities.GapOutput
	gctx := workflow.WithActivityOptions(f.ctx, gapOptions)
	err := workflow.ExecuteActivity(gctx, g.RecordCapabilityGap, gap).Get(f.ctx, &out)
	return out, err
}

// airlock is find-or-build's search of external definitions: when an
// un-onboarded operation is similar enough, it joins (or opens) the review
// of its spec and waits, bounded, for the outcome. An onboarded spec is
// then searched again and substituted like any tool.
// found is false when no definition is similar enough.
func (f *fulfilment) airlock(why string) (NovelVerbResult, bool, error) {
	// Runs recorded before find-or-build searched external definitions
	// replay without it.
	if workflow.GetVersion(f.ctx, "find-or-build-airlock", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return NovelVerbResult{}, false, nil
	}
	var a *activities.Airlock
	actx := workflow.WithActivityOptions(f.ctx, gapOptions)
	var matches []activities.DefinitionMatch
	query := f.res.Query
	if query == "" {
		query = f.in.Verb + " " + f.in.Description
	}
	if err := workflow.ExecuteActivity(actx, a.FindDefinitions, activities.FindDefinitionsInput{Query: query, Limit: 3}).Get(f.ctx, &matches); err != nil {
		res, ferr := f.fail(typeOr(err, activities.ErrTypeStepFailed), "find external definitions for %s: %s", f.in.Verb, activities.Message(err))
		return res, true, ferr
	}
	bar := f.in.Options.Threshold
	if bar <= 0 {
		// A rule without a similarity bar (the decision model's): an
		// external definition still needs a close match.
		bar = retrieval.DefaultSubstituteThreshold
	}
	if len(matches) == 0 || matches[0].Score < bar {
		return NovelVerbResult{}, false, nil
	}
	best := matches[0]
	f.stage(BranchFindOrBuild, SABranch.ValueSet(BranchFindOrBuild))
	var reviewID string
	join := activities.JoinReviewInput{
		OpenReviewInput: activities.OpenReviewInput{SpecHash: best.SpecHash, Location: best.Location},
		Subscriber:      workflow.GetInfo(f.ctx).WorkflowExecution.ID,
	}
	if err := workflow.ExecuteActivity(actx, a.JoinReview, join).Get(f.ctx, &reviewID); err != nil {
		res, ferr := f.fail(typeOr(err, activities.ErrTypeStepFailed), "join the review of %s: %s", best.API, activities.Message(err))
		return res, true, ferr
	}
	ref := &AirlockRef{ReviewID: reviewID, SpecHash: best.SpecHash, API: best.API, Definition: best.Name, Score: best.Score, Status: AirlockPending}
	f.res.Airlock = ref
	f.res.Reason = fmt.Sprintf("%s; the external operation %s of %s matches with similarity %.3f, so its spec awaits review as %s",
		why, best.Name, best.API, best.Score, reviewID)

	wait := f.in.Options.AirlockWait
	if wait <= 0 {
		wait = DefaultAirlockWait
	}
	var outcome AirlockOutcome
	got := false
	tctx, cancel := workflow.WithCancel(f.ctx)
	sel := workflow.NewSelector(f.ctx)
	sel.AddReceive(workflow.GetSignalChannel(f.ctx, SignalAirlockOutcome), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(f.ctx, &outcome)
		got = true
	})
	sel.AddFuture(workflow.NewTimer(tctx, wait), func(workflow.Future) {})
	sel.Select(f.ctx)
	cancel()
	if !got {
		f.res.Reason += fmt.Sprintf("; no decision within %s (approve it at /api/v1/tools/pending/%s)", wait, reviewID)
		return f.res, true, nil
	}
	ref.Status, ref.ToolIDs = outcome.Status, outcome.ToolIDs
	if outcome.Status != AirlockOnboarded {
		f.res.Reason += fmt.Sprintf("; the review ended %s: %s", outcome.Status, outcome.Reason)
		return f.res, true, nil
	}
	// Onboarded: search again, now that the new tools are in the graph.
	var g *activities.Graph
	var search activities.SearchOutput
	sctx := workflow.WithLocalActivityOptions(f.ctx, searchOptions)
	err := workflow.ExecuteLocalActivity(sctx, g.SearchTools, activities.SearchInput{
		Verb: f.in.Verb, Description: f.in.Description, Context: f.in.Context, Caller: f.caller, Limit: f.in.Options.SearchLimit,
	}).Get(f.ctx, &search)
	if err != nil {
		res, ferr := f.fail(typeOr(err, activities.ErrTypeStepFailed), "search again for %s: %s", f.in.Verb, activities.Message(err))
		return res, true, ferr
	}
	for _, c := range search.Candidates {
		if slices.Contains(outcome.ToolIDs, c.ToolID) {
			res, err := f.substitute(c, fmt.Sprintf("onboarded for this verb by review %s", reviewID))
			return res, true, err
		}
	}
	f.res.Reason += "; the review onboarded " + fmt.Sprint(outcome.ToolIDs) + ", but none is visible to this caller"
	return f.res, true, nil
}

// stage records the current stage in the result, the progress and the
// search attributes. Upsert failures are ignored: visibility is best effort
// and must never fail a fulfilment.
func (f *fulfilment) stage(branch string, updates ...temporal.SearchAttributeUpdate) {
	if branch != BranchSearch {
		f.res.Branch = branch
	}
	f.progress.Stage = branch
	if len(updates) > 0 {
		_ = workflow.UpsertTypedSearchAttributes(f.ctx, updates...)
	}
}

// fail ends the run with a non-retryable error of errType whose details are
// the partial result.
func (f *fulfilment) fail(errType string, format string, args ...any) (NovelVerbResult, error) {
	msg := fmt.Sprintf(format, args...)
	f.res.Error, f.res.ErrorType = msg, errType
	return f.res, activities.FailWithDetails(errType, f.res, "%s", msg)
}

// typeOr returns err's application error type, or def when it has none
// (e.g. an activity timeout).
func typeOr(err error, def string) string {
	if t := activities.ErrorType(err); t != "" {
		return t
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return activities.ErrTypeModuleTimeout
	}
	return def
}

func validVerb(v string) bool {
	for i, r := range v {
		switch {
		case r >= 'A' && r <= 'Z':
		case (r >= '0' && r <= '9') || r == '_':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return len(v) > 0 && len(v) <= 100
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
