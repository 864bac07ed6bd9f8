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
)

// TestDevRunsOnlyWhatItServes walks the demo catalogue in the make-run
// shape (dev wiring, the demo catalogue and modules, USE-Lite): asking each
// tool's own verb and description, whatever the run picks (substitute, or
// needs_inputs naming it) has a module dev serves. The catalogue describes
// many more modules than dev serves, for search; a tool dev cannot run is
// never substituted (SUMMARIZE_TEXT and research.summarize_page).
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
		code, env := in.call(t, http.MethodPost, "/api/v1/verbs?wait=60s", map[string]any{
			"verb": m.Verb, "description": m.ShortDescription, "options": map[string]any{"dryRun": true},
		}, "Authorization", in.auth)
		var run struct {
			Result struct {
				Branch string   `json:"branch"`
				Reason string   `json:"reason"`
				Tool   string   `json:"tool"`
				Tools  []string `json:"tools"`
			} `json:"result"`
		}
		if code != http.StatusOK || json.Unmarshal(env.Data, &run) != nil {
			t.Fatalf("%s: %d %s", m.Verb, code, env.Data)
		}
		r := run.Result
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
}
