package fulfil_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// log is an audit recorder; fail makes every write fail.
type log struct {
	events []graph.AuditEvent
	fail   error
}

func (l *log) Record(_ context.Context, e graph.AuditEvent) error {
	if l.fail != nil {
		return l.fail
	}
	l.events = append(l.events, e)
	return nil
}

// crashingTemporal starts a workflow and then "dies": it remembers what the
// audit log held when the start reached it.
type crashingTemporal struct {
	log        *log
	started    []string
	logAtStart int
}

func (f *crashingTemporal) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	f.started = append(f.started, o.ID)
	f.logAtStart = len(f.log.events)
	return run{o.ID}, nil
}
func (f *crashingTemporal) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	return nil
}
func (f *crashingTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, errors.New("not used")
}
func (f *crashingTemporal) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	return nil, errors.New("not used")
}

type run struct{ id string }

func (r run) GetID() string                  { return r.id }
func (r run) GetRunID() string               { return "r1" }
func (r run) GetFirstExecutionRunID() string { return "r1" }
func (r run) Get(context.Context, any) error { return nil }
func (r run) GetWithOptions(context.Context, any, client.WorkflowRunGetOptions) error {
	return nil
}

// TestStartWritesAheadToTheAuditLog: the audit record of a run is written
// before its workflow starts, so a process that dies between starting it
// and auditing the call leaves a trace naming the workflow; when the log
// cannot be written nothing starts.
func TestStartWritesAheadToTheAuditLog(t *testing.T) {
	ctx := context.Background()
	caller := access.Caller{UserID: "key:k1", Level: "user"}
	for _, tc := range []struct {
		name, action, tool string
		start              func(*fulfil.Service) (string, error)
	}{
		{"verb", "verbs.start", "", func(s *fulfil.Service) (string, error) {
			_, r, err := s.StartVerb(ctx, caller, fulfil.VerbRequest{Verb: "CONVERT_CURRENCY"}, "")
			return r.WorkflowID, err
		}},
		{"execute", "tools.execute.start", "currency.convert", func(s *fulfil.Service) (string, error) {
			_, r, err := s.StartExecute(ctx, caller, "currency.convert", fulfil.ExecuteRequest{}, "order-42")
			return r.WorkflowID, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &log{}
			f := &crashingTemporal{log: l}
			id, err := tc.start(fulfil.New(f, nil, fulfil.Config{Audit: l}))
			if err != nil {
				t.Fatal(err)
			}
			// The process dies here, before the edge audits the call.
			if f.logAtStart != 1 || len(l.events) != 1 {
				t.Fatalf("audit records before the start: %d (now %d), want the intent first", f.logAtStart, len(l.events))
			}
			e := l.events[0]
			if e.Outcome != graph.AuditIntent || e.Action != tc.action || e.Tool != tc.tool ||
				!strings.Contains(e.Detail, id) || !strings.Contains(e.Detail, "key:k1") {
				t.Errorf("intent record = %+v, want %s naming workflow %s and the caller", e, tc.action, id)
			}

			failing := &log{fail: errors.New("disk full")}
			f = &crashingTemporal{log: failing}
			_, err = tc.start(fulfil.New(f, nil, fulfil.Config{Audit: failing}))
			if !errors.Is(err, fault.ErrUnavailable) || len(f.started) != 0 {
				t.Errorf("with the audit log down: err %v, started %v; want ErrUnavailable and nothing started", err, f.started)
			}
		})
	}
}

type oneTool struct{ t graph.Tool }

func (o oneTool) GetTool(_ context.Context, id string) (graph.Tool, error) {
	if id != o.t.ID {
		return graph.Tool{}, fault.ErrNotFound
	}
	return o.t, nil
}

// Inputs the tool cannot run are refused before any run starts, naming
// the input; inputs that fit start the run.
func TestExecuteRefusesInputsThatDoNotFit(t *testing.T) {
	tl := graph.Tool{ToolSummary: graph.ToolSummary{ID: "currency.convert", Status: graph.StatusActive},
		Manifest: []byte(`{"inputSchema":{"type":"object","required":["amount","from"],"properties":{"amount":{"type":"number"},"from":{"type":"string"}}}}`)}
	l := &log{}
	f := &crashingTemporal{log: l}
	svc := fulfil.New(f, oneTool{tl}, fulfil.Config{Audit: l})
	owner := access.Caller{Level: "owner", Groups: []string{access.Wildcard}}
	// Two values for "amount" (the exact name and a variant of it) are as
	// ambiguous as two variants: the run would otherwise take one and
	// forward the other.
	for _, bad := range []map[string]any{{"amount": "lots", "from": "USD"}, {"amount": 5}, {"amount": 1, "Amount": 500, "from": "USD"}} {
		_, _, err := svc.StartExecute(context.Background(), owner, tl.ID, fulfil.ExecuteRequest{Inputs: bad}, "")
		fields := fault.Fields(err)
		if !errors.Is(err, fault.ErrInvalid) || len(fields) != 1 || fields[0].Path != "inputs" {
			t.Fatalf("%v: %v (fields %+v), want invalid on inputs", bad, err, fields)
		}
	}
	if len(f.started) != 0 {
		t.Fatalf("started %v for inputs that do not fit", f.started)
	}
	if _, _, err := svc.StartExecute(context.Background(), owner, tl.ID, fulfil.ExecuteRequest{Inputs: map[string]any{"amount": 5, "from": "USD"}}, ""); err != nil {
		t.Fatal(err)
	}
	if len(f.started) != 1 {
		t.Fatalf("started %v, want one run", f.started)
	}
}

// TestInputsOverTheBoundStartNothing: a run's inputs over MaxInputsBytes
// of JSON (a 1 MB string in one input, which Temporal then refused as a
// payload too large) are a 422 on inputs, on execute and on a verb, and
// no workflow starts; inputs at the bound start one.
func TestInputsOverTheBoundStartNothing(t *testing.T) {
	l := &log{}
	f := &crashingTemporal{log: l}
	tl := graph.Tool{ToolSummary: graph.ToolSummary{ID: "timezone.world_clock", Status: graph.StatusActive}, Manifest: []byte(`{"inputSchema":{"type":"object"}}`)}
	svc := fulfil.New(f, oneTool{tl}, fulfil.Config{Audit: l})
	owner := access.Caller{UserID: "o", Level: "owner", Groups: []string{access.Wildcard}}
	big := map[string]any{"zones": []any{strings.Repeat("z", 1_000_000)}}
	_, _, err := svc.StartExecute(context.Background(), owner, tl.ID, fulfil.ExecuteRequest{Inputs: big}, "")
	if fields := fault.Fields(err); !errors.Is(err, fault.ErrInvalid) || len(fields) != 1 || fields[0].Path != "inputs" ||
		!strings.Contains(err.Error(), strconv.Itoa(fulfil.MaxInputsBytes)) {
		t.Fatalf("execute with 1 MB of inputs: %v (fields %+v), want invalid on inputs naming the bound", err, fields)
	}
	_, _, err = svc.StartVerb(context.Background(), owner, fulfil.VerbRequest{Verb: "WORLD_CLOCK", Inputs: big}, "")
	if fields := fault.Fields(err); !errors.Is(err, fault.ErrInvalid) || len(fields) != 1 || fields[0].Path != "inputs" {
		t.Fatalf("verb with 1 MB of inputs: %v (fields %+v), want invalid on inputs", err, fields)
	}
	if len(f.started) != 0 {
		t.Fatalf("started %v", f.started)
	}
	// {"zones":["…"]} is 14 bytes around the string.
	at := map[string]any{"zones": []any{strings.Repeat("z", fulfil.MaxInputsBytes-14)}}
	if _, _, err := svc.StartExecute(context.Background(), owner, tl.ID, fulfil.ExecuteRequest{Inputs: at}, ""); err != nil {
		t.Fatalf("inputs at the bound: %v", err)
	}
}

// nested is a value nesting objects n deep under "a".
func nested(n int) map[string]any {
	m := map[string]any{"leaf": 1}
	for range n - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

// TestInputsDepthAndControlCharactersAreMalformed: inputs nested deeper
// than tool.MaxJSONDepth, on a verb or an execute, and control characters
// in a verb's texts are a 400 naming the field, and nothing starts.
func TestInputsDepthAndControlCharactersAreMalformed(t *testing.T) {
	l := &log{}
	f := &crashingTemporal{log: l}
	tl := graph.Tool{ToolSummary: graph.ToolSummary{ID: "currency.convert", Status: graph.StatusActive}, Manifest: []byte(`{"inputSchema":{"type":"object"}}`)}
	svc := fulfil.New(f, oneTool{tl}, fulfil.Config{Audit: l})
	owner := access.Caller{UserID: "o", Level: "owner", Groups: []string{access.Wildcard}}
	want := func(err error, field string) {
		t.Helper()
		fields := fault.Fields(err)
		if !errors.Is(err, fault.ErrMalformed) || len(fields) != 1 || fields[0].Path != field {
			t.Fatalf("%v (fields %+v), want malformed on %s", err, fields, field)
		}
	}
	deep := nested(9000)
	_, _, err := svc.StartExecute(context.Background(), owner, tl.ID, fulfil.ExecuteRequest{Inputs: deep}, "")
	want(err, "inputs")
	_, _, err = svc.StartVerb(context.Background(), owner, fulfil.VerbRequest{Verb: "DO_IT", Inputs: nested(33)}, "")
	want(err, "inputs")
	_, _, err = svc.StartVerb(context.Background(), owner, fulfil.VerbRequest{Verb: "DO_IT", Description: "d\u001b[2J"}, "")
	want(err, "description")
	_, _, err = svc.StartVerb(context.Background(), owner, fulfil.VerbRequest{Verb: "DO_IT", Context: "ok\x00"}, "")
	want(err, "context")
	if len(f.started) != 0 {
		t.Fatalf("started %v", f.started)
	}
	// At the bound, and with tabs and newlines, a run starts.
	if _, _, err := svc.StartVerb(context.Background(), owner, fulfil.VerbRequest{Verb: "DO_IT", Description: "line\tone\nline two", Inputs: nested(32)}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.StartExecute(context.Background(), owner, tl.ID, fulfil.ExecuteRequest{Inputs: nested(32)}, ""); err != nil {
		t.Fatal(err)
	}
}
