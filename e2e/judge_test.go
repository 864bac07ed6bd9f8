package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/toolsmith/toolsmith/llm"
	"github.com/toolsmith/toolsmith/workflows"
)

// scriptedModel is an OpenAI-compatible chat completions server: it
// answers the judge's prompt (ACTION: …) with Judgement and the planner's
// (VERB: …) with Plan, and counts both.
type scriptedModel struct {
	Judgement, Plan string
	mu              sync.Mutex
	judged, planned int
}

func (s *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var content string
	s.mu.Lock()
	switch {
	case strings.Contains(string(body), "ACTION: "):
		s.judged++
		content = s.Judgement
	case strings.Contains(string(body), "VERB: "):
		s.planned++
		content = s.Plan
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-e2e", "object": "chat.completion", "created": 1, "model": "judge-e2e",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

// withModel restarts the env's worker with an openai model on the
// scripted server.
func withModel(t *testing.T, e *env, m *scriptedModel) {
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	model, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "judge-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	e.stopWorker()
	e.deps.LLM = model
	e.startWorker()
}

// judgementInHistory reports whether the run's history records reason in a
// marker (the JudgeSubstitution local activity's result).
func judgementInHistory(t *testing.T, e *env, run verbRun, reason string) bool {
	it := e.client.GetWorkflowHistory(context.Background(), run.WorkflowID, run.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ev.GetMarkerRecordedEventAttributes().GetDetails() {
			for _, pl := range p.GetPayloads() {
				if strings.Contains(string(pl.GetData()), reason) {
					return true
				}
			}
		}
	}
	return false
}

func TestModelConfirmsSubstitution(t *testing.T) {
	e := newEnv(t)
	const reason = "it converts an amount of money between currencies"
	m := &scriptedModel{Judgement: `{"tool":"currency.convert","reason":"` + reason + `"}`}
	withModel(t, e, m)
	var run verbRun
	if code := e.post("/api/v1/verbs?wait=30s", convertBody, &run); code != http.StatusOK || run.Status != workflows.StatusCompleted {
		t.Fatalf("HTTP %d status %q error %q (%s)", code, run.Status, run.Error, run.ErrorType)
	}
	res := run.Result
	if j := res.Judge; res.Branch != workflows.BranchSubstitute || len(res.Tools) != 1 || res.Tools[0] != "currency.convert" ||
		j == nil || j.DecidedBy != workflows.DecidedByModel || j.Verdict != workflows.VerdictConfirm || j.Reason != reason {
		t.Fatalf("branch %q tools %v judge %+v (%s)", res.Branch, res.Tools, res.Judge, res.Reason)
	}
	if n := e.modules["currency"].Executions(""); n != 1 || m.judged != 1 || m.planned != 0 {
		t.Fatalf("currency ran %d times, model judged %d and planned %d times; want 1, 1, 0", n, m.judged, m.planned)
	}
	if !judgementInHistory(t, e, run, reason) {
		t.Fatal("the model's judgement is not in the run's history")
	}
}

func TestModelVetoesSubstitution(t *testing.T) {
	e := newEnv(t)
	const reason = "the caller wants the bank's own rate, which no candidate gives"
	m := &scriptedModel{Judgement: `{"tool":"none","reason":"` + reason + `"}`,
		Plan: `{"steps":[],"reason":"no known verb gives a bank's rate"}`}
	withModel(t, e, m)
	var run verbRun
	if code := e.post("/api/v1/verbs?wait=30s", convertBody, &run); code != http.StatusOK || run.Status != workflows.StatusCompleted {
		t.Fatalf("HTTP %d status %q error %q (%s)", code, run.Status, run.Error, run.ErrorType)
	}
	res := run.Result
	if j := res.Judge; res.Branch != workflows.BranchNoCapability || len(res.Tools) != 0 ||
		j == nil || j.DecidedBy != workflows.DecidedByModel || j.Verdict != workflows.VerdictVeto || j.RulePick != "currency.convert" {
		t.Fatalf("branch %q tools %v judge %+v (%s)", res.Branch, res.Tools, res.Judge, res.Reason)
	}
	if n := e.modules["currency"].Executions(""); n != 0 || m.judged != 1 || m.planned != 1 {
		t.Fatalf("currency ran %d times, model judged %d and planned %d times; want 0, 1, 1", n, m.judged, m.planned)
	}
	if !judgementInHistory(t, e, run, reason) {
		t.Fatal("the model's judgement is not in the run's history")
	}
}
