package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// workflowPayloads names, per workflow type, the types its start input and
// its result are: what a recorded history's payloads must still decode into.
var workflowPayloads = map[string]struct{ in, out reflect.Type }{
	"NovelVerbWorkflow":      {typeOf[NovelVerbInput](), typeOf[NovelVerbResult]()},
	"ExecuteToolWorkflow":    {typeOf[ExecuteToolInput](), typeOf[ExecuteToolResult]()},
	"RefreshModulesWorkflow": {nil, typeOf[RefreshModulesResult]()},
	"AirlockWorkflow":        {typeOf[AirlockInput](), typeOf[AirlockOutcome]()},
	"ScanSourcesWorkflow":    {typeOf[ScanInput](), typeOf[ScanOutput]()},
	"HealthCheckWorkflow":    {nil, typeOf[HealthCheckReport]()},
	"ReindexWorkflow":        {typeOf[ReindexInput](), typeOf[ReindexProgress]()},
	"GapDiscoveryWorkflow":   {typeOf[GapDiscoveryInput](), typeOf[GapDiscoveryReport]()},
	"AnalyticsWorkflow":      {typeOf[AnalyticsInput](), typeOf[AnalyticsSummary]()},
	"RetrainWorkflow":        {typeOf[RetrainInput](), typeOf[RetrainResult]()},
	"BuildToolWorkflow":      {typeOf[BuildInput](), typeOf[BuildResult]()},
}

// messagePayloads names the type of each signal and update a workflow
// receives.
var messagePayloads = map[string]reflect.Type{
	SignalApprove:        typeOf[ApproveSignal](),
	SignalReject:         typeOf[RejectSignal](),
	SignalSubscribe:      typeOf[SubscribeSignal](),
	SignalAirlockOutcome: typeOf[AirlockOutcome](),
	UpdateDecide:         typeOf[Decision](),
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// registerAll registers every workflow the worker runs.
func registerAll(r worker.WorkflowReplayer) {
	for _, w := range All() {
		r.RegisterWorkflow(w)
	}
}

// workflowName is the type name the SDK registers w under: its function's.
func workflowName(w any) string {
	name := runtime.FuncForPC(reflect.ValueOf(w).Pointer()).Name()
	return name[strings.LastIndex(name, ".")+1:]
}

// TestReplay replays every recorded history in testdata against the
// current workflow code, and decodes each payload the history holds (start
// input, result, a failure's details, a child's result, signals and
// updates) strictly into the type that reads it today. A nondeterministic
// change fails the replay; a payload type that lost, renamed or retyped a
// field fails the decode: either would break running workflows. Histories
// are recorded by workflows/replay (go test -tags record; see its package
// comment), which names each run "replay-<file>"; child workflow IDs
// derive from the parent's, so the replay restores that ID.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 17 {
		t.Fatalf("found %d recorded histories in testdata, want 17", len(files))
	}
	seen := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			hist := loadHistory(t, f)
			seen[startedType(hist)] = true
			rep := worker.NewWorkflowReplayer()
			registerAll(rep)
			err := rep.ReplayWorkflowHistoryWithOptions(nil, hist, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: "replay-" + filepath.Base(f), RunID: "replay"},
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range historyPayloads(hist) {
				if err := strictDecode(p.data, p.typ); err != nil {
					t.Errorf("%s: %v", p.what, err)
				}
			}
		})
	}
	for _, w := range All() {
		wf := workflowName(w)
		if !seen[wf] {
			t.Errorf("no recorded history of %s in testdata (record one with workflows/replay)", wf)
		}
		if _, ok := workflowPayloads[wf]; !ok {
			t.Errorf("%s's payload types are not in workflowPayloads", wf)
		}
	}
}

// TestReplayDecodeCatchesAChangedPayload: the strict decode TestReplay
// applies fails for a type that renamed a recorded field or changed its
// type, and passes for the type the history was recorded with.
func TestReplayDecodeCatchesAChangedPayload(t *testing.T) {
	hist := loadHistory(t, filepath.Join("testdata", "substitute.json"))
	var input []byte
	for _, p := range historyPayloads(hist) {
		if strings.HasPrefix(p.what, "start input") {
			input = p.data
		}
	}
	if input == nil {
		t.Fatal("substitute.json has no start input")
	}
	if err := strictDecode(input, typeOf[NovelVerbInput]()); err != nil {
		t.Fatalf("the recorded input does not decode into NovelVerbInput: %v", err)
	}
	type renamed struct {
		Verb        string           `json:"verbName"`
		Description string           `json:"description,omitempty"`
		Inputs      map[string]any   `json:"inputs,omitempty"`
		Context     string           `json:"context,omitempty"`
		Caller      json.RawMessage  `json:"caller"`
		Options     NovelVerbOptions `json:"options,omitempty"`
	}
	if err := strictDecode(input, typeOf[renamed]()); err == nil {
		t.Error("a renamed field decoded")
	}
	type retyped struct {
		Verb        string          `json:"verb"`
		Description string          `json:"description,omitempty"`
		Inputs      []any           `json:"inputs,omitempty"`
		Context     string          `json:"context,omitempty"`
		Caller      json.RawMessage `json:"caller"`
		Options     json.RawMessage `json:"options,omitempty"`
	}
	if err := strictDecode(input, typeOf[retyped]()); err == nil {
		t.Error("a field of another type decoded")
	}
}

func loadHistory(t *testing.T, path string) *historypb.History {
	t.Helper()
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hist, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return hist
}

func startedType(h *historypb.History) string {
	if len(h.Events) == 0 {
		return ""
	}
	return h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
}

// payload is one payload of a history and the type that reads it now.
type payload struct {
	what string
	data []byte
	typ  reflect.Type
}

// historyPayloads lists the payloads of h that a workflow-owned type
// reads, with that type.
func historyPayloads(h *historypb.History) []payload {
	var out []payload
	add := func(what string, ps *commonpb.Payloads, typ reflect.Type) {
		if typ == nil || len(ps.GetPayloads()) == 0 {
			return
		}
		out = append(out, payload{what: what, data: ps.GetPayloads()[0].GetData(), typ: typ})
	}
	wf := workflowPayloads[startedType(h)]
	for _, ev := range h.Events {
		id := fmt.Sprintf(" (event %d)", ev.GetEventId())
		switch {
		case ev.GetWorkflowExecutionStartedEventAttributes() != nil:
			add("start input"+id, ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), wf.in)
		case ev.GetWorkflowExecutionCompletedEventAttributes() != nil:
			add("result"+id, ev.GetWorkflowExecutionCompletedEventAttributes().GetResult(), wf.out)
		case ev.GetWorkflowExecutionFailedEventAttributes() != nil:
			add("failure details"+id, ev.GetWorkflowExecutionFailedEventAttributes().GetFailure().GetApplicationFailureInfo().GetDetails(), wf.out)
		case ev.GetChildWorkflowExecutionCompletedEventAttributes() != nil:
			a := ev.GetChildWorkflowExecutionCompletedEventAttributes()
			add("child result"+id, a.GetResult(), workflowPayloads[a.GetWorkflowType().GetName()].out)
		case ev.GetWorkflowExecutionSignaledEventAttributes() != nil:
			a := ev.GetWorkflowExecutionSignaledEventAttributes()
			add("signal "+a.GetSignalName()+id, a.GetInput(), messagePayloads[a.GetSignalName()])
		case ev.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			in := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
			add("update "+in.GetName()+id, in.GetArgs(), messagePayloads[in.GetName()])
		}
	}
	return out
}

// strictDecode decodes data into a new value of typ, refusing fields the
// type does not have and values of another type.
func strictDecode(data []byte, typ reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(reflect.New(typ).Interface()); err != nil {
		return fmt.Errorf("%s no longer reads %s: %w", typ, data, err)
	}
	return nil
}
