package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	apiairlock "github.com/toolsmith/toolsmith/api/airlock"
	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	apibuilds "github.com/toolsmith/toolsmith/api/builds"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/api/tools"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/build"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/llm"
	"github.com/toolsmith/toolsmith/workflows"
)

// buildModel is an OpenAI-compatible chat completions server scripted for
// builds: the planner (VERB: …) gets an empty plan, the judge (ACTION: …)
// finds nothing, and each build prompt (VERB TO BUILD: …) gets the next of
// Programs, reporting Tokens per answer, after Delay.
type buildModel struct {
	Programs []string
	Tokens   int
	Delay    time.Duration
	mu       sync.Mutex
	built    int
	prompts  []string
}

func (m *buildModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	prompt := ""
	if len(req.Messages) > 0 {
		prompt = req.Messages[0].Content
	}
	content, tokens := `{}`, 10
	m.mu.Lock()
	switch {
	case strings.Contains(prompt, "VERB TO BUILD: "):
		content, tokens = m.Programs[min(m.built, len(m.Programs)-1)], m.Tokens
		m.built++
		m.prompts = append(m.prompts, prompt)
	case strings.Contains(prompt, "ACTION: "):
		content = `{"tool": "none", "reason": "nothing in the catalogue converts numerals"}`
	case strings.Contains(prompt, "VERB: "):
		content = `{"steps": [], "reason": "no known verb converts numerals"}`
	}
	delay := m.Delay
	m.mu.Unlock()
	if delay > 0 && strings.Contains(prompt, "VERB TO BUILD: ") {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-build", "object": "chat.completion", "created": 1, "model": "build-e2e",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": tokens / 2, "completion_tokens": tokens - tokens/2, "total_tokens": tokens},
	})
}

func (m *buildModel) builds() (int, []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.built, append([]string(nil), m.prompts...)
}

// buildEnv is an env whose worker builds with the scripted model (nil: no
// model), registers approved programs in an airlock directory and runs
// them; the API serves verbs, gaps, tools, the airlock's review routes and
// the build routes.
func buildEnv(t *testing.T, m *buildModel, budget int) *env {
	t.Helper()
	e := newEnv(t)
	files := &airlock.Files{Root: filepath.Join(t.TempDir(), "airlock")}
	e.stopWorker()
	b := &activities.Build{TokenBudget: budget, WorkDir: t.TempDir(), Files: files,
		Registrar: airlock.RegistryRegistrar{Registry: e.reg}, Gaps: e.store, TestTimeout: 3 * time.Minute}
	if m != nil {
		srv := httptest.NewServer(m)
		t.Cleanup(srv.Close)
		model, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "build-e2e"})
		if err != nil {
			t.Fatal(err)
		}
		e.deps.LLM, b.Model, b.ModelName = model, model, "openai/build-e2e"
	}
	e.deps.Build = b
	e.deps.Wrapped = &airlock.Runtime{Files: files, Executor: &airlock.Executor{Ledger: &airlock.MemoryLedger{}}}
	e.startWorker()
	e.serve(buildFeatures(e)...)
	return e
}

// buildFeatures are the routes a build needs: verbs, gaps, tools, the
// airlock's review routes and the build routes.
func buildFeatures(e *env) []httpx.Mounter {
	return []httpx.Mounter{verbs.New(e.client, e.store, verbs.Config{TaskQueue: e.queue, Namespace: server.Namespace()}),
		apianalytics.New(e.store, nil), tools.New(e.reg),
		apiairlock.New(review.New(e.client, e.store, review.Config{TaskQueue: e.queue, Namespace: server.Namespace()})),
		apibuilds.New(&fulfil.Builds{Temporal: e.client, Gaps: e.store, TaskQueue: e.queue})}
}

// roman returns a model answer: a program for ROMAN_NUMERAL whose body is
// body, with the cases of the script.
func roman(t *testing.T, body string) string {
	t.Helper()
	p := build.Program{
		Tool: "to_roman", Description: "Writes a whole number from 1 to 3999 as a Roman numeral.",
		Source: "package main\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"strings\"\n)\n\n" +
			"func run(ctx context.Context, in map[string]any, web Web) (any, error) {\n" +
			"\tf, ok := in[\"number\"].(float64)\n\tif !ok || f < 1 || f > 3999 || f != float64(int(f)) {\n" +
			"\t\treturn nil, errors.New(\"number must be a whole number from 1 to 3999\")\n\t}\n\tn := int(f)\n\tvar b strings.Builder\n" +
			body + "\treturn map[string]any{\"roman\": b.String()}, nil\n}\n",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"number":{"type":"integer","minimum":1,"maximum":3999}},"required":["number"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"roman":{"type":"string"}}}`),
		Tests: []build.TestCase{
			{Name: "year", Input: map[string]any{"number": 1994}, Want: json.RawMessage(`{"roman":"MCMXCIV"}`)},
			{Name: "four", Input: map[string]any{"number": 4}, Want: json.RawMessage(`{"roman":"IV"}`)},
			{Name: "zero", Input: map[string]any{"number": 0}, WantError: "from 1 to 3999"},
		},
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	// romanBroken does not compile (an undefined name).
	romanBroken = "\tfor n > 0 {\n\t\tb.WriteString(numeral(n))\n\t}\n"
	// romanAdditive compiles but writes 4 as IIII.
	romanAdditive = "\tfor _, s := range []struct{ v int; r string }{{1000, \"M\"}, {500, \"D\"}, {100, \"C\"}, {50, \"L\"}, {10, \"X\"}, {5, \"V\"}, {1, \"I\"}} {\n" +
		"\t\tfor n >= s.v {\n\t\t\tb.WriteString(s.r)\n\t\t\tn -= s.v\n\t\t}\n\t}\n"
	// romanRight is subtractive.
	romanRight = "\tfor _, s := range []struct{ v int; r string }{{1000, \"M\"}, {900, \"CM\"}, {500, \"D\"}, {400, \"CD\"}, {100, \"C\"}, {90, \"XC\"}, {50, \"L\"}, {40, \"XL\"}, {10, \"X\"}, {9, \"IX\"}, {5, \"V\"}, {4, \"IV\"}, {1, \"I\"}} {\n" +
		"\t\tfor n >= s.v {\n\t\t\tb.WriteString(s.r)\n\t\t\tn -= s.v\n\t\t}\n\t}\n"
)

type buildView struct {
	ID    string               `json:"id"`
	State workflows.BuildState `json:"state"`
}

// waitBuild polls the build's status route until its status is one of want.
func waitBuild(t *testing.T, e *env, id string, within time.Duration, want ...string) workflows.BuildState {
	t.Helper()
	var v buildView
	eventually(t, within, func() error {
		if code := e.do(http.MethodGet, "/api/v1/builds/"+id, nil, nil, &v); code != http.StatusOK {
			return fmt.Errorf("GET build: HTTP %d", code)
		}
		for _, s := range want {
			if v.State.Status == s {
				return nil
			}
		}
		return fmt.Errorf("build status %q, want %v (rounds %d)", v.State.Status, want, len(v.State.Rounds))
	})
	return v.State
}

// TestBuildFromScratch: nothing fits ROMAN_NUMERAL and the planner finds no
// plan, so the run starts a build. The model's first program does not
// compile, its second fails a test, its third passes; each problem went
// back to the model. The build parks on the airlock's pending-review
// routes; approval registers the tool, closes the gap, and the tool runs.
func TestBuildFromScratch(t *testing.T) {
	verb := "ROMAN_NUMERAL" // a verb of its own: build IDs are per verb, and the tests share one server
	m := &buildModel{Programs: []string{roman(t, romanBroken), roman(t, romanAdditive), roman(t, romanRight)}, Tokens: 900}
	e := buildEnv(t, m, 0)
	var run verbRun
	code := e.post("/api/v1/verbs?wait=60s", map[string]any{
		"verb": verb, "description": "write a whole number as a roman numeral", "inputs": map[string]any{"number": 1994},
	}, &run)
	if code != http.StatusOK || run.Result.Branch != workflows.BranchNoCapability || run.Result.Build == nil || !run.Result.Build.Started {
		t.Fatalf("HTTP %d status %s branch %s build %+v reason %q", code, run.Status, run.Result.Branch, run.Result.Build, run.Result.Reason)
	}
	id := run.Result.Build.WorkflowID
	if id != workflows.BuildWorkflowID(verb) || !strings.Contains(run.Result.Reason, "building a tool") {
		t.Fatalf("build ref %+v reason %q", run.Result.Build, run.Result.Reason)
	}

	st := waitBuild(t, e, id, 4*time.Minute, workflows.BuildPending, workflows.BuildFailed)
	if st.Status != workflows.BuildPending || len(st.Rounds) != 3 {
		t.Fatalf("build: %s after %d rounds: %+v", st.Status, len(st.Rounds), st.Result)
	}
	if st.Rounds[0].Stage != "build" || st.Rounds[1].Stage != "test" || st.Rounds[2].Stage != "" {
		t.Fatalf("round stages %q %q %q", st.Rounds[0].Stage, st.Rounds[1].Stage, st.Rounds[2].Stage)
	}
	if !strings.Contains(st.Rounds[1].Summary, "TestCases/year") || st.Model != "openai/build-e2e" || st.PromptVersion != build.PromptVersion || st.TokensUsed != 2700 {
		t.Fatalf("rounds %+v model %q prompt %q tokens %d", st.Rounds, st.Model, st.PromptVersion, st.TokensUsed)
	}
	n, prompts := m.builds()
	if n != 3 || !strings.Contains(prompts[1], "undefined: numeral") || !strings.Contains(prompts[2], "want {\"roman\":\"MCMXCIV\"}") {
		t.Fatalf("the model was not shown the problems (%d prompts):\n%s", n, strings.Join(prompts, "\n-----\n"))
	}

	// The review: listed with the pending specs, with the code and hosts.
	var pending struct {
		Pending []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"pending"`
	}
	if code := e.do(http.MethodGet, "/api/v1/tools/pending", nil, nil, &pending); code != http.StatusOK || len(pending.Pending) != 1 || pending.Pending[0].ID != id {
		t.Fatalf("pending: HTTP %d %+v", code, pending)
	}
	var review struct {
		State workflows.AirlockState `json:"state"`
	}
	if code := e.do(http.MethodGet, "/api/v1/tools/pending/"+id, nil, nil, &review); code != http.StatusOK ||
		review.State.Status != workflows.AirlockPending || review.State.Build == nil || review.State.Build.Program == nil ||
		!strings.Contains(review.State.Build.Program.Source, `"CM"`) || len(review.State.Review.Operations) != 1 {
		t.Fatalf("review: HTTP %d %+v", code, review.State)
	}

	// While the build waits for review, its gap says so.
	eventually(t, 30*time.Second, func() error {
		if r := gapReason(t, e, verb); !strings.HasPrefix(r, "a built tool awaits review") || !strings.Contains(r, id) {
			return fmt.Errorf("gap reason %q", r)
		}
		return nil
	})

	// Approval registers the tool under the policy and closes the gap.
	var decided struct {
		Outcome workflows.AirlockOutcome `json:"outcome"`
	}
	code = e.post("/api/v1/tools/pending/"+id+"/approve?wait=3m", map[string]any{"policy": map[string]any{"rateLimitPerMinute": 30}}, &decided)
	toolID := activities.BuiltSlug(verb) + ".to_roman"
	if code != http.StatusOK || len(decided.Outcome.ToolIDs) != 1 || decided.Outcome.ToolIDs[0] != toolID {
		t.Fatalf("approve: HTTP %d %+v", code, decided)
	}
	if code := e.post("/api/v1/tools/pending/"+id+"/approve", map[string]any{"policy": map[string]any{}}, nil); code != http.StatusConflict && code != http.StatusNotFound {
		t.Fatalf("second approval: HTTP %d", code)
	}
	final := waitBuild(t, e, id, time.Minute, workflows.BuildRegistered)
	if final.Result == nil || !final.Result.ClosedGap || final.Result.ToolID != toolID {
		t.Fatalf("result: %+v", final.Result)
	}
	var closed struct {
		Gaps []graph.Gap `json:"gaps"`
	}
	if code := e.do(http.MethodGet, "/api/v1/gaps?status=closed", nil, nil, &closed); code != http.StatusOK || len(closed.Gaps) != 1 || closed.Gaps[0].ClosedBy != toolID || closed.Gaps[0].Reason != "" {
		t.Fatalf("closed gaps: HTTP %d %+v", code, closed.Gaps)
	}

	// Execution: the built program runs as the approved binary.
	var exec struct {
		verbs.Run
		Result activities.ExecuteOutput `json:"result"`
	}
	if code := e.post("/api/v1/tools/"+toolID+"/execute", map[string]any{"inputs": map[string]any{"number": 2026}}, &exec); code != http.StatusOK || exec.Status != workflows.StatusCompleted {
		t.Fatalf("execute: HTTP %d status %s error %q", code, exec.Status, exec.Error)
	}
	if got, _ := exec.Result.Output.(map[string]any); got["roman"] != "MMXXVI" {
		t.Fatalf("output %v, want MMXXVI", exec.Result.Output)
	}
}

// recordGap makes verb an open gap, as an unfulfilled run would.
func recordGap(t *testing.T, e *env, verb string) {
	t.Helper()
	if _, err := e.store.RecordGap(context.Background(), graph.GapEvent{Verb: verb, Description: "write a whole number as a roman numeral"}); err != nil {
		t.Fatal(err)
	}
}

// gapReason returns the reason the open gap of verb keeps.
func gapReason(t *testing.T, e *env, verb string) string {
	t.Helper()
	var open struct {
		Gaps []graph.Gap `json:"gaps"`
	}
	if code := e.do(http.MethodGet, "/api/v1/gaps?status=open", nil, nil, &open); code != http.StatusOK {
		t.Fatalf("gaps: HTTP %d", code)
	}
	for _, g := range open.Gaps {
		if g.Verb == verb {
			return g.Reason
		}
	}
	t.Fatalf("no open gap %s in %+v", verb, open.Gaps)
	return ""
}

// TestBuildOnDemandEndsOnTheBudget: a build started for a gap on demand
// refuses a program that imports os/exec before building it, and stops when the model's answers spend the configured token budget, and
// the gap keeps the reason.
func TestBuildOnDemandEndsOnTheBudget(t *testing.T) {
	verb := "ROMAN_NUMERAL_BUDGETED" // a verb of its own: build IDs are per verb, and the tests share one server
	// The first program imports os/exec: refused before it is built.
	execing := strings.Replace(roman(t, romanRight), `\t\"errors\"\n`, `\t\"errors\"\n\t\"os/exec\"\n`, 1)
	execing = strings.Replace(execing, `n := int(f)\n`, `n := int(f)\n\t_, _ = exec.Command(\"id\").Output()\n`, 1)
	m := &buildModel{Programs: []string{execing, roman(t, romanRight)}, Tokens: 1000}
	e := buildEnv(t, m, 1500)
	if code := e.post("/api/v1/gaps/NEVER_ASKED/build", nil, nil); code != http.StatusNotFound {
		t.Fatalf("build without a gap: HTTP %d, want 404", code)
	}
	recordGap(t, e, verb)
	if code := e.post("/api/v1/gaps/"+verb+"/build", map[string]any{"rounds": 9}, nil); code != http.StatusUnprocessableEntity {
		t.Fatalf("9 rounds: HTTP %d, want 422 naming the field", code)
	}
	var started struct {
		ID        string `json:"id"`
		StatusURL string `json:"statusUrl"`
	}
	if code := e.post("/api/v1/gaps/"+verb+"/build", nil, &started); code != http.StatusAccepted || started.StatusURL != "/api/v1/builds/"+workflows.BuildWorkflowID(verb) {
		t.Fatalf("start: HTTP %d %+v", code, started)
	}
	st := waitBuild(t, e, started.ID, 2*time.Minute, workflows.BuildFailed, workflows.BuildPending)
	if st.Status != workflows.BuildFailed || st.Result == nil || !strings.Contains(st.Result.Reason, "token budget of 1500 is spent") || len(st.Rounds) != 2 {
		t.Fatalf("build: %s %+v rounds %d", st.Status, st.Result, len(st.Rounds))
	}
	// The answer that spent the budget is a round of its own, counted.
	if r := st.Rounds[1]; r.Round != 2 || r.Stage != workflows.StageBudget || r.Tokens != 1000 || st.TokensUsed != 2000 ||
		st.Model != "openai/build-e2e" || st.Result.Rounds != 2 || st.Result.Tokens != 2000 {
		t.Fatalf("spent round %+v tokens %d model %q result %+v", r, st.TokensUsed, st.Model, st.Result)
	}
	if r := st.Rounds[0]; r.Stage != "refused" || r.Report.Built || !strings.Contains(r.Summary, `import "os/exec" is not allowed`) {
		t.Fatalf("round 1: %+v", r)
	}
	eventually(t, 30*time.Second, func() error {
		if r := gapReason(t, e, verb); !strings.Contains(r, "token budget") {
			return fmt.Errorf("gap reason %q", r)
		}
		return nil
	})
}

// TestBuildModelTimeout: a model slower than the round's timeout ends the
// build, after the retry, with a reason that says so; while it runs a
// second build of the gap is refused with 409.
func TestBuildModelTimeout(t *testing.T) {
	verb := "ROMAN_NUMERAL_SLOWLY" // a verb of its own: build IDs are per verb, and the tests share one server
	m := &buildModel{Programs: []string{roman(t, romanRight)}, Tokens: 100, Delay: 30 * time.Second}
	e := buildEnv(t, m, 0)
	recordGap(t, e, verb)
	ctx := context.Background()
	run, err := e.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.BuildWorkflowID(verb), TaskQueue: e.queue},
		workflows.BuildToolWorkflow, workflows.BuildInput{Verb: verb, Options: workflows.BuildOptions{ModelTimeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if code := e.post("/api/v1/gaps/"+verb+"/build", nil, nil); code != http.StatusConflict {
		t.Fatalf("second build while one runs: HTTP %d, want 409", code)
	}
	// The build answers its queries once its first workflow task ran (on
	// a loaded machine that can take seconds); the decisions below query it.
	eventually(t, 30*time.Second, func() error {
		if code := e.do(http.MethodGet, "/api/v1/builds/"+workflows.BuildWorkflowID(verb), nil, nil, nil); code != http.StatusOK {
			return fmt.Errorf("GET the build: HTTP %d", code)
		}
		return nil
	})
	// A decision while the model is still writing is refused with 409,
	// saying so.
	for _, d := range []struct {
		path string
		body map[string]any
	}{{"approve", map[string]any{"policy": map[string]any{}}}, {"reject", map[string]any{"reason": "too soon"}}} {
		body, _ := json.Marshal(d.body)
		req, _ := http.NewRequest(http.MethodPost, e.api.URL+"/api/v1/tools/pending/"+workflows.BuildWorkflowID(verb)+"/"+d.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.admin)
		resp, err := e.api.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		refused, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(refused), "still writing") {
			t.Fatalf("%s while writing: HTTP %d %s, want 409 saying the build is still writing", d.path, resp.StatusCode, refused)
		}
	}
	var res workflows.BuildResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != workflows.BuildFailed || !strings.Contains(res.Reason, "did not answer within 2s") {
		t.Fatalf("result: %+v", res)
	}
}

// TestBuildWithoutAModel: the build says it needs a model, and the gap
// stays open with that reason.
func TestBuildWithoutAModel(t *testing.T) {
	verb := "ROMAN_NUMERAL_UNAIDED" // a verb of its own: build IDs are per verb, and the tests share one server
	e := buildEnv(t, nil, 0)
	recordGap(t, e, verb)
	var started struct {
		ID string `json:"id"`
	}
	if code := e.post("/api/v1/gaps/"+verb+"/build", nil, &started); code != http.StatusAccepted {
		t.Fatalf("start: HTTP %d", code)
	}
	st := waitBuild(t, e, started.ID, time.Minute, workflows.BuildNeedsModel)
	// Said once, without sentinel text.
	want := workflows.ReasonNeedsModel + ": " + build.NoModelHint
	if st.Result == nil || st.Result.Reason != want {
		t.Fatalf("result: %+v, want the reason %q", st.Result, want)
	}
	eventually(t, 30*time.Second, func() error {
		if r := gapReason(t, e, verb); r != want {
			return errors.New("gap reason " + r)
		}
		return nil
	})
}

// TestBuildRejectedKeepsTheReason: a build asked for on demand with an
// expected output shows it to the model; the reviewer rejects the program
// that passed, and the gap stays open with the reviewer's reason.
func TestBuildRejectedKeepsTheReason(t *testing.T) {
	verb := "ROMAN_NUMERAL_REJECTED" // a verb of its own: build IDs are per verb, and the tests share one server
	m := &buildModel{Programs: []string{roman(t, romanRight)}, Tokens: 100}
	e := buildEnv(t, m, 0)
	recordGap(t, e, verb)
	var started struct {
		ID string `json:"id"`
	}
	if code := e.post("/api/v1/gaps/"+verb+"/build", map[string]any{"expected": `{"roman": "MCMXCIV"} for 1994`}, &started); code != http.StatusAccepted {
		t.Fatalf("start: HTTP %d", code)
	}
	if st := waitBuild(t, e, started.ID, 2*time.Minute, workflows.BuildPending, workflows.BuildFailed); st.Status != workflows.BuildPending || len(st.Rounds) != 1 {
		t.Fatalf("build %s: %+v", st.Status, st.Result)
	}
	if _, prompts := m.builds(); !strings.Contains(prompts[0], `EXPECTED OUTPUT: {"roman": "MCMXCIV"} for 1994`) {
		t.Fatalf("the model was not shown the expected output:\n%s", prompts[0])
	}
	if code := e.post("/api/v1/tools/pending/"+started.ID+"/reject", map[string]any{"reason": " "}, nil); code != http.StatusUnprocessableEntity {
		t.Fatalf("reject without a reason: HTTP %d", code)
	}
	if code := e.post("/api/v1/tools/pending/"+started.ID+"/reject?wait=1m", map[string]any{"reason": "a numeral library is on its way"}, nil); code != http.StatusOK {
		t.Fatalf("reject: HTTP %d", code)
	}
	st := waitBuild(t, e, started.ID, time.Minute, workflows.BuildRejected)
	if st.Result == nil || !strings.Contains(st.Result.Reason, "a numeral library is on its way") {
		t.Fatalf("result: %+v", st.Result)
	}
	// The decided list shows the build with the reviewer's reason.
	eventually(t, 30*time.Second, func() error {
		var decided struct {
			Reviews []struct {
				ID, Title, Status, Reason string
			} `json:"reviews"`
		}
		if code := e.do(http.MethodGet, "/api/v1/tools/reviews", nil, nil, &decided); code != http.StatusOK {
			return fmt.Errorf("decided: HTTP %d", code)
		}
		for _, r := range decided.Reviews {
			if r.ID == started.ID && r.Title == "Built tool for "+verb && r.Status == workflows.BuildRejected && strings.Contains(r.Reason, "on its way") {
				return nil
			}
		}
		return fmt.Errorf("decided: %+v", decided.Reviews)
	})
	eventually(t, 30*time.Second, func() error {
		if r := gapReason(t, e, verb); !strings.Contains(r, "rejected by") || !strings.Contains(r, "a numeral library is on its way") {
			return errors.New("gap reason " + r)
		}
		return nil
	})
}
