package web

import (
	"encoding/json"
	"html/template"

	"github.com/toolsmith/toolsmith/build"
	"github.com/toolsmith/toolsmith/workflows"
)

// buildView is what the review page shows of a tool built from scratch,
// beyond a spec's review: the model, the prompt version and tokens, the
// program's hosts with their reasons, its source highlighted on the
// server, its test cases and results, and the rounds it took.
type buildView struct {
	Model, PromptVersion    string
	TokensUsed, TokenBudget int
	Rounds                  []workflows.BuildRound
	Program                 *workflows.BuiltProgram
	// Code is the source as spans with classes (build.Highlight): no
	// script and no inline style, so the console's CSP holds.
	Code    template.HTML
	Cases   []buildCase
	Results []workflows.TestOutcome
	Sandbox string
}

// buildCase is a test case as the page prints it.
type buildCase struct {
	Name, Input, Want, WantError string
}

// newBuildView returns nil for a review that is no build.
func newBuildView(b *workflows.BuildState) *buildView {
	if b == nil {
		return nil
	}
	v := &buildView{Model: b.Model, PromptVersion: b.PromptVersion, TokensUsed: b.TokensUsed, TokenBudget: b.TokenBudget,
		Rounds: b.Rounds, Program: b.Program}
	if p := b.Program; p != nil {
		v.Code = build.Highlight(p.Source)
		for _, c := range p.Tests {
			in, _ := json.Marshal(c.Input)
			v.Cases = append(v.Cases, buildCase{Name: c.Name, Input: string(in), Want: string(c.Want), WantError: c.WantError})
		}
	}
	if n := len(b.Rounds); n > 0 {
		v.Results, v.Sandbox = b.Rounds[n-1].Report.Tests, b.Rounds[n-1].Report.Sandbox
	}
	return v
}
