package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/tool"
)

// ToolSource returns a tool with its manifest; graph.Store satisfies it.
type ToolSource interface {
	GetTool(ctx context.Context, id string) (graph.Tool, error)
}

// UsageRecorder records tool usage. retrieval.Service satisfies it and
// learns from each event as from a planner's (query embedding, session
// pairings, the query log); graph.Store satisfies it by storing the event
// only.
type UsageRecorder interface {
	RecordUsage(ctx context.Context, events []graph.UsageEvent) error
}

// PairLearner strengthens learned pairings; graph.Pairings (both stores)
// satisfies it.
type PairLearner interface {
	LearnPairs(ctx context.Context, evidence []graph.PairEvidence) error
}

// WrappedRunner runs tools onboarded through the airlock (generated
// wrappers) under their approval's policies; airlock.Runtime satisfies it.
type WrappedRunner interface {
	RunWrapped(ctx context.Context, toolID string, args map[string]any, caller access.Caller) (kit.Result, error)
}

// Modules holds the activities that run tools and discover modules.
type Modules struct {
	Router *modules.Router
	// Wrapped runs tools whose manifest's source origin is "openapi"
	// (onboarded wrappers) or OriginBuilt (tools built from scratch).
	Wrapped WrappedRunner
	// Schemas supplies each tool's manifest (schemas, module, state).
	Schemas ToolSource
	// Usage, when set, receives a usage event per execution (best effort).
	Usage UsageRecorder
	// Pairs, when set, learns that a plan's tools were used together
	// (ExecuteInput.PairWith; best effort).
	Pairs PairLearner
}

// ExecuteInput asks to execute one tool.
type ExecuteInput struct {
	ToolID string         `json:"toolId"`
	Inputs map[string]any `json:"inputs"`
	Caller access.Caller  `json:"caller"`
	// Query is the verb text the tool serves (for usage history).
	Query string `json:"query,omitempty"`
	// PairWith are the tools that ran successfully earlier in the same plan
	// (a decomposition): a success pairs this tool with each of them, as
	// tools used together in one session are paired.
	PairWith []string `json:"pairWith,omitempty"`
	// DryRun maps and validates the inputs but does not call the module.
	DryRun bool `json:"dryRun,omitempty"`
	// Attempts is how many attempts the caller's retry policy allows, so
	// an attempt knows whether it is the last (and records the call's
	// use); the activity's own info, when the server sends the policy,
	// wins. 0 with no policy known counts every attempt as the last.
	Attempts int32 `json:"attempts,omitempty"`
}

// ExecuteOutput is a successful execution.
type ExecuteOutput struct {
	ToolID    string            `json:"toolId"`
	Module    string            `json:"module,omitempty"`
	Arguments map[string]any    `json:"arguments"`
	Renamed   map[string]string `json:"renamed,omitempty"`
	Unused    []string          `json:"unused,omitempty"`
	// Output is the tool's result (decoded JSON); nil on a dry run.
	Output any  `json:"output,omitempty"`
	DryRun bool `json:"dryRun,omitempty"`
	// State is the state the caller moves to: the tool's state
	// when it has one and ran successfully, else the caller's state.
	State      string `json:"state"`
	DurationMs int64  `json:"durationMs"`
	// IdempotencyKey is the key the module saw.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// IdempotencyKey returns the key of the current activity: workflow ID and
// activity ID, both stable across retries and worker restarts.
func IdempotencyKey(ctx context.Context) string {
	info := activity.GetInfo(ctx)
	return info.WorkflowExecution.ID + "/" + info.ActivityID
}

// ExecuteTool maps the inputs to the tool's inputSchema, validates them and
// posts the call to the tool's module with the activity's idempotency key.
// Schema mismatches, unknown or hidden tools and tool failures are
// non-retryable; timeouts, network errors and 5xx are retryable.
func (m *Modules) ExecuteTool(ctx context.Context, in ExecuteInput) (ExecuteOutput, error) {
	defer keepAlive(ctx)()
	var use usage
	out, err := m.executeTool(ctx, in, &use)
	// A call records one use, its final outcome: an attempt Temporal will
	// retry records nothing, or one call would count as several failures.
	if use.ran && finalAttempt(ctx, err, in.Attempts) {
		m.recordUsage(ctx, in, use.ok, use.ms)
	}
	if activity.IsActivity(ctx) && !in.DryRun {
		outcome := "success"
		if err != nil {
			outcome = ErrorType(err)
			if outcome == "" {
				outcome = "error"
			}
		}
		activity.GetMetricsHandler(ctx).WithTags(map[string]string{"outcome": outcome}).Counter(MetricToolExecutions).Inc(1)
	}
	return out, err
}

// MetricToolExecutions counts tool executions by outcome ("success" or
// the error type), through the activity's metrics handler. It carries no
// tool label: /metrics is read by operators (and scrapers' keys) who may
// not execute every tool, and one label value per catalogue tool would
// grow with the catalogue; the analytics report per tool, trimmed to what
// each reader may execute.
const MetricToolExecutions = "toolsmith_tool_executions"

// usage is what an attempt that reached the tool reports for its use.
type usage struct {
	ran bool // the tool was called (a refusal before the call is no use)
	ok  bool
	ms  int64
}

func (u *usage) set(ok bool, ms int64) { u.ran, u.ok, u.ms = true, ok, ms }

// finalAttempt reports whether err ends the call: a success, an error
// Temporal does not retry (non-retryable, or the retry policy's last
// attempt), or a call outside an activity. attempts is the policy's bound
// when the activity's info carries none; a policy without a bound cannot
// tell the last attempt, so every attempt counts.
func finalAttempt(ctx context.Context, err error, attempts int32) bool {
	if err == nil || !activity.IsActivity(ctx) {
		return true
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.NonRetryable() {
		return true
	}
	info := activity.GetInfo(ctx)
	if p := info.RetryPolicy; p != nil {
		attempts = p.MaximumAttempts
	}
	return attempts <= 0 || info.Attempt >= attempts
}

func (m *Modules) executeTool(ctx context.Context, in ExecuteInput, use *usage) (ExecuteOutput, error) {
	if m.Router == nil || m.Schemas == nil {
		return ExecuteOutput{}, Fail(ErrTypeNotExecutable, "activities: no module router configured")
	}
	t, err := m.Schemas.GetTool(ctx, in.ToolID)
	if isNotFound(err) {
		return ExecuteOutput{}, Fail(ErrTypeToolNotFound, "tool %q not found", in.ToolID)
	}
	if err != nil {
		return ExecuteOutput{}, fmt.Errorf("activities: execute %s: get tool: %w", in.ToolID, err)
	}
	if t.Status != "" && t.Status != graph.StatusActive {
		return ExecuteOutput{}, Fail(ErrTypeToolNotFound, "tool %q is %s", in.ToolID, t.Status)
	}
	if why := in.Caller.Reason(&t.ToolSummary); why != "" {
		return ExecuteOutput{}, Fail(ErrTypeForbidden, "tool %q is not available to this caller (%s)", in.ToolID, why)
	}
	var man tool.Manifest
	if err := json.Unmarshal(t.Manifest, &man); err != nil {
		return ExecuteOutput{}, Fail(ErrTypeNotExecutable, "tool %q has an unreadable manifest: %v", in.ToolID, err)
	}
	mapping, err := modules.FitInputs(man.InputSchema, in.Inputs, m.Router.ValidateArguments)
	if err != nil {
		return ExecuteOutput{}, benign(ErrTypeSchemaMismatch, "inputs do not fit %s: %v", in.ToolID, err)
	}
	out := ExecuteOutput{
		ToolID: in.ToolID, Module: man.Module, Arguments: mapping.Arguments,
		Renamed: mapping.Renamed, Unused: mapping.Unused, State: in.Caller.EffectiveState(),
	}
	if in.DryRun {
		out.DryRun = true
		return out, nil
	}
	// Onboarded wrappers and tools built from scratch both run as
	// approved binaries under their approval's policy.
	if man.Source != nil && (man.Source.Origin == "openapi" || man.Source.Origin == OriginBuilt) {
		return m.executeWrapped(ctx, in, man, out, use)
	}
	name := in.ToolID
	if _, _, ok := modules.Split(name); !ok && man.Module != "" {
		name = man.Module + "." + name
	}
	if man.Module == "" {
		if _, _, ok := modules.Split(name); !ok {
			return ExecuteOutput{}, Fail(ErrTypeNotExecutable, "tool %q has no module to execute it", in.ToolID)
		}
	}
	key := IdempotencyKey(ctx)
	out.IdempotencyKey = key
	start := time.Now()
	res := m.Router.Execute(ctx, modules.Call{
		ToolName: name, Arguments: mapping.Arguments, UserID: in.Caller.UserID,
		IdempotencyKey: key, InputSchema: man.InputSchema, OutputSchema: man.OutputSchema,
	})
	out.DurationMs = time.Since(start).Milliseconds()
	switch {
	case res.Kind == modules.KindUnknownModule, res.Kind == modules.KindInvalidName, res.Kind == modules.KindInvalidInput:
		// Refused before any module was called: the tool did not run.
	case refusedInput(res, in.Caller):
		// The tool refused the caller's own inputs (or a guest's
		// run failed): not counted as a failure of the tool, so
		// it does not lower the tool's success rate for everyone (the
		// audit and metrics still count the call).
	default:
		use.set(res.Success, out.DurationMs)
	}
	if !res.Success {
		return ExecuteOutput{}, moduleError(res, in.Caller)
	}
	if len(res.Result) > 0 {
		if err := json.Unmarshal(res.Result, &out.Output); err != nil {
			return ExecuteOutput{}, Fail(ErrTypeToolFailed, "tool %q returned invalid JSON: %v", in.ToolID, err)
		}
	}
	if man.State != "" {
		out.State = man.State
	}
	return out, nil
}

// executeWrapped runs an onboarded external tool through its wrapper.
// Policy refusals (rate limit, quota, budget, access) are non-retryable;
// network failures are retried.
func (m *Modules) executeWrapped(ctx context.Context, in ExecuteInput, man tool.Manifest, out ExecuteOutput, use *usage) (ExecuteOutput, error) {
	if m.Wrapped == nil {
		return ExecuteOutput{}, Fail(ErrTypeNotExecutable, "tool %q is an onboarded external tool, but this worker has no airlock runtime", in.ToolID)
	}
	start := time.Now()
	res, err := m.Wrapped.RunWrapped(ctx, in.ToolID, out.Arguments, in.Caller)
	out.DurationMs = time.Since(start).Milliseconds()
	switch {
	case errors.Is(err, fault.ErrLimit), errors.Is(err, fault.ErrForbidden):
		// A caller at its quota, or outside the approval's users, is
		// answered; it is no fault of the service (benign: logged at
		// debug), or any caller could fill the log.
		return ExecuteOutput{}, benign(ErrTypePolicyRefused, "%v", err)
	case errors.Is(err, fault.ErrNotFound):
		return ExecuteOutput{}, Fail(ErrTypeNotExecutable, "%v", err)
	case err != nil:
		use.set(false, out.DurationMs)
		return ExecuteOutput{}, retryable(ErrTypeModuleUnavailable, "%v", err)
	}
	refused := upstreamRefused(res, in.Caller)
	if res.Success || (res.Stage != kit.StageInput && !refused) {
		// A wrapper's refusal of the inputs (kit.StageInput) is made before
		// any request, and the upstream API's (upstreamRefused) answers
		// them: neither is counted as a failure of the tool, as for a
		// module's tool (executeTool).
		use.set(res.Success, out.DurationMs)
	}
	if !res.Success {
		switch {
		case res.Stage == kit.StageInput:
			return ExecuteOutput{}, benign(ErrTypeSchemaMismatch, "%s: %s", in.ToolID, res.Error)
		case res.Stage == kit.StageNetwork:
			return ExecuteOutput{}, retryable(ErrTypeModuleUnavailable, "%s: %s", in.ToolID, res.Error)
		case upstreamBusy(res):
			// Counted (or not) as any answer of its status is, and tried
			// again: the API says it did not do the request this time.
			return ExecuteOutput{}, retryable(ErrTypeModuleUnavailable, "%s: %s", in.ToolID, res.Error)
		case refused:
			// Any caller can bring it about: logged at debug (benign).
			return ExecuteOutput{}, benign(ErrTypeToolFailed, "%s: %s", in.ToolID, res.Error)
		default:
			return ExecuteOutput{}, Fail(ErrTypeToolFailed, "%s: %s", in.ToolID, res.Error)
		}
	}
	if len(res.Result) > 0 {
		if err := json.Unmarshal(res.Result, &out.Output); err != nil {
			return ExecuteOutput{}, Fail(ErrTypeToolFailed, "tool %q returned invalid JSON: %v", in.ToolID, err)
		}
	}
	if man.State != "" {
		out.State = man.State
	}
	return out, nil
}

func (m *Modules) recordUsage(ctx context.Context, in ExecuteInput, ok bool, ms int64) {
	now := time.Now().UTC()
	if m.Usage != nil {
		ev := graph.UsageEvent{ToolID: in.ToolID, SessionID: in.Caller.SessionID, UserID: in.Caller.UserID,
			Query: in.Query, Success: ok, LatencyMs: ms, At: now, Origin: graph.OriginObserved, Level: in.Caller.Level}
		if err := m.Usage.RecordUsage(ctx, []graph.UsageEvent{ev}); err != nil {
			// Usage is evidence for ranking, not part of the execution: a failed
			// write must not fail (and so repeat) a call that already happened.
			activity.GetLogger(ctx).Warn("record_usage_failed", "tool", in.ToolID, "error", err)
		}
	}
	// A plan's tools pair as a session's do: only for a signed-in caller
	// who may teach the shared learned data (anyone can make an anonymous
	// plan, and a guest key is anyone's; access.MayTeach), once per
	// caller's session; a plan run outside a session is its own (its
	// workflow).
	if !ok || m.Pairs == nil || in.Caller.UserID == "" || !access.MayTeach(in.Caller.Level) {
		return
	}
	session := in.Caller.SessionID
	if session == "" && activity.IsActivity(ctx) {
		session = "plan/" + activity.GetInfo(ctx).WorkflowExecution.ID
	}
	if session == "" {
		return
	}
	var evidence []graph.PairEvidence
	seen := map[string]bool{}
	for _, other := range in.PairWith {
		if other == "" || other == in.ToolID || seen[other] {
			continue
		}
		seen[other] = true
		evidence = append(evidence, graph.PairEvidence{A: min(in.ToolID, other), B: max(in.ToolID, other), At: now,
			Caller: in.Caller.UserID, Session: session})
	}
	if len(evidence) == 0 {
		return
	}
	if err := m.Pairs.LearnPairs(ctx, evidence); err != nil {
		activity.GetLogger(ctx).Warn("learn_plan_pairs_failed", "tool", in.ToolID, "with", in.PairWith, "error", err)
	}
}

// DiscoverOutput reports a discovery run.
type DiscoverOutput struct {
	Reports []modules.ModuleReport `json:"reports"`
}

// DiscoverModules fetches every configured module's manifest and registers
// its tools; unreachable modules are reported, not fatal.
func (m *Modules) DiscoverModules(ctx context.Context) (DiscoverOutput, error) {
	if m.Router == nil {
		return DiscoverOutput{}, Fail(ErrTypeNotExecutable, "activities: no module router configured")
	}
	reports, err := m.Router.Discover(ctx)
	if err != nil {
		return DiscoverOutput{Reports: reports}, fmt.Errorf("activities: discover modules: %w", err)
	}
	for _, r := range reports {
		if r.Error != "" {
			activity.GetLogger(ctx).Warn("module_unreachable", "module", r.Module, "url", r.URL, "error", r.Error)
		}
	}
	return DiscoverOutput{Reports: reports}, nil
}

// keepAlive heartbeats the running activity every third of its heartbeat
// timeout until the returned stop is called (a no-op outside an activity
// or without a heartbeat timeout). A module call may take minutes; the
// heartbeat lets Temporal notice within the heartbeat timeout, not the
// start-to-close timeout, that the worker running it died, and retry the
// call on another worker with the same idempotency key.
func keepAlive(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	hb := activity.GetInfo(ctx).HeartbeatTimeout
	if hb <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(hb / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}
