package workflows

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"go.temporal.io/sdk/worker"
)

// TestReplay replays recorded histories (substitute, decompose with a child
// workflow, no_capability, schema mismatch, all started before the calibrated
// substitution rule; a substitution by that rule's evidence clause; and a
// substitution the configured model picked, version llm-judge 1)
// against the current workflow code: a nondeterministic change fails here before it breaks running
// workflows. Re-record with workflows/replay (go test -tags record; see its
// package comment),
// which names each run "replay-<file>"; child workflow IDs derive from the
// parent's, so the replay restores that ID.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 6 {
		t.Fatalf("found %d recorded histories in testdata, want 6", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			hist, err := client.HistoryFromJSON(r, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rep := worker.NewWorkflowReplayer()
			rep.RegisterWorkflow(NovelVerbWorkflow)
			err = rep.ReplayWorkflowHistoryWithOptions(nil, hist, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: "replay-" + filepath.Base(f), RunID: "replay"},
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
