package activities

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/toolsmith/toolsmith/build"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/llm"
)

// TestWriteProgramThroughOpenAIClient: the round's program comes back with
// its token count; prose is an invalid answer the workflow shows the model,
// not an error; no model and a spent budget are non-retryable errors of
// their own types.
func TestWriteProgramThroughOpenAIClient(t *testing.T) {
	fake := &chatServer{answers: []string{
		`{"tool": "to_roman", "description": "d", "source": "package main", "inputSchema": {"type": "object"}, "outputSchema": {}, "tests": [], "hosts": []}`,
		`I would rather not.`,
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	model, err := llm.New(llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.URL + "/v1", Model: "build-1"})
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(&Build{Model: model, ModelName: "openai/build-1", TokenBudget: 1000})
	write := func(used int) (WriteProgramOutput, error) {
		v, err := env.ExecuteActivity((&Build{}).WriteProgram, WriteProgramInput{TokensUsed: used})
		if err != nil {
			return WriteProgramOutput{}, err
		}
		var out WriteProgramOutput
		return out, v.Get(&out)
	}
	out, err := write(0)
	if err != nil || out.Program.Tool != "to_roman" || out.Tokens != 20 || out.Budget != 1000 || out.Model != "openai/build-1" || out.Invalid != "" {
		t.Fatalf("program: %+v %v", out, err)
	}
	if out, err := write(20); err != nil || !strings.Contains(out.Invalid, "not a program") || out.Tokens != 20 {
		t.Fatalf("prose: %+v %v", out, err)
	}
	var appErr *temporal.ApplicationError
	if _, err := write(1000); !errors.As(err, &appErr) || appErr.Type() != ErrTypeBuildBudget || !appErr.NonRetryable() {
		t.Fatalf("spent budget: %v", err)
	}
	// The workflow records the spent round from the error's details.
	var spent WriteProgramOutput
	if !Details(appErr, &spent) || spent.Model != "openai/build-1" || spent.Budget != 1000 {
		t.Fatalf("spent budget's details: %+v", spent)
	}

	env = s.NewTestActivityEnvironment()
	env.RegisterActivity(&Build{})
	if _, err := env.ExecuteActivity((&Build{}).WriteProgram, WriteProgramInput{}); !errors.As(err, &appErr) ||
		appErr.Type() != ErrTypeLLMUnavailable || appErr.Message() != build.NoModelHint {
		t.Fatalf("no model: %v", err)
	}
}

// noteGaps is a graph.Gaps that knows one verb.
type noteGaps struct {
	graph.Gaps
	notes []graph.GapEvent
}

func (g *noteGaps) RecordGap(_ context.Context, e graph.GapEvent) (graph.Gap, error) {
	if e.Verb != "ROMAN_NUMERAL" {
		return graph.Gap{}, fault.ErrNotFound
	}
	g.notes = append(g.notes, e)
	return graph.Gap{Verb: e.Verb, Reason: e.Reason}, nil
}

// TestNoteGap: a reason is noted on the verb's gap without counting an
// ask; a verb without a gap is not an error.
func TestNoteGap(t *testing.T) {
	g := &noteGaps{}
	b := &Build{Gaps: g}
	if ok, err := b.NoteGap(context.Background(), NoteGapInput{Verb: "ROMAN_NUMERAL", Reason: "build needs a model"}); err != nil || !ok {
		t.Fatalf("note: %v %v", ok, err)
	}
	if ok, err := b.NoteGap(context.Background(), NoteGapInput{Verb: "NEVER_ASKED", Reason: "x"}); err != nil || ok {
		t.Fatalf("no gap: %v %v", ok, err)
	}
	if len(g.notes) != 1 || !g.notes[0].NoteOnly || g.notes[0].Reason != "build needs a model" {
		t.Fatalf("notes: %+v", g.notes)
	}
}
