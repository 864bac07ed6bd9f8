// Package llm configures the language model Toolsmith uses to decompose a
// novel verb into a plan, builds the decomposition prompt, and parses and
// validates the plan the model returns. Models come from langchaingo:
// "openai" talks to any OpenAI-compatible server (set BaseURL), "ollama" to
// an Ollama server, and "none" configures no model at all, in which case
// decomposition fails with fault.ErrUnavailable instead of inventing a plan.
//
// Everything here except Decompose is pure, so workflows may call
// ValidatePlan and Resolve deterministically.
package llm
