// Package llm configures the language model Toolsmith uses to decompose a
// novel verb into a plan, builds the decomposition prompt, and parses and
// validates the plan the model returns. Models come from langchaingo:
// "openai" talks to any OpenAI-compatible server (set BaseURL), "ollama" to
// an Ollama server, and "none" configures no model at all, in which case
// decomposition fails with fault.ErrUnavailable instead of inventing a plan.
// With a model configured, Judge also asks it which of a novel verb's top
// candidates (if any) can run in the verb's place; its answer is validated
// strictly against the candidates offered (ParseJudgement).
//
// Everything here except Decompose and Judge is pure, so workflows may call
// ValidatePlan and Resolve deterministically.
package llm
