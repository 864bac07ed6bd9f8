// Package fulfil is the domain service every edge (REST, MCP, console)
// uses to run things on Temporal: a novel-verb fulfilment
// (NovelVerbWorkflow), a known tool's execution (ExecuteToolWorkflow), and
// collecting a run's outcome. It applies the caller's visibility before
// starting anything; the workflows' activities check again.
package fulfil

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/workflows"
)

// Service starts and collects runs.
type Service struct {
	temporal Starter
	tools    ToolGetter
	cfg      Config
}

// New returns a Service. tools may be nil: execute then leaves the known
// and visible checks to the workflow's activity.
func New(c Starter, tools ToolGetter, cfg Config) *Service {
	if c == nil {
		panic("fulfil: nil Starter")
	}
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = workflows.TaskQueue
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	cfg.UIBaseURL = strings.TrimRight(cfg.UIBaseURL, "/")
	return &Service{temporal: c, tools: tools, cfg: cfg}
}

// Config returns the service's configuration (defaults applied).
func (h *Service) Config() Config { return h.cfg }

// StartVerb validates req and starts its NovelVerbWorkflow for caller. A
// non-empty idempotency key makes a repeated request return the first run
// instead of fulfilling the verb again, as StartExecute's does.
func (h *Service) StartVerb(ctx context.Context, caller access.Caller, req VerbRequest, key string) (client.WorkflowRun, Run, error) {
	if err := req.Validate(); err != nil {
		return nil, Run{}, err
	}
	if err := checkIdempotencyKey(caller, key); err != nil {
		return nil, Run{}, err
	}
	in := workflows.NovelVerbInput{
		Verb: req.Verb, Description: req.Description, Inputs: req.Inputs, Context: req.Context, Caller: workflows.Caller(caller),
		Options: workflows.NovelVerbOptions{MaxDepth: req.Options.MaxDepth, DryRun: req.Options.DryRun, SearchLimit: req.Options.SearchLimit},
	}
	in.Options.SetRule(h.rule(req.Options))
	// The random part is unguessable (128 bits); reads check the owner in
	// the memo anyway (GetVerb).
	opts := client.StartWorkflowOptions{
		ID:        "verb-" + req.Verb + "-" + NewID(),
		TaskQueue: h.cfg.TaskQueue,
		Memo:      ownerMemo(caller),
		// Set at start so the run is findable by verb before its first
		// workflow task; the workflow upserts branch and tool as it goes.
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SAVerb.ValueSet(req.Verb)),
		// When a worker shares this client (toolsmith dev), the first
		// workflow task comes back in the start response and skips a
		// matching round-trip; otherwise the SDK starts normally.
		EnableEagerStart: true,
	}
	fingerprint := ""
	if key != "" {
		fingerprint = fingerprintOf(keyedRequest{Route: routeVerb, Request: req, View: viewOf(caller)})
		keyed(&opts, keyedID(caller, key), fingerprint)
	}
	if err := h.intend(ctx, caller, "verbs.start", "", opts.ID, "verb "+req.Verb); err != nil {
		return nil, Run{}, err
	}
	run, err := h.temporal.ExecuteWorkflow(ctx, opts, workflows.NovelVerbWorkflow, in)
	if err != nil {
		return h.join(ctx, opts.ID, fingerprint, "start "+req.Verb, err)
	}
	return run, h.running(run), nil
}

// StartExecute checks that caller may run toolID and starts its
// ExecuteToolWorkflow. A non-empty idempotency key makes a repeated call
// return the first run instead of calling the tool again.
func (h *Service) StartExecute(ctx context.Context, caller access.Caller, toolID string, req ExecuteRequest, key string) (client.WorkflowRun, Run, error) {
	if err := checkIdempotencyKey(caller, key); err != nil {
		return nil, Run{}, err
	}
	if err := h.checkExecute(ctx, toolID, caller, req.Inputs); err != nil {
		return nil, Run{}, err
	}
	opts := client.StartWorkflowOptions{
		ID:                    "tool-" + toolID + "-" + NewID(),
		TaskQueue:             h.cfg.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(workflows.SAToolID.ValueSet(toolID)),
		Memo:                  ownerMemo(caller),
	}
	fingerprint := ""
	if key != "" {
		fingerprint = fingerprintOf(keyedRequest{Route: routeExecute, Tool: toolID, Request: executeFingerprint(req), View: viewOf(caller)})
		keyed(&opts, keyedID(caller, key), fingerprint)
	}
	if err := h.intend(ctx, caller, "tools.execute.start", toolID, opts.ID, "tool "+toolID); err != nil {
		return nil, Run{}, err
	}
	in := workflows.ExecuteToolInput{ToolID: toolID, Inputs: req.Inputs, Caller: workflows.Caller(caller), DryRun: req.DryRun}
	run, err := h.temporal.ExecuteWorkflow(ctx, opts, workflows.ExecuteToolWorkflow, in)
	if err != nil {
		return h.join(ctx, opts.ID, fingerprint, "execute "+toolID, err)
	}
	return run, h.running(run), nil
}

// keyed gives a run started with an idempotency key its fixed workflow ID
// (keyedID: the caller's scope of the key) and the request's fingerprint.
//
// Same caller and key, same workflow ID: the start is refused as already
// started (WorkflowExecutionErrorWhenAlreadyStarted), so a repeat is told
// apart and compared, and join answers it with the existing run; the
// reuse policy stops a finished one from running again. The key is scoped
// to the caller, so another caller's same key is another workflow: it can
// neither read this run nor claim the key. The fingerprint rides in the
// memo: a repeat with the same key and another request is refused, not
// answered with the first run as if it were this one's.
func keyed(opts *client.StartWorkflowOptions, id, fingerprint string) {
	opts.ID = id
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	opts.Memo[MemoRequest] = fingerprint
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true
}

// keyedID is the workflow ID of the run a caller's idempotency key
// started. A key stands for one request whatever it asks: the ID names
// neither the route (verb or execute) nor the verb or tool, so the same
// key on another route, verb or tool finds the first run and its
// fingerprint refuses it.
func keyedID(caller access.Caller, key string) string {
	return "key-" + idempotencyScope(caller, key)
}

// join answers a start that failed with err: a run an idempotency key
// already started (the same request) is that run, in the state it is in
// now (a finished one is not reported running); another request with the
// key is sameRequest's 422; any other error is what it is.
func (h *Service) join(ctx context.Context, id, fingerprint, what string, err error) (client.WorkflowRun, Run, error) {
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &started) {
		return nil, Run{}, TemporalError(what, err)
	}
	info, err := h.sameRequest(ctx, id, fingerprint)
	if err != nil {
		return nil, Run{}, err
	}
	runID := info.GetExecution().GetRunId()
	run := h.temporal.GetWorkflow(ctx, id, runID)
	out := Run{WorkflowID: id, RunID: runID, UIURL: h.UIURL(id, runID), Status: StatusName(info.GetStatus())}
	return run, out, nil
}

// MemoRequest is the memo field holding the fingerprint of a request (an
// execute or a verb) made with an idempotency key.
const MemoRequest = "toolsmithRequest"

// The routes a keyed request's fingerprint names.
const (
	routeVerb    = "verb"
	routeExecute = "execute"
)

// keyedRequest is what a request made with an idempotency key stands for:
// its route, the tool it executes, the request itself and the view of the
// catalogue it was made with. Any of them differing is another request.
type keyedRequest struct {
	Route   string    `json:"route"`
	Tool    string    `json:"tool,omitempty"`
	Request any       `json:"request"`
	View    keyedView `json:"view"`
}

// executeFingerprint is what an execute request asks: its inputs and
// whether it is a dry run. It is converted from ExecuteRequest, so a
// field added there must be added here (or the conversion fails to
// compile) and is part of the request's identity.
type executeFingerprint struct {
	Inputs map[string]any `json:"inputs"`
	DryRun bool           `json:"dryRun"`
}

// keyedView is the caller's effective view of the catalogue, everything
// that narrows an access.Caller (level, roles, permissions, groups, agent
// state, allowed modules), sets sorted: the same key sent with other
// narrowing headers (X-Allowed-Modules, X-Agent-State, X-Tool-Groups, …)
// is another request, since the run would see other tools.
type keyedView struct {
	Level       string   `json:"level"`
	Roles       []string `json:"roles"`
	Permissions []string `json:"permissions"`
	Groups      []string `json:"groups"`
	State       string   `json:"state"`
	// Modules is nil when every module is allowed, empty when none is.
	Modules *[]string `json:"modules"`
}

func viewOf(c access.Caller) keyedView {
	v := keyedView{Level: c.Level, Roles: sortedSet(c.Roles), Permissions: sortedSet(c.Permissions),
		Groups: sortedSet(c.EffectiveGroups()), State: c.EffectiveState()}
	if c.AllowedModules != nil {
		m := sortedSet(c.AllowedModules)
		v.Modules = &m
	}
	return v
}

// sortedSet is a sorted copy of s without duplicates, never nil.
func sortedSet(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return slices.Compact(out)
}

// fingerprintOf is a digest of a request's JSON (encoding/json writes a
// struct's fields in order and a map's keys sorted): a verb request's
// fingerprint is the whole of it, verb, description, inputs, context and
// options.
func fingerprintOf(v any) string {
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// sameRequest refuses a run that an idempotency key started for another
// request (fault.ErrInvalid on the key, 422): the key stands for one
// request, as the IETF's Idempotency-Key draft has it. It answers the
// run's description otherwise.
func (h *Service) sameRequest(ctx context.Context, id, fingerprint string) (*workflowpb.WorkflowExecutionInfo, error) {
	desc, err := h.temporal.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, TemporalError("read the run of "+IdempotencyKeyField, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	p := info.GetMemo().GetFields()[MemoRequest]
	var got string
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &got) != nil || got != fingerprint {
		return nil, fault.Invalid(IdempotencyKeyField, "was used before for another request (another route, verb or tool, other inputs, options or dryRun, or other narrowing headers): send a new key for a new request")
	}
	return info, nil
}

// intend writes the write-ahead audit record of a run about to start
// (graph.AuditIntent): should the process die between starting the
// workflow and auditing the call, the log still shows who started what.
// When it cannot be written nothing is started (fault.ErrUnavailable):
// a run the log cannot show must not happen. The actor and request id
// come from ctx (identity.NewContext, audit.WithRequestID).
func (h *Service) intend(ctx context.Context, caller access.Caller, action, tool, workflowID, what string) error {
	if h.cfg.Audit == nil {
		return nil
	}
	e := graph.AuditEvent{Action: action, Tool: tool, Outcome: graph.AuditIntent,
		Detail: fmt.Sprintf("starting workflow %s (%s) for %s", workflowID, what, callerName(caller))}
	if err := h.cfg.Audit.Record(ctx, e); err != nil {
		return fmt.Errorf("fulfil: %s: the audit log cannot record the start, so nothing was started: %w: %w", what, fault.ErrUnavailable, err)
	}
	return nil
}

func callerName(c access.Caller) string {
	if c.UserID == "" {
		return "an anonymous caller"
	}
	return c.UserID
}

// Recorder is the audit log the service writes ahead to (audit.Log
// satisfies it).
type Recorder interface {
	Record(ctx context.Context, e graph.AuditEvent) error
}

func (h *Service) running(run client.WorkflowRun) Run {
	return Run{WorkflowID: run.GetID(), RunID: run.GetRunID(), UIURL: h.UIURL(run.GetID(), run.GetRunID()), Status: workflows.StatusRunning}
}

// Wait waits up to wait for run's outcome and fills out; it reports false
// while the run is still going (out.Status stays running).
func (h *Service) Wait(ctx context.Context, run client.WorkflowRun, wait time.Duration, out *Run, result any) bool {
	if wait <= 0 {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if !h.Collect(wctx, run, out, result) {
		out.Status = workflows.StatusRunning
		return false
	}
	out.Succeeded = out.Status == workflows.StatusCompleted
	return true
}

// Starter is the part of the Temporal SDK client the service uses;
// client.Client satisfies it.
type Starter interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
}

// ToolGetter reads a tool so execute can answer 404/403 before starting a
// workflow; graph.Store satisfies it.
type ToolGetter interface {
	GetTool(ctx context.Context, id string) (graph.Tool, error)
}

// Config tunes a Service.
type Config struct {
	// TaskQueue defaults to workflows.TaskQueue.
	TaskQueue string
	// Namespace names the namespace in UI links; default "default".
	Namespace string
	// UIBaseURL is the Temporal Web UI (http://127.0.0.1:8233); empty
	// leaves uiUrl out of responses.
	UIBaseURL string
	// DefaultRule is the substitution rule calibrated for the server's
	// embedder. A request that sets none of confidence, threshold, margin,
	// scoreMargin and evidenceMargin gets it whole; one that sets any gets
	// exactly what it set (an unset bar is off) and, with neither a
	// confidence nor a threshold, this rule's. The zero rule leaves the workflow's own default
	// (retrieval.DefaultSubstituteRule).
	DefaultRule retrieval.SubstituteRule
	// Audit receives a write-ahead record (graph.AuditIntent) before each
	// verb or execute workflow starts; nil records none.
	Audit Recorder
}

// rule is the substitution rule a verb request runs with (Config.DefaultRule).
func (h *Service) rule(o VerbOptions) retrieval.SubstituteRule {
	r := retrieval.SubstituteRule{Confidence: o.Confidence, Threshold: o.Threshold, Margin: o.Margin, ScoreMargin: o.ScoreMargin, EvidenceMargin: o.EvidenceMargin}
	return r.Or(h.cfg.DefaultRule)
}

// VerbRequest is the body of POST /verbs.
type VerbRequest struct {
	Verb        string         `json:"verb"`
	Description string         `json:"description,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
	Context     string         `json:"context,omitempty"`
	Options     VerbOptions    `json:"options,omitempty"`
}

// VerbOptions are the caller-settable workflows.NovelVerbOptions.
type VerbOptions struct {
	// Confidence is retrieval.SubstituteRule.Confidence.
	Confidence  float64 `json:"confidence,omitempty"`
	Threshold   float64 `json:"threshold,omitempty"`
	Margin      float64 `json:"margin,omitempty"`
	ScoreMargin float64 `json:"scoreMargin,omitempty"`
	// EvidenceMargin is retrieval.SubstituteRule.EvidenceMargin.
	EvidenceMargin float64 `json:"evidenceMargin,omitempty"`
	MaxDepth       int     `json:"maxDepth,omitempty"`
	DryRun         bool    `json:"dryRun,omitempty"`
	SearchLimit    int     `json:"searchLimit,omitempty"`
}

// Run is the response of the verbs routes.
type Run struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
	UIURL      string `json:"uiUrl,omitempty"`
	// Status is running, completed, failed, canceled, terminated,
	// timed_out or continued_as_new.
	Status string `json:"status"`
	// Succeeded is true only for a run that completed: a run that ended in
	// failure (LLMUnavailable, SchemaMismatch, …) answers 200 — the request
	// worked, the outcome is known — with succeeded false, status failed
	// and errorType. The X-Run-Status header carries Status as well.
	Succeeded bool                `json:"succeeded"`
	Progress  *workflows.Progress `json:"progress,omitempty"`
	Result    any                 `json:"result,omitempty"`
	Error     string              `json:"error,omitempty"`
	ErrorType string              `json:"errorType,omitempty"`
}

var verbRe = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

const maxVerbLen = 64

// MaxInputsBytes bounds a run's inputs, as JSON (256 KiB). They travel in
// the workflow's history, whose payloads Temporal refuses over its blob
// size limit (2 MiB by default; it warns over 512 KiB), and one payload
// can carry them more than once: an execution's result holds the
// arguments mapped from them beside the tool's output, a verb's result
// each step's inputs and arguments, an error the value it quotes. A
// 1 MB input passed a 1 MiB bound and the run then failed inside
// Temporal (payloadSizeError); a quarter of the warning size leaves room
// for those copies, and is far above what any tool's arguments need.
const MaxInputsBytes = 256 << 10

// checkInputsSize refuses inputs over MaxInputsBytes.
func checkInputsSize(inputs map[string]any) error {
	if len(inputs) == 0 {
		return nil
	}
	b, err := json.Marshal(inputs)
	if err != nil {
		return fmt.Errorf("cannot be encoded as JSON: %v", err)
	}
	if len(b) > MaxInputsBytes {
		return fmt.Errorf("must be at most %d bytes of JSON, got %d", MaxInputsBytes, len(b))
	}
	return nil
}

// checkMalformed adds to v (a 400) inputs nested deeper than
// tool.MaxJSONDepth, the bound on every free-form JSON Toolsmith takes (a
// run's inputs travel through history, the module router and every edge's
// answer, and none needs thousands of levels), and control characters in
// the named texts, which tool texts refuse too: they end up on consoles
// and in gaps.
func checkMalformed(v *fault.ValidationError, inputs map[string]any, texts ...[2]string) {
	if tool.ValueDeeperThan(inputs, tool.MaxJSONDepth) {
		v.Add("inputs", "must nest objects and arrays at most %d deep", tool.MaxJSONDepth)
	}
	for _, t := range texts {
		if i := tool.ControlAt(t[1]); i >= 0 {
			v.Add(t[0], "must not contain control characters, got %U at byte %d", []rune(t[1][i:])[0], i)
		}
	}
}

// MaxVerbTextBytes bounds a verb's description and its context, each: half
// of retrieval.MaxQueryBytes, so the verb's words and description together
// always fit one search.
const MaxVerbTextBytes = retrieval.MaxQueryBytes / 2

// Validate checks the request, naming every offending field.
func (r VerbRequest) Validate() error {
	bad := &fault.ValidationError{Malformed: true}
	checkMalformed(bad, r.Inputs, [2]string{"verb", r.Verb}, [2]string{"description", r.Description}, [2]string{"context", r.Context})
	if len(bad.Fields) > 0 {
		return bad
	}
	v := &fault.ValidationError{}
	switch {
	case r.Verb == "":
		v.Add("verb", "is required")
	case len(r.Verb) > maxVerbLen:
		v.Add("verb", "must be at most %d characters", maxVerbLen)
	case !verbRe.MatchString(r.Verb):
		v.Add("verb", "must be UPPER_SNAKE_CASE (e.g. CONVERT_CURRENCY), got %q", r.Verb)
	}
	// The fulfilment query is the verb's words, its description and its
	// context: each bounded so that together they fit a search.
	if len(r.Description) > MaxVerbTextBytes {
		v.Add("description", "must be at most %d bytes, got %d", MaxVerbTextBytes, len(r.Description))
	}
	if len(r.Context) > MaxVerbTextBytes {
		v.Add("context", "must be at most %d bytes, got %d", MaxVerbTextBytes, len(r.Context))
	}
	if err := checkInputsSize(r.Inputs); err != nil {
		v.Add("inputs", "%s", err.Error())
	}
	if c := r.Options.Confidence; c < 0 || c >= 1 {
		v.Add("options.confidence", "must be in [0, 1), got %g", c)
	}
	if t := r.Options.Threshold; t < 0 || t > 1 {
		v.Add("options.threshold", "must be between 0 and 1, got %g", t)
	}
	if m := r.Options.Margin; m < 0 || m > 1 {
		v.Add("options.margin", "must be between 0 and 1, got %g", m)
	}
	if m := r.Options.ScoreMargin; m < 0 || m > 100 {
		v.Add("options.scoreMargin", "must be between 0 and 100, got %g", m)
	}
	if m := r.Options.EvidenceMargin; m < 0 || m > 1000 {
		v.Add("options.evidenceMargin", "must be between 0 and 1000, got %g", m)
	}
	if d := r.Options.MaxDepth; d < 0 || d > 10 {
		v.Add("options.maxDepth", "must be between 0 and 10, got %d", d)
	}
	if n := r.Options.SearchLimit; n < 0 || n > 100 {
		v.Add("options.searchLimit", "must be between 0 and 100, got %d", n)
	}
	return v.Err()
}

// ExecuteRequest is what executing a known tool takes (the body of POST
// /tools/:toolId/execute).
type ExecuteRequest struct {
	Inputs map[string]any `json:"inputs"`
	DryRun bool           `json:"dryRun,omitempty"`
}

// CheckTool answers unknown, inactive and hidden tools without a workflow,
// all with access.ToolNotFound (404). The activity checks again: it is the authority, this is the
// fast, clear answer.
func (h *Service) CheckTool(ctx context.Context, id string, caller access.Caller) error {
	_, err := h.visibleTool(ctx, id, caller)
	return err
}

// visibleTool is CheckTool's read; a zero Tool and nil without a
// ToolGetter.
func (h *Service) visibleTool(ctx context.Context, id string, caller access.Caller) (graph.Tool, error) {
	if h.tools == nil {
		return graph.Tool{}, nil
	}
	// Missing, inactive and hidden answer alike (the reads use the same
	// rule), so execute cannot be used to probe which ids exist.
	t, err := h.tools.GetTool(ctx, id)
	if _, err = access.VisibleTool(id, t, err, caller); err != nil {
		return graph.Tool{}, err
	}
	return t, nil
}

// checkExecute is CheckTool, then the execution's own fit of inputs to the
// tool's inputSchema (modules.FitInputs): inputs that cannot run are a 422
// on "inputs" naming what does not fit, and no run starts. The activity
// checks again (a tool may change in between); it stays the authority.
func (h *Service) checkExecute(ctx context.Context, id string, caller access.Caller, inputs map[string]any) error {
	bad := &fault.ValidationError{Malformed: true}
	if checkMalformed(bad, inputs); len(bad.Fields) > 0 {
		return bad
	}
	if err := checkInputsSize(inputs); err != nil {
		return fault.Invalid("inputs", "%s", err.Error())
	}
	t, err := h.visibleTool(ctx, id, caller)
	if err != nil || len(t.Manifest) == 0 {
		return err
	}
	var man struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if json.Unmarshal(t.Manifest, &man) != nil {
		return nil // the activity reports an unreadable manifest
	}
	if _, err := modules.FitInputs(man.InputSchema, inputs, modules.ValidateArguments); err != nil {
		return fault.Invalid("inputs", "do not fit %s: %s", id, misfit(err))
	}
	return nil
}

// misfit says what in the inputs does not fit: each input the mapping
// names by itself ("amount: ambiguous: …", not "inputs.amount: …"), so the
// message reads right under whatever name an edge gives the inputs (MCP
// calls them "arguments"), or the schema check's own words.
func misfit(err error) string {
	var v *fault.ValidationError
	if !errors.As(err, &v) {
		return strings.TrimPrefix(err.Error(), modules.ErrSchemaMismatch.Error()+": ")
	}
	parts := make([]string, 0, len(v.Fields))
	for _, f := range v.Fields {
		name := strings.TrimPrefix(strings.TrimPrefix(f.Path, "inputs"), ".")
		if name == "" {
			parts = append(parts, f.Message)
			continue
		}
		parts = append(parts, name+": "+f.Message)
	}
	return strings.Join(parts, "; ")
}

// Collect waits for run's outcome and fills out. It reports false when ctx
// ended first (the run is still going).
func (h *Service) Collect(ctx context.Context, run client.WorkflowRun, out *Run, result any) bool {
	err := run.Get(ctx, result)
	if err == nil {
		out.Status, out.Result = workflows.StatusCompleted, result
		return true
	}
	if ctx.Err() != nil || waitEnded(err) {
		return false
	}
	out.Status, out.Error = workflows.StatusFailed, err.Error()
	var appErr *temporal.ApplicationError
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	switch {
	case errors.As(err, &appErr):
		out.ErrorType, out.Error = appErr.Type(), appErr.Error()
		// NovelVerbWorkflow attaches its partial result to the failure.
		if appErr.HasDetails() && appErr.Details(result) == nil {
			out.Result = result
		}
	case errors.As(err, &canceled):
		out.Status = "canceled"
	case errors.As(err, &terminated):
		out.Status = "terminated"
	case errors.As(err, &timeout):
		out.Status = "timed_out"
	}
	return true
}

// waitEnded reports whether err is the long poll for the outcome running
// out of time rather than an outcome. The server can answer
// DeadlineExceeded a moment before the caller's own deadline has passed.
func waitEnded(err error) bool {
	var deadline *serviceerror.DeadlineExceeded
	var canceled *serviceerror.Canceled
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.As(err, &deadline) || errors.As(err, &canceled)
}

func (h *Service) UIURL(id, runID string) string {
	if h.cfg.UIBaseURL == "" {
		return ""
	}
	return fmt.Sprintf("%s/namespaces/%s/workflows/%s/%s/history", h.cfg.UIBaseURL,
		url.PathEscape(h.cfg.Namespace), url.PathEscape(id), url.PathEscape(runID))
}

func StatusName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return workflows.StatusRunning
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return workflows.StatusCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return workflows.StatusFailed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "canceled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed_out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued_as_new"
	default:
		return "unknown"
	}
}

// TemporalError maps SDK errors onto the fault kinds httpx understands.
func TemporalError(op string, err error) error {
	var notFound *serviceerror.NotFound
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &notFound):
		return fmt.Errorf("fulfil: %s: %w: %w", op, fault.ErrNotFound, err)
	case errors.As(err, &started):
		return fmt.Errorf("fulfil: %s: %w: %w", op, fault.ErrConflict, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("fulfil: %s: %w: %w", op, fault.ErrUnavailable, err)
	default:
		var unavailable *serviceerror.Unavailable
		if errors.As(err, &unavailable) {
			return fmt.Errorf("fulfil: %s: temporal: %w: %w", op, fault.ErrUnavailable, err)
		}
		return fmt.Errorf("fulfil: %s: %w", op, err)
	}
}

// NewID returns 128 random bits in hex: the unguessable part of a
// workflow ID.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// MemoOwner is the memo field holding the access.Caller.UserID that
// started a run (the end user's scoped id behind a trusted gateway). It is
// stored with the run, so ownership survives restarts.
const MemoOwner = "toolsmithOwner"

func ownerMemo(caller access.Caller) map[string]any {
	return map[string]any{MemoOwner: caller.UserID}
}

// IdempotencyKeyField names the idempotency key in errors (REST sends it
// as the Idempotency-Key header).
const IdempotencyKeyField = "Idempotency-Key"

var idempotencyKeyRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// checkIdempotencyKey admits an empty key or a well-formed key of an
// identified caller. Anonymous callers cannot use keys: they cannot be
// told apart, so one could read or pre-claim another's run.
func checkIdempotencyKey(caller access.Caller, key string) error {
	if key == "" {
		return nil
	}
	if !idempotencyKeyRe.MatchString(key) {
		return fault.Malformed(IdempotencyKeyField, "must be 1-128 characters of A-Z a-z 0-9 . _ : -")
	}
	if caller.UserID == "" {
		return fmt.Errorf("%s: idempotency keys are scoped to the caller, so they need a credential (Authorization: Bearer <key>): %w",
			IdempotencyKeyField, fault.ErrUnauthenticated)
	}
	return nil
}

// idempotencyScope is the workflow ID part of a caller's key: a hash of
// the caller's stable id and the key (128 bits), so keys of different
// callers never meet and the ID does not reveal the key.
func idempotencyScope(caller access.Caller, key string) string {
	sum := sha256.Sum256([]byte(caller.UserID + "\x00" + key))
	return hex.EncodeToString(sum[:16])
}

// GetVerb reads a novel-verb run for caller: its status and progress while
// running, its outcome once ended. A run belongs to the caller that
// started it (MemoOwner); admins and owners may read every run. Another
// caller's run, and a run of another workflow type, answer
// fault.ErrNotFound, so existence does not leak.
func (h *Service) GetVerb(ctx context.Context, caller access.Caller, id, runID string) (Run, error) {
	// One answer for an unknown id, a run of another type and another
	// caller's run: a message that differed would tell what exists.
	notFound := fmt.Errorf("fulfil: no verb run %q: %w", id, fault.ErrNotFound)
	desc, err := h.temporal.DescribeWorkflowExecution(ctx, id, runID)
	if err != nil {
		if err = TemporalError("describe "+id, err); errors.Is(err, fault.ErrNotFound) {
			return Run{}, notFound
		}
		return Run{}, err
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetType().GetName() != "NovelVerbWorkflow" || !mayRead(caller, info.GetMemo().GetFields()[MemoOwner]) {
		return Run{}, notFound
	}
	runID = info.GetExecution().GetRunId()
	out := Run{WorkflowID: id, RunID: runID, UIURL: h.UIURL(id, runID), Status: StatusName(info.GetStatus())}
	if out.Status == workflows.StatusRunning {
		qctx, cancel := context.WithTimeout(ctx, progressTimeout)
		defer cancel()
		if v, err := h.temporal.QueryWorkflow(qctx, id, runID, workflows.ProgressQuery); err == nil {
			var p workflows.Progress
			if v.Get(&p) == nil {
				if _, err := h.redactVerb(ctx, caller, nil, &p); err != nil {
					return Run{}, err
				}
				out.Progress = &p
			}
		}
		return out, nil
	}
	var res workflows.NovelVerbResult
	h.Collect(ctx, h.temporal.GetWorkflow(ctx, id, runID), &out, &res)
	// Another caller's run names only the tools this caller may execute.
	hidden, err := h.redactVerb(ctx, caller, &res, nil)
	if err != nil {
		return Run{}, err
	}
	out.Error = access.RedactText(out.Error, hidden)
	return out, nil
}

// progressTimeout bounds the progress query: a run whose worker is down
// cannot answer, and a read must not hang on it.
const progressTimeout = 2 * time.Second

// mayRead reports whether caller may read a run whose memo owner is
// owner: its owner, or an admin. A run without an owner (started before
// owners were recorded) is an admin's to read.
func mayRead(caller access.Caller, owner *commonpb.Payload) bool {
	if access.LevelRank(caller.Level) >= access.LevelRank("admin") {
		return true
	}
	var who string
	if owner == nil || converter.GetDefaultDataConverter().FromPayload(owner, &who) != nil {
		return false
	}
	return who != "" && who == caller.UserID
}

// canceller is the part of client.Client that cancels a run.
type canceller interface {
	CancelWorkflow(ctx context.Context, workflowID, runID string) error
}

// Cancel asks Temporal to cancel a run (a caller gave up on it, e.g. an MCP
// client's notifications/cancelled). A Starter that cannot cancel makes it
// a no-op.
func (h *Service) Cancel(ctx context.Context, workflowID, runID string) error {
	c, ok := h.temporal.(canceller)
	if !ok {
		return nil
	}
	if err := c.CancelWorkflow(ctx, workflowID, runID); err != nil {
		return TemporalError("cancel "+workflowID, err)
	}
	return nil
}
