package activities

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/llm"
)

// chatServer is a scripted OpenAI-compatible server: it answers
// /v1/chat/completions with the next scripted content, or with the
// scripted status.
type chatServer struct {
	mu      sync.Mutex
	answers []string
	status  int
	prompts []string
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content any `json:"content"`
		} `json:"messages"`
		ResponseFormat struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	_ = json.Unmarshal(body, &req)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range req.Messages {
		b, _ := json.Marshal(m.Content)
		s.prompts = append(s.prompts, string(b))
	}
	if s.status != 0 {
		http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, s.status)
		return
	}
	if req.ResponseFormat.Type != "json_object" || len(s.answers) == 0 {
		http.Error(w, `{"error":{"message":"unscripted","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	content := s.answers[0]
	s.answers = s.answers[1:]
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
}

func TestJudgeSubstitutionThroughOpenAIClient(t *testing.T) {
	fake := &chatServer{answers: []string{
		`{"tool": "currency.convert", "reason": "it converts an amount between currencies"}`,
		`{"tool": "none", "reason": "neither converts money"}`,
		`{"tool": "bank.transfer", "reason": "it moves money"}`,
		`sure, currency.convert`,
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	model, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "judge-1"})
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(&LLM{Model: model})
	in := JudgeInput{Verb: "EXCHANGE_MONEY", Description: "dollars into yen", InputNames: []string{"amount", "from", "to"},
		Candidates: []llm.JudgeCandidate{
			{ToolID: "currency.convert", Verb: "CONVERT_CURRENCY", Description: "Converts an amount of money", Required: []string{"amount", "from", "to"}},
			{ToolID: "currency.rates", Verb: "GET_EXCHANGE_RATES", Description: "Lists exchange rates"},
		}}
	judge := func() (llm.Judgement, error) {
		v, err := env.ExecuteActivity((&LLM{}).JudgeSubstitution, in)
		if err != nil {
			return llm.Judgement{}, err
		}
		var j llm.Judgement
		return j, v.Get(&j)
	}

	j, err := judge()
	if err != nil || j.Tool != "currency.convert" || j.Reason != "it converts an amount between currencies" {
		t.Fatalf("confirm: %+v, %v", j, err)
	}
	if p := fake.prompts[0]; !strings.Contains(p, "ACTION: EXCHANGE_MONEY") || !strings.Contains(p, "currency.convert (CONVERT_CURRENCY)") ||
		!strings.Contains(p, "required: amount, from, to") || !strings.Contains(p, "INPUTS: amount, from, to") {
		t.Fatalf("prompt lacks the verb, the candidates or the inputs: %s", p)
	}
	if j, err := judge(); err != nil || j.Tool != llm.JudgeNone {
		t.Fatalf("none: %+v, %v", j, err)
	}
	// A tool it was not offered, and prose: invalid, not retried.
	for _, what := range []string{"a tool not offered", "prose"} {
		_, err := judge()
		if got := appError(t, err); got.Type() != ErrTypeInvalidJudgement || !got.NonRetryable() {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// A server error is transient: retried by the workflow's policy.
	fake.status = http.StatusServiceUnavailable
	_, err = judge()
	if got := appError(t, err); got.NonRetryable() || got.Type() == ErrTypeInvalidJudgement {
		t.Fatalf("server error: %v, want a retryable failure", err)
	}
	// No model: a non-retryable LLMUnavailable at once.
	env2 := s.NewTestActivityEnvironment()
	env2.RegisterActivity(&LLM{})
	_, err = env2.ExecuteActivity((&LLM{}).JudgeSubstitution, in)
	if got := appError(t, err); got.Type() != ErrTypeLLMUnavailable || !got.NonRetryable() {
		t.Fatalf("no model: %v", err)
	}
}
