package web

import (
	"encoding/json"
	"html/template"

	"github.com/toolsmith/toolsmith/build"
)

// buildReview is the part of a review of a tool built from scratch that
// a spec's review lacks (GET /tools/pending/{id}'s state.build): the
// program, its tests and hosts, the rounds it took, the model and the
// prompt version.
type buildReview struct {
	Status  string `json:"status"`
	Program *struct {
		Tool, Description, Source string
		Tests                     []struct {
			Name      string
			Input     json.RawMessage
			Want      json.RawMessage
			WantError string `json:"wantError"`
		}
		Hosts []struct{ Host, Reason string }
	} `json:"program"`
	Rounds []struct {
		Round, Tokens  int
		Stage, Summary string
		Report         struct {
			Sandbox string
			Tests   []struct{ Name, Result string }
		}
	} `json:"rounds"`
	Model         string `json:"model"`
	PromptVersion string `json:"promptVersion"`
	TokensUsed    int    `json:"tokensUsed"`
	TokenBudget   int    `json:"tokenBudget"`
}

// Code is the program's source, highlighted on the server (spans with
// classes, no script, no inline style: the console's CSP holds).
func (b *buildReview) Code() template.HTML {
	if b.Program == nil {
		return ""
	}
	return build.Highlight(b.Program.Source)
}

// Passed are the test outcomes of the round that passed (the last one).
func (b *buildReview) Passed() []struct{ Name, Result string } {
	if len(b.Rounds) == 0 {
		return nil
	}
	return b.Rounds[len(b.Rounds)-1].Report.Tests
}

// Sandbox is how the last round's tests were isolated.
func (b *buildReview) Sandbox() string {
	if len(b.Rounds) == 0 {
		return ""
	}
	return b.Rounds[len(b.Rounds)-1].Report.Sandbox
}
