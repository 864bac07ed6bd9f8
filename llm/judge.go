package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// JudgeNone is the judgement that no offered candidate fits the verb.
const JudgeNone = "none"

// MaxJudgeCandidates bounds the candidates a judge is offered: the top of
// the ranking, where the right tool is when it is present at all.
const MaxJudgeCandidates = 3

// maxJudgeReason bounds the reason kept from a model's judgement.
const maxJudgeReason = 300

// ErrInvalidJudgement marks a model answer that is not a valid judgement:
// no JSON object, unknown fields, no reason, or a tool that was not
// offered. It matches fault.ErrInvalid too.
var ErrInvalidJudgement = fmt.Errorf("invalid judgement: %w", fault.ErrInvalid)

// JudgeCandidate is a tool offered to the judge.
type JudgeCandidate struct {
	ToolID      string   `json:"toolId"`
	Verb        string   `json:"verb,omitempty"`
	Description string   `json:"description,omitempty"`
	Required    []string `json:"required,omitempty"`
}

// JudgeRequest asks the model which of the candidates, if any, can run in
// the verb's place.
type JudgeRequest struct {
	Verb        string           `json:"verb"`
	Description string           `json:"description,omitempty"`
	Context     string           `json:"context,omitempty"`
	InputNames  []string         `json:"inputNames,omitempty"`
	Candidates  []JudgeCandidate `json:"candidates"`
}

// Judgement is the model's answer: Tool is one offered candidate's id or
// JudgeNone, and Reason says why in a sentence.
type Judgement struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// JudgePrompt builds the judge's prompt: the verb, the offered candidates
// in ranking order, and the strict JSON answer format.
func JudgePrompt(r JudgeRequest) string {
	var b strings.Builder
	b.WriteString("You are the judge of Toolsmith. A caller asked for the action below. Decide whether one of the CANDIDATE TOOLS does exactly that action, so that it can run in its place.\n")
	b.WriteString("Choose a tool only if it does what the action asks (not a related or broader task). If none does, answer none.\n\n")
	fmt.Fprintf(&b, "ACTION: %s\n", r.Verb)
	if r.Description != "" {
		fmt.Fprintf(&b, "DESCRIPTION: %s\n", clip(r.Description, 500))
	}
	if r.Context != "" {
		fmt.Fprintf(&b, "CONTEXT: %s\n", clip(r.Context, 500))
	}
	if len(r.InputNames) > 0 {
		fmt.Fprintf(&b, "INPUTS: %s\n", strings.Join(r.InputNames, ", "))
	}
	b.WriteString("\nCANDIDATE TOOLS:\n")
	for _, c := range r.Candidates {
		fmt.Fprintf(&b, "- %s", c.ToolID)
		if c.Verb != "" {
			fmt.Fprintf(&b, " (%s)", c.Verb)
		}
		fmt.Fprintf(&b, ": %s", clip(c.Description, 240))
		if len(c.Required) > 0 {
			fmt.Fprintf(&b, " (required: %s)", strings.Join(c.Required, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString(`
ANSWER with one JSON object and nothing else:
{"tool": "<one candidate tool id, exactly as listed>" | "none", "reason": "one short sentence"}
`)
	return b.String()
}

// ParseJudgement reads a judgement from a model's answer (the first JSON
// object in it) and validates it strictly against the offered candidates:
// unknown fields, an empty reason, or a tool that is neither an offered id
// nor JudgeNone wrap ErrInvalidJudgement. The reason is trimmed and clipped.
func ParseJudgement(text string, offered []JudgeCandidate) (Judgement, error) {
	var j Judgement
	if err := decodeAnswer(text, &j, ErrInvalidJudgement); err != nil {
		return Judgement{}, err
	}
	j.Tool, j.Reason = strings.TrimSpace(j.Tool), clip(strings.TrimSpace(j.Reason), maxJudgeReason)
	if j.Reason == "" {
		return Judgement{}, fmt.Errorf("%w: no reason given", ErrInvalidJudgement)
	}
	if strings.EqualFold(j.Tool, JudgeNone) {
		j.Tool = JudgeNone
		return j, nil
	}
	for _, c := range offered {
		if c.ToolID == j.Tool {
			return j, nil
		}
	}
	return Judgement{}, fmt.Errorf("%w: tool %q is not one of the candidates", ErrInvalidJudgement, clip(j.Tool, 100))
}

// Judge asks the model to judge the request's candidates. A nil model is
// ErrNoModel; a request without candidates is ErrInvalidJudgement (there
// is nothing to judge); an answer that is not a valid judgement wraps
// ErrInvalidJudgement; a failed model call is returned wrapped (transient).
func Judge(ctx context.Context, model llms.Model, r JudgeRequest) (Judgement, error) {
	if model == nil {
		return Judgement{}, ErrNoModel
	}
	if len(r.Candidates) == 0 || len(r.Candidates) > MaxJudgeCandidates {
		return Judgement{}, fmt.Errorf("%w: %d candidates offered, want 1 to %d", ErrInvalidJudgement, len(r.Candidates), MaxJudgeCandidates)
	}
	answer, err := llms.GenerateFromSinglePrompt(ctx, model, JudgePrompt(r), llms.WithTemperature(0), llms.WithJSONMode())
	if err != nil {
		return Judgement{}, fmt.Errorf("llm: judge %s: %w", r.Verb, err)
	}
	j, err := ParseJudgement(answer, r.Candidates)
	if err != nil {
		return Judgement{}, fmt.Errorf("llm: judge %s: %w", r.Verb, err)
	}
	return j, nil
}

// IsInvalidJudgement reports whether err says the model's answer was not a
// valid judgement.
func IsInvalidJudgement(err error) bool { return errors.Is(err, ErrInvalidJudgement) }
