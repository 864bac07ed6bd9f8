package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolsmith/toolsmith/llm"
)

// LLM holds the activities that call a language model.
type LLM struct {
	// Model is nil when no model is configured (provider none).
	Model llms.Model
}

// DecomposeInput is what the planner is asked.
type DecomposeInput = llm.DecomposeRequest

// DecomposeVerb asks the model for a plan. No model is a non-retryable
// LLMUnavailable; an answer that is not a valid plan is a non-retryable
// InvalidPlan; a failed call (network, 5xx, rate limit) is retried.
func (l *LLM) DecomposeVerb(ctx context.Context, in DecomposeInput) (llm.Plan, error) {
	if l.Model == nil {
		return llm.Plan{}, benign(ErrTypeLLMUnavailable,
			"cannot decompose %s: no language model is configured (set --llm-provider); Toolsmith never invents a plan", in.Verb)
	}
	p, err := llm.Decompose(ctx, l.Model, in)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, llm.ErrInvalidPlan):
		return llm.Plan{}, Fail(ErrTypeInvalidPlan, "the model's plan for %s is invalid: %v", in.Verb, err)
	case errors.Is(err, llm.ErrNoModel):
		return llm.Plan{}, Fail(ErrTypeLLMUnavailable, "cannot decompose %s: %v", in.Verb, err)
	default:
		return llm.Plan{}, fmt.Errorf("activities: decompose %s: %w", in.Verb, err)
	}
}

// JudgeInput is what the judge is asked.
type JudgeInput = llm.JudgeRequest

// JudgeSubstitution asks the model which of the verb's top candidates, if
// any, can run in its place. No model is a non-retryable LLMUnavailable
// (answered at once, so a deployment without a model pays nothing for
// asking); an answer that is not a valid judgement is a non-retryable
// InvalidJudgement; a failed call (network, 5xx, rate limit) is retried by
// the caller's policy. Every failure leaves the decision to the rule.
func (l *LLM) JudgeSubstitution(ctx context.Context, in JudgeInput) (llm.Judgement, error) {
	if l.Model == nil {
		return llm.Judgement{}, benign(ErrTypeLLMUnavailable, "cannot judge %s: no language model is configured", in.Verb)
	}
	j, err := llm.Judge(ctx, l.Model, in)
	switch {
	case err == nil:
		return j, nil
	case errors.Is(err, llm.ErrInvalidJudgement):
		return llm.Judgement{}, Fail(ErrTypeInvalidJudgement, "the model's judgement of %s is invalid: %v", in.Verb, err)
	case errors.Is(err, llm.ErrNoModel):
		return llm.Judgement{}, Fail(ErrTypeLLMUnavailable, "cannot judge %s: %v", in.Verb, err)
	default:
		return llm.Judgement{}, fmt.Errorf("activities: judge %s: %w", in.Verb, err)
	}
}
