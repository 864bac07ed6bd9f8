package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/retrieval"
)

// TestDevRunsOnlyWhatItServes walks the demo catalogue in the make-run
// shape (dev wiring, the demo catalogue and modules, USE-Lite): asking each
// tool's own verb and description, whatever the run picks (substitute, or
// needs_inputs naming it) has a module dev serves. The catalogue describes
// many more modules than dev serves, for search; a tool dev cannot run is
// never substituted (SUMMARIZE_TEXT and research.summarize_page), and no
// served tool is substituted for it.
func TestDevRunsOnlyWhatItServes(t *testing.T) {
	modelDir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if modelDir == "" {
		t.Skip("set TOOLSMITH_MODEL_DIR (USE-Lite weights) to run the decision as make run does")
	}
	mans, err := demo.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	// One verb per catalogue tool: more than a minute's default rate.
	in := startDev(t, t.TempDir(), "--embedder", "use-lite", "--model-dir", modelDir, "--rate-verbs", "-1")
	in.waitCatalogueSettled(t)
	served := demomodule.Names()
	// A tool without a module runs on the module its id names.
	module := map[string]string{}
	for _, m := range mans {
		module[m.ToolID] = m.Module
		if m.Module == "" {
			module[m.ToolID], _, _ = modules.Split(m.ToolID)
		}
	}
	picked := 0
	for _, m := range mans {
		r := in.dryRunVerb(t, m.Verb, m.ShortDescription, nil)
		var ran string
		switch {
		case r.Branch == "needs_inputs":
			ran = r.Tool
		case r.Branch == "substitute" && len(r.Tools) > 0:
			ran = r.Tools[0]
		case r.Branch == "substitute":
			// A dry run that failed on its inputs names the tool in its reason.
			ran, _, _ = strings.Cut(strings.TrimPrefix(r.Reason, m.Verb+" matches "), " ")
		default:
			continue
		}
		picked++
		if mod, ok := module[ran]; ok && !slices.Contains(served, mod) {
			t.Errorf("%s %q: picked %s (module %s), which dev does not serve (%v): %s", m.Verb, m.ShortDescription, ran, mod, served, r.Reason)
		}
		if m.ToolID == "research.summarize_page" && strings.HasPrefix(ran, "research.") {
			t.Errorf("SUMMARIZE_TEXT substituted %s", ran)
		}
	}
	if picked == 0 {
		t.Fatal("no verb of the catalogue picked a tool: the walk checked nothing")
	}
	t.Logf("%d of %d verbs picked a tool dev serves", picked, len(mans))

	// A served tool is never read in place of a better match dev does not
	// serve: asked the verb and description of a tool dev cannot run, with
	// inputs that fill a served text tool, no run substitutes past a first
	// candidate because dev does not serve it (it had run text.stats, word
	// counts, for a summary). A served tool that ranks first on its own,
	// or one read past a first the inputs do not fill, is the rule's to
	// judge as ever.
	text := map[string]any{"text": "Toolsmith finds a tool for a verb, or builds one. It runs it in a sandbox."}
	asked := 0
	for _, m := range mans {
		if slices.Contains(served, module[m.ToolID]) {
			continue
		}
		asked++
		if r := in.dryRunVerb(t, m.Verb, m.ShortDescription, text); r.Branch == "substitute" && strings.Contains(r.Reason, "ranks first but could not: "+retrieval.UnavailableReason) {
			t.Errorf("%s %q with a text: substituted %v in place of a tool dev does not serve: %s", m.Verb, m.ShortDescription, r.Tools, r.Reason)
		}
	}
	if asked == 0 {
		t.Fatal("every demo tool is served: the walk checked nothing")
	}
	// As a planner asks it: a summary of a text is no word count, though
	// the summarizer dev does not serve ranks first and the text fills the
	// counter.
	for _, c := range []struct {
		verb, description string
		inputs            map[string]any
	}{
		{"SUMMARIZE_TEXT", "summarize this text in two sentences", text},
	} {
		if r := in.dryRunVerb(t, c.verb, c.description, c.inputs); r.Branch == "substitute" {
			t.Errorf("%s %q: substituted %v: %s", c.verb, c.description, r.Tools, r.Reason)
		}
	}
}

// verbRun is what the walks read of a verb run's result.
type verbRun struct {
	Branch string   `json:"branch"`
	Reason string   `json:"reason"`
	Tool   string   `json:"tool"`
	Tools  []string `json:"tools"`
}

// dryRunVerb asks dev for a dry run of verb with inputs (none when nil), as
// the owner, and returns its result.
func (in *instance) dryRunVerb(t *testing.T, verb, description string, inputs map[string]any) verbRun {
	t.Helper()
	body := map[string]any{"verb": verb, "description": description, "options": map[string]any{"dryRun": true}}
	if inputs != nil {
		body["inputs"] = inputs
	}
	code, env := in.call(t, http.MethodPost, "/api/v1/verbs?wait=60s", body, "Authorization", in.auth)
	var run struct {
		Result verbRun `json:"result"`
	}
	if code != http.StatusOK || json.Unmarshal(env.Data, &run) != nil {
		t.Fatalf("%s: %d %s", verb, code, env.Data)
	}
	return run.Result
}
