package workflows

import (
	"net/http"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/workflows/workflowstest"
)

// runExecute runs ExecuteToolWorkflow over the fixture's real activities.
func runExecute(t *testing.T, f *workflowstest.Fixture, in ExecuteToolInput) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(30 * time.Second)
	env.RegisterWorkflow(ExecuteToolWorkflow)
	env.RegisterActivity(&activities.Modules{Router: f.Router, Schemas: f, Usage: f.Usage, Pairs: f.Usage})
	env.ExecuteWorkflow(ExecuteToolWorkflow, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	return env.GetWorkflowError()
}

// TestExecuteRecordsOneUsePerCall: a call records one use, its final
// outcome, however many attempts ran; an error the module classifies as not
// retryable runs once, and the module's refusal of the caller's inputs
// (a 400 or 422, or an anonymous caller's failed tool result) records no
// use.
func TestExecuteRecordsOneUsePerCall(t *testing.T) {
	in := ExecuteToolInput{ToolID: "currency.convert", Inputs: eurInputs(), Caller: Caller{UserID: "ana"}}

	f := workflowstest.New(t, nil)
	f.Mods["currency"].FailWith("currency.convert", http.StatusServiceUnavailable)
	wantType(t, runExecute(t, f, in), activities.ErrTypeModuleUnavailable)
	if got := len(f.Mods["currency"].Calls()); got != 3 {
		t.Fatalf("a 503 was tried %d times, want 3 (it is retryable)", got)
	}
	if ev := f.Usage.Events; len(ev) != 1 || ev[0].Success {
		t.Fatalf("usage after three failed attempts = %+v, want one failed use", ev)
	}

	f = workflowstest.New(t, nil)
	in.Inputs = map[string]any{"amount": 1e308, "from": "USD", "to": "JPY"} // overflows: the module refuses the inputs
	wantType(t, runExecute(t, f, in), activities.ErrTypeModuleRejected)
	if got := len(f.Mods["currency"].Calls()); got != 1 {
		t.Fatalf("an input error was tried %d times, want 1", got)
	}
	// The caller's own bad inputs are not the tool failing: no use is
	// recorded, so they cannot lower its success rate for everyone.
	if ev := f.Usage.Events; len(ev) != 0 {
		t.Fatalf("usage after an input error = %+v, want none", ev)
	}

	// A tool result with success false may be the tool failing ("rate
	// unavailable") or refusing the inputs: it counts for a caller who may
	// teach the shared learned data (a user and above), and not for a
	// guest, with a key or anonymous.
	in.Inputs = map[string]any{"amount": 1, "from": "ZZZ", "to": "EUR"} // the tool answers success false
	for _, c := range []struct {
		caller Caller
		uses   int
	}{{Caller{UserID: "ana", Level: "user"}, 1}, {Caller{UserID: "gus", Level: "guest"}, 0}, {Caller{}, 0}} {
		f = workflowstest.New(t, nil)
		in.Caller = c.caller
		wantType(t, runExecute(t, f, in), activities.ErrTypeToolFailed)
		if ev := f.Usage.Events; len(ev) != c.uses || (len(ev) == 1 && ev[0].Success) {
			t.Fatalf("%+v: usage after a failed run = %+v, want %d failed use(s)", c.caller, ev, c.uses)
		}
	}
}
