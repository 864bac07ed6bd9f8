package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// ErrNoModel is returned by Decompose when no model is configured. It
// matches fault.ErrUnavailable.
var ErrNoModel = fmt.Errorf("llm: no language model configured (provider none): %w", fault.ErrUnavailable)

// KnownVerb is a verb the caller can use, offered to the model as a building block.
type KnownVerb struct {
	Verb        string   `json:"verb"`
	ToolID      string   `json:"toolId"`
	Description string   `json:"description"`
	Inputs      []string `json:"inputs,omitempty"`
}

// DecomposeRequest is what the model sees.
type DecomposeRequest struct {
	Verb        string         `json:"verb"`
	Description string         `json:"description,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
	Context     string         `json:"context,omitempty"`
	KnownVerbs  []KnownVerb    `json:"knownVerbs,omitempty"`
}

// InputNames returns the request's input names, sorted.
func (r DecomposeRequest) InputNames() []string { return sortedKeys(r.Inputs) }

// Prompt builds the decomposition prompt: the task, the known verbs, the
// inputs and the strict JSON answer format.
func Prompt(r DecomposeRequest) string {
	var b strings.Builder
	b.WriteString("You are the planner of Toolsmith. Break the action verb below into a short plan of steps.\n")
	b.WriteString("Prefer the KNOWN VERBS (each is an existing tool). Use a new UPPER_SNAKE verb only for a step no known verb covers.\n")
	fmt.Fprintf(&b, "Use at most %d steps. If the verb cannot be decomposed, answer {\"steps\": [], \"reason\": \"why\"}.\n\n", MaxSteps)
	fmt.Fprintf(&b, "VERB: %s\n", r.Verb)
	if r.Description != "" {
		fmt.Fprintf(&b, "DESCRIPTION: %s\n", r.Description)
	}
	if r.Context != "" {
		fmt.Fprintf(&b, "CONTEXT: %s\n", r.Context)
	}
	if len(r.Inputs) > 0 {
		in, _ := json.Marshal(r.Inputs)
		fmt.Fprintf(&b, "INPUTS: %s\n", clip(string(in), 2000))
	} else {
		b.WriteString("INPUTS: none\n")
	}
	b.WriteString("\nKNOWN VERBS:\n")
	if len(r.KnownVerbs) == 0 {
		b.WriteString("- none\n")
	}
	for _, k := range r.KnownVerbs {
		fmt.Fprintf(&b, "- %s: %s", k.Verb, clip(k.Description, 160))
		if len(k.Inputs) > 0 {
			fmt.Fprintf(&b, " (inputs: %s)", strings.Join(k.Inputs, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString(`
ANSWER with one JSON object and nothing else:
{"steps": [{"id": "s1", "verb": "KNOWN_OR_NEW_VERB", "description": "what this step does",
            "inputs": {"param": "literal value" | "$inputs.<name>" | "$steps.<earlier id>.output.<field>"}}]}
Rules: ids are unique; a step may only reference inputs listed above and outputs of EARLIER steps.
`)
	return b.String()
}

// Decompose asks the model for a plan and returns it parsed and validated.
// A nil model is ErrNoModel; an answer that is not a valid plan wraps
// ErrInvalidPlan; a failed model call is returned wrapped (transient).
func Decompose(ctx context.Context, model llms.Model, r DecomposeRequest) (Plan, error) {
	if model == nil {
		return Plan{}, ErrNoModel
	}
	answer, err := llms.GenerateFromSinglePrompt(ctx, model, Prompt(r), llms.WithTemperature(0), llms.WithJSONMode())
	if err != nil {
		return Plan{}, fmt.Errorf("llm: decompose %s: %w", r.Verb, err)
	}
	p, err := ParsePlan(answer)
	if err != nil {
		return Plan{}, fmt.Errorf("llm: decompose %s: %w", r.Verb, err)
	}
	if err := ValidatePlan(p, r.InputNames()); err != nil {
		return p, fmt.Errorf("llm: decompose %s: %w", r.Verb, err)
	}
	return p, nil
}

// IsInvalidPlan reports whether err says the model's answer was not a valid plan.
func IsInvalidPlan(err error) bool { return errors.Is(err, ErrInvalidPlan) }
