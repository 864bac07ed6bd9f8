package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// MaxAnswerTokens bounds one answer: a program with its tests fits well
// within it.
const MaxAnswerTokens = 8192

// PromptVersion names the prompt below; the review shows it beside the
// model, so a reviewer knows what the model was asked.
const PromptVersion = "build-v1"

// NoModelHint says what is missing when no model is configured, and how
// to configure one.
const NoModelHint = "no language model is configured (set --llm-provider)"

// Errors of Write.
var (
	// ErrNoModel: no model is configured. It matches fault.ErrUnavailable.
	ErrNoModel = fmt.Errorf("build needs a model: %s: %w", NoModelHint, fault.ErrUnavailable)
	// ErrBudget: the build's token budget is spent.
	ErrBudget = errors.New("build: token budget exceeded")
	// ErrInvalidAnswer: the model's answer is not a program.
	ErrInvalidAnswer = errors.New("build: the model's answer is not a program")
)

// Request is what the model is asked to build.
type Request struct {
	Verb        string         `json:"verb"`
	Description string         `json:"description,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
	// Expected describes the output the caller expects.
	Expected string `json:"expected,omitempty"`
	// Closest are the catalogue's nearest tools, which did not fit.
	Closest  []string `json:"closest,omitempty"`
	Entities []string `json:"entities,omitempty"`
}

// Attempt is an earlier round the model is shown: its program and what
// building and testing it said.
type Attempt struct {
	Source  string `json:"source"`
	Problem string `json:"problem"`
}

// Prompt builds the prompt of one round.
func Prompt(r Request, previous *Attempt) string {
	var b strings.Builder
	b.WriteString("You write tools for Toolsmith. Write ONE small Go program that performs the action below.\n\n")
	fmt.Fprintf(&b, "VERB TO BUILD: %s\n", r.Verb)
	if r.Description != "" {
		fmt.Fprintf(&b, "DESCRIPTION: %s\n", clip(r.Description, 1000))
	}
	if len(r.Inputs) > 0 {
		in, _ := json.Marshal(r.Inputs)
		fmt.Fprintf(&b, "EXAMPLE INPUTS: %s\n", clip(string(in), 2000))
	}
	if r.Expected != "" {
		fmt.Fprintf(&b, "EXPECTED OUTPUT: %s\n", clip(r.Expected, 1000))
	}
	if len(r.Closest) > 0 {
		fmt.Fprintf(&b, "CLOSEST EXISTING TOOLS (they do not fit): %s\n", strings.Join(r.Closest, ", "))
	}
	if len(r.Entities) > 0 {
		fmt.Fprintf(&b, "ENTITIES: %s\n", strings.Join(r.Entities, ", "))
	}
	fmt.Fprintf(&b, `
RULES:
- One file of package main that defines
    func run(ctx context.Context, in map[string]any, web Web) (any, error)
  in is the input (JSON decoded: numbers are float64); return a JSON-encodable result.
- Do not define main or init. Do not use identifiers starting with "harness".
- Import only: %s.
- The only way to reach the network is web.Do(ctx, method, url, header, body) (status, respBody, err),
  and only to the hosts you list. No files, no processes.
- Give 2 to 6 test cases. A case has name (lower_snake), input, and want (the exact JSON result)
  or wantError (a substring of the error). A case whose program calls web gives fake answers in
  "http": {"GET https://host/path": {"status": 200, "body": <JSON>}}; tests never reach a network.

ANSWER with one JSON object and nothing else:
{"tool": "lower_snake_name", "description": "what it does",
 "source": "package main\n...",
 "inputSchema": {"type": "object", "properties": {...}, "required": [...]},
 "outputSchema": {...},
 "tests": [{"name": "...", "input": {...}, "want": ...}],
 "hosts": [{"host": "api.example.com", "reason": "why the tool calls it"}]}
`, strings.Join(AllowedImports, ", "))
	if previous != nil {
		fmt.Fprintf(&b, "\nYOUR PREVIOUS PROGRAM:\n%s\n\nWHAT WENT WRONG:\n%s\n\nAnswer with the corrected program, in the same JSON format.\n",
			clip(previous.Source, 16000), clip(previous.Problem, 4000))
	}
	return b.String()
}

// Draft is one round's answer.
type Draft struct {
	Program Program `json:"program"`
	// Tokens is what the call cost (prompt and completion), as the model
	// reported it; 0 when it reports nothing.
	Tokens int `json:"tokens"`
}

// Write asks the model for a program. budget is what the build may still
// spend (≤ 0: no limit): the call's completion is capped to it, and a call
// that reports more tokens than the budget is ErrBudget. An answer that is
// not a program wraps ErrInvalidAnswer (the Draft still counts its tokens);
// a nil model is ErrNoModel; a failed call is returned wrapped (transient).
func Write(ctx context.Context, model llms.Model, r Request, previous *Attempt, budget int) (Draft, error) {
	if model == nil {
		return Draft{}, ErrNoModel
	}
	opts := []llms.CallOption{llms.WithTemperature(0), llms.WithJSONMode()}
	// The answer is capped to what the budget has left, and never asked
	// for more than MaxAnswerTokens (models refuse a cap above their own).
	maxTokens := MaxAnswerTokens
	if budget > 0 {
		maxTokens = min(budget, MaxAnswerTokens)
	}
	opts = append(opts, llms.WithMaxTokens(maxTokens))
	prompt := Prompt(r, previous)
	resp, err := model.GenerateContent(ctx, []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}, opts...)
	if err != nil {
		return Draft{}, fmt.Errorf("build: ask the model for %s: %w", r.Verb, err)
	}
	if len(resp.Choices) == 0 {
		return Draft{}, fmt.Errorf("%w: no choices", ErrInvalidAnswer)
	}
	d := Draft{Tokens: tokens(resp.Choices[0].GenerationInfo)}
	if budget > 0 && d.Tokens > budget {
		return d, fmt.Errorf("%w: the answer cost %d tokens, %d were left", ErrBudget, d.Tokens, budget)
	}
	p, err := ParseProgram(resp.Choices[0].Content)
	if err != nil {
		return d, err
	}
	d.Program = p
	return d, nil
}

// ParseProgram reads the model's answer (a JSON object, possibly fenced).
func ParseProgram(answer string) (Program, error) {
	s := strings.TrimSpace(answer)
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i {
		s = s[i : j+1]
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var p Program
	if err := dec.Decode(&p); err != nil {
		return Program{}, fmt.Errorf("%w: %v", ErrInvalidAnswer, err)
	}
	return p, nil
}

// tokens reads the total token count langchaingo's providers report.
func tokens(info map[string]any) int {
	for _, k := range []string{"TotalTokens", "total_tokens"} {
		switch v := info[k].(type) {
		case int:
			return v
		case int64:
			return int(v)
		case float64:
			return int(v)
		}
	}
	p, c := 0, 0
	if v, ok := info["PromptTokens"].(int); ok {
		p = v
	}
	if v, ok := info["CompletionTokens"].(int); ok {
		c = v
	}
	return p + c
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
