package workflowstest

import (
	"context"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/toolsmith/toolsmith/build"
)

// TestScriptedLLMBuilds: the build prompt of a verb gets the verb's build
// answers in round order, each with a token count, and an error once they
// run out; another verb's build is an error, not its answer.
func TestScriptedLLMBuilds(t *testing.T) {
	s := &ScriptedLLM{Builds: map[string][]string{"ROMAN_NUMERAL": {"first", "second"}}}
	ask := func(verb string, previous *build.Attempt) (string, int, error) {
		prompt := build.Prompt(build.Request{Verb: verb, Description: "write a number"}, previous)
		resp, err := s.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)})
		if err != nil {
			return "", 0, err
		}
		n, _ := resp.Choices[0].GenerationInfo["TotalTokens"].(int)
		return resp.Choices[0].Content, n, nil
	}
	for i, want := range []string{"first", "second"} {
		var prev *build.Attempt
		if i > 0 {
			prev = &build.Attempt{Source: "package main", Problem: "a test failed"}
		}
		got, n, err := ask("ROMAN_NUMERAL", prev)
		if err != nil || got != want || n <= 0 {
			t.Fatalf("round %d: %q (%d tokens) %v, want %q", i+1, got, n, err, want)
		}
	}
	if _, _, err := ask("ROMAN_NUMERAL", nil); err == nil || !strings.Contains(err.Error(), "no build answer 3") {
		t.Errorf("a third round: %v, want no build answer", err)
	}
	if got, _, err := ask("OTHER_VERB", nil); err == nil {
		t.Errorf("an unscripted verb's build answered %q", got)
	}
	if strings.Join(s.Built, ",") != "ROMAN_NUMERAL,ROMAN_NUMERAL,ROMAN_NUMERAL,OTHER_VERB" || len(s.Asked) != 0 {
		t.Errorf("built %v asked %v", s.Built, s.Asked)
	}
}
