package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

func TestParseJudgement(t *testing.T) {
	offered := []JudgeCandidate{{ToolID: "currency.convert"}, {ToolID: "currency.rates"}}
	cases := []struct {
		name, answer, tool string // tool "" wants ErrInvalidJudgement
	}{
		{"pick", `{"tool":"currency.rates","reason":"it lists rates"}`, "currency.rates"},
		{"none any case", `{"tool":"None","reason":"nothing fits"}`, JudgeNone},
		{"fenced", "```json\n{\"tool\":\"currency.convert\",\"reason\":\"converts\"}\n```", "currency.convert"},
		{"not offered", `{"tool":"bank.transfer","reason":"moves money"}`, ""},
		{"case differs from the id", `{"tool":"Currency.Convert","reason":"converts"}`, ""},
		{"no reason", `{"tool":"currency.convert","reason":"  "}`, ""},
		{"unknown field", `{"tool":"currency.convert","reason":"x","score":1}`, ""},
		{"no object", `currency.convert`, ""},
		{"tool not a string", `{"tool":1,"reason":"x"}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := ParseJudgement(tc.answer, offered)
			if tc.tool == "" {
				if !IsInvalidJudgement(err) {
					t.Fatalf("got %+v, %v; want an invalid judgement", j, err)
				}
				return
			}
			if err != nil || j.Tool != tc.tool {
				t.Fatalf("got %+v, %v; want %s", j, err, tc.tool)
			}
		})
	}
	long, err := ParseJudgement(`{"tool":"none","reason":"`+strings.Repeat("x", 1000)+`"}`, offered)
	if err != nil || len(long.Reason) > maxJudgeReason+len("…") {
		t.Fatalf("reason not clipped: %d bytes, %v", len(long.Reason), err)
	}
}

// countingModel answers every prompt with a valid judgement and counts the calls.
type countingModel struct{ calls int }

func (m *countingModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	m.calls++
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: `{"tool":"none","reason":"nothing fits"}`}}}, nil
}

func (m *countingModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func TestJudgeRefusesNoOrTooManyCandidates(t *testing.T) {
	if _, err := Judge(t.Context(), nil, JudgeRequest{Verb: "X"}); !errors.Is(err, ErrNoModel) {
		t.Fatalf("nil model: %v", err)
	}
	m := &countingModel{}
	four := make([]JudgeCandidate, MaxJudgeCandidates+1)
	for i := range four {
		four[i].ToolID = fmt.Sprintf("t.%d", i)
	}
	for _, cands := range [][]JudgeCandidate{nil, four} {
		if _, err := Judge(t.Context(), m, JudgeRequest{Verb: "X", Candidates: cands}); !IsInvalidJudgement(err) {
			t.Fatalf("%d candidates: %v", len(cands), err)
		}
	}
	if j, err := Judge(t.Context(), m, JudgeRequest{Verb: "X", Candidates: four[:1]}); err != nil || j.Tool != JudgeNone {
		t.Fatalf("one candidate: %+v, %v", j, err)
	}
	if m.calls != 1 {
		t.Fatalf("model called %d times, want once (only for a valid request)", m.calls)
	}
}
