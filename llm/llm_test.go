package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  Config
		path string
	}{
		{Config{}, ""},
		{Config{Provider: "none"}, ""},
		{Config{Provider: "openai", Model: "gpt-4o-mini", BaseURL: "http://127.0.0.1:8000/v1"}, ""},
		{Config{Provider: "ollama", Model: "llama3.1"}, ""},
		{Config{Provider: "claude", Model: "x"}, "llm.provider"},
		{Config{Provider: "openai"}, "llm.model"},
		{Config{Provider: "ollama", Model: "m", BaseURL: "localhost:11434"}, "llm.baseUrl"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if c.path == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.cfg, err)
			}
			continue
		}
		if !errors.Is(err, fault.ErrInvalid) || fault.Fields(err)[0].Path != c.path {
			t.Errorf("%+v: err %v, want path %s", c.cfg, err, c.path)
		}
	}
}

func TestNew(t *testing.T) {
	m, err := New(Config{Provider: "none"})
	if m != nil || err != nil {
		t.Fatalf("none: %v %v", m, err)
	}
	if _, err := New(Config{Provider: "openai"}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("invalid config: %v", err)
	}
	if m, err := New(Config{Provider: "ollama", Model: "llama3.1", BaseURL: "http://127.0.0.1:11434"}); err != nil || m == nil {
		t.Fatalf("ollama: %v", err)
	}
	if _, err := Decompose(context.Background(), nil, DecomposeRequest{Verb: "X"}); !errors.Is(err, ErrNoModel) || !errors.Is(err, fault.ErrUnavailable) {
		t.Fatalf("nil model: %v", err)
	}
}

func TestParseAndValidatePlan(t *testing.T) {
	inputs := []string{"budget", "currency"}
	cases := []struct {
		name   string
		answer string
		path   string // "" = valid
	}{
		{"valid with fences and prose", "Sure!\n```json\n" + `{"steps":[{"id":"s1","verb":"convert currency","inputs":{"amount":"$inputs.budget","to":"EUR"}},
		  {"id":"s2","verb":"SUMMARIZE","inputs":{"text":"$steps.s1.output.converted"}}]}` + "\n```", ""},
		{"cannot decompose", `{"steps":[],"reason":"no such capability"}`, ""},
		{"empty without reason", `{"steps":[]}`, "steps"},
		{"forward reference", `{"steps":[{"id":"a","verb":"X","inputs":{"v":"$steps.b.output"}},{"id":"b","verb":"Y"}]}`, "steps[0].inputs.v"},
		{"self reference", `{"steps":[{"id":"a","verb":"X","inputs":{"v":"$steps.a.output.x"}}]}`, "steps[0].inputs.v"},
		{"unknown step", `{"steps":[{"id":"a","verb":"X","inputs":{"v":"$steps.zz.output"}}]}`, "steps[0].inputs.v"},
		{"bad step ref form", `{"steps":[{"id":"a","verb":"X"},{"id":"b","verb":"Y","inputs":{"v":"$steps.a.result"}}]}`, "steps[1].inputs.v"},
		{"unknown input", `{"steps":[{"id":"a","verb":"X","inputs":{"v":"$inputs.salary"}}]}`, "steps[0].inputs.v"},
		{"duplicate id", `{"steps":[{"id":"a","verb":"X"},{"id":"a","verb":"Y"}]}`, "steps[1].id"},
		{"bad id", `{"steps":[{"id":"a.b","verb":"X"}]}`, "steps[0].id"},
		{"bad verb", `{"steps":[{"id":"a","verb":"9LIVES"}]}`, "steps[0].verb"},
		{"too many", `{"steps":[` + strings.TrimSuffix(strings.Repeat(`{"id":"s","verb":"X"},`, 11), ",") + `]}`, "steps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePlan(c.answer)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			err = ValidatePlan(p, inputs)
			if c.path == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidPlan) || !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("err = %v", err)
			}
			if fs := fault.Fields(err); len(fs) == 0 || fs[0].Path != c.path {
				t.Fatalf("fields = %v, want %s", fs, c.path)
			}
		})
	}
	p, _ := ParsePlan("```" + `{"steps":[{"id":"s1","verb":"convert currency"}]}` + "```")
	if p.Steps[0].Verb != "CONVERT_CURRENCY" {
		t.Fatalf("verb not normalized: %q", p.Steps[0].Verb)
	}
	for _, bad := range []string{"no json here", `{"steps": 3}`, `{"steps":[],"extra":1}`} {
		if _, err := ParsePlan(bad); !errors.Is(err, ErrInvalidPlan) {
			t.Errorf("ParsePlan(%q) = %v", bad, err)
		}
	}
}

func TestResolve(t *testing.T) {
	inputs := map[string]any{"budget": 100.0, "trip": map[string]any{"city": "Paris"}}
	outputs := map[string]any{"s1": map[string]any{"converted": 96.26, "legs": []any{map[string]any{"km": 12.0}}}}
	got, err := Resolve(map[string]any{
		"amount": "$steps.s1.output.converted", "km": "$steps.s1.output.legs.0.km", "all": "$steps.s1.output",
		"budget": "$inputs.budget", "city": "$inputs.trip.city", "to": "EUR", "n": 3.0, "literal$": "$notaref",
	}, inputs, outputs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"amount": 96.26, "km": 12.0, "all": outputs["s1"], "budget": 100.0, "city": "Paris", "to": "EUR", "n": 3.0, "literal$": "$notaref"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"$steps.s1.output.missing", "$steps.s2.output", "$steps.s1.output.legs.5", "$inputs.nope", "$steps.s1.output.converted.deeper"} {
		if _, err := Resolve(map[string]any{"x": bad}, inputs, outputs); err == nil || !strings.Contains(err.Error(), "inputs.x") {
			t.Errorf("Resolve(%q) = %v", bad, err)
		}
	}
}

func TestPromptListsKnownVerbsAndInputs(t *testing.T) {
	p := Prompt(DecomposeRequest{Verb: "PLAN_TRIP", Description: "plan a trip", Inputs: map[string]any{"budget": 100},
		KnownVerbs: []KnownVerb{{Verb: "CONVERT_CURRENCY", Description: "convert money", Inputs: []string{"amount", "from", "to"}}}})
	for _, want := range []string{"VERB: PLAN_TRIP", "DESCRIPTION: plan a trip", `INPUTS: {"budget":100}`, "- CONVERT_CURRENCY: convert money (inputs: amount, from, to)", "$steps.<earlier id>.output"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
}

// openAIServer is a scripted OpenAI-compatible server: it answers
// /v1/chat/completions with the next scripted content (or status).
type openAIServer struct {
	mu       sync.Mutex
	answers  []string
	status   int
	requests []map[string]any
	auth     []string
}

func (s *openAIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	if s.status != 0 {
		http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, s.status)
		return
	}
	content := s.answers[0]
	s.answers = s.answers[1:]
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": req["model"],
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
	})
}

func TestDecomposeThroughOpenAIClient(t *testing.T) {
	fake := &openAIServer{answers: []string{
		`{"steps":[{"id":"fx","verb":"CONVERT_CURRENCY","description":"to euros","inputs":{"amount":"$inputs.budget","from":"USD","to":"EUR"}}]}`,
		`{"steps":[{"id":"fx","verb":"CONVERT_CURRENCY","inputs":{"amount":"$inputs.salary"}}]}`,
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	model, err := New(Config{Provider: "openai", BaseURL: srv.URL + "/v1", Model: "planner-1", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	req := DecomposeRequest{Verb: "PLAN_TRIP_BUDGET", Inputs: map[string]any{"budget": 1000},
		KnownVerbs: []KnownVerb{{Verb: "CONVERT_CURRENCY", ToolID: "currency.convert", Description: "Convert money"}}}
	plan, err := Decompose(context.Background(), model, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 1 || plan.Steps[0].Inputs["amount"] != "$inputs.budget" {
		t.Fatalf("plan = %+v", plan)
	}
	sent := fake.requests[0]
	if sent["model"] != "planner-1" || fake.auth[0] != "Bearer sk-test" {
		t.Fatalf("request model %v auth %q", sent["model"], fake.auth[0])
	}
	if rf, _ := sent["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Fatalf("JSON mode not requested: %v", sent["response_format"])
	}
	msgs, _ := sent["messages"].([]any)
	if len(msgs) != 1 || !strings.Contains(jsonString(msgs[0]), "CONVERT_CURRENCY: Convert money") {
		t.Fatalf("prompt did not list the known verbs: %v", msgs)
	}

	// The second answer references an unknown input: invalid, not retried here.
	if _, err := Decompose(context.Background(), model, req); !IsInvalidPlan(err) {
		t.Fatalf("invalid plan: %v", err)
	}

	// A server error is a transient failure, not an invalid plan.
	fake.status = http.StatusServiceUnavailable
	_, err = Decompose(context.Background(), model, req)
	if err == nil || IsInvalidPlan(err) {
		t.Fatalf("server error: %v", err)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
