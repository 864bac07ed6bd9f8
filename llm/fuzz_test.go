package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// fuzzInputs are the verb inputs FuzzPlan validates plans against.
var fuzzInputs = []string{"budget", "amount", "text"}

// FuzzPlan runs a model's answer through ParsePlan and ValidatePlan, as
// Decompose does. Seeds are in testdata/fuzz/FuzzPlan (this package's test
// answers). Properties:
//   - every failure matches ErrInvalidPlan and fault.ErrInvalid;
//   - a parsed plan's verbs are normalized (NormalizeVerb is idempotent on
//     them) and its ids trimmed;
//   - a valid plan, written as JSON and parsed again, is the same plan and
//     still valid (what a workflow stores and reads back);
//   - Resolve on a valid plan's first step, given every input, either binds
//     every input or names the binding it could not resolve.
func FuzzPlan(f *testing.F) {
	f.Add("Sure!\n```json\n" + `{"steps":[{"id":"s1","verb":"convert currency","inputs":{"amount":"$inputs.budget","to":"EUR"}},` +
		`{"id":"s2","verb":"SUMMARIZE","inputs":{"text":"$steps.s1.output.converted"}}]}` + "\n```")
	f.Add(`{"steps":[],"reason":"no such capability"}`)
	f.Add(`{"steps":[{"id":"a","verb":"X","inputs":{"v":"$steps.b.output"}},{"id":"b","verb":"Y"}]}`)
	f.Add(`{"steps":[{"id":"a","verb":"X","inputs":{"v":"$inputs.budget.0.x"}}]}`)
	f.Add("no json here")
	f.Fuzz(func(t *testing.T, answer string) {
		p, err := ParsePlan(answer)
		if err != nil {
			checkInvalid(t, "ParsePlan", err)
			return
		}
		for i, s := range p.Steps {
			if NormalizeVerb(s.Verb) != s.Verb {
				t.Fatalf("steps[%d].verb %q is not normalized: NormalizeVerb gives %q", i, s.Verb, NormalizeVerb(s.Verb))
			}
			if strings.TrimSpace(s.ID) != s.ID {
				t.Fatalf("steps[%d].id %q is not trimmed", i, s.ID)
			}
		}
		if err := ValidatePlan(p, fuzzInputs); err != nil {
			checkInvalid(t, "ValidatePlan", err)
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("a valid plan does not marshal: %v", err)
		}
		again, err := ParsePlan(string(b))
		if err != nil {
			t.Fatalf("a valid plan, written as JSON, does not parse: %v\n%s", err, b)
		}
		// Compared as JSON: an empty inputs object and none are the same plan.
		if b2, _ := json.Marshal(again); !bytes.Equal(b, b2) {
			t.Fatalf("a valid plan changed through JSON:\nbefore: %s\nafter:  %s", b, b2)
		}
		if err := ValidatePlan(again, fuzzInputs); err != nil {
			t.Fatalf("a valid plan, written as JSON and parsed, is invalid: %v\n%s", err, b)
		}
		if len(p.Steps) == 0 {
			return
		}
		inputs := map[string]any{}
		for _, name := range fuzzInputs {
			inputs[name] = map[string]any{"x": []any{1.0, "two"}}
		}
		// The first step can refer to no earlier step, so only $inputs
		// references remain, and each names a known input.
		bound, err := Resolve(p.Steps[0].Inputs, inputs, nil)
		if err != nil {
			if !strings.Contains(err.Error(), "inputs.") {
				t.Fatalf("Resolve's error names no binding: %v", err)
			}
			return
		}
		if len(bound) != len(p.Steps[0].Inputs) {
			t.Fatalf("Resolve bound %d of %d inputs", len(bound), len(p.Steps[0].Inputs))
		}
	})
}

func checkInvalid(t *testing.T, op string, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalidPlan) || !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("%s: error %v does not match ErrInvalidPlan and fault.ErrInvalid", op, err)
	}
}

// fuzzCandidates are the candidates FuzzJudgement's answers are checked
// against.
var fuzzCandidates = []JudgeCandidate{{ToolID: "currency.convert", Verb: "CONVERT_CURRENCY"}, {ToolID: "units.convert"}, {ToolID: "text.stats"}}

// FuzzJudgement runs a model's answer through ParseJudgement, as Judge
// does. Seeds are in testdata/fuzz/FuzzJudgement. Properties:
//   - every failure matches ErrInvalidJudgement;
//   - an accepted judgement names an offered candidate or JudgeNone, has a
//     trimmed, non-empty reason of at most maxJudgeReason bytes;
//   - an accepted judgement, written as JSON and parsed again, is the same.
func FuzzJudgement(f *testing.F) {
	f.Add(`{"tool": "currency.convert", "reason": "it converts money"}`)
	f.Add("Here you go:\n```json\n{\"tool\": \"NONE\", \"reason\": \"nothing fits\"}\n```")
	f.Add(`{"tool": "bank.transfer", "reason": "money"}`)
	f.Add(`{"tool": "units.convert", "reason": " ", "confidence": 1}`)
	f.Add(`{"tool": " text.stats ", "reason": "` + strings.Repeat("long ", 100) + `"}`)
	f.Add("no json here")
	f.Fuzz(func(t *testing.T, answer string) {
		j, err := ParseJudgement(answer, fuzzCandidates)
		if err != nil {
			if !errors.Is(err, ErrInvalidJudgement) {
				t.Fatalf("ParseJudgement: %v does not match ErrInvalidJudgement", err)
			}
			return
		}
		offered := j.Tool == JudgeNone
		for _, c := range fuzzCandidates {
			offered = offered || c.ToolID == j.Tool
		}
		if !offered {
			t.Fatalf("accepted tool %q is neither offered nor %q", j.Tool, JudgeNone)
		}
		if j.Reason == "" || strings.TrimLeftFunc(j.Reason, unicode.IsSpace) != j.Reason || len(j.Reason) > maxJudgeReason+len("…") {
			t.Fatalf("reason %q is not trimmed, non-empty and bounded", j.Reason)
		}
		// What the activity returns reaches the workflow through its
		// history as JSON: it must arrive as it left.
		b, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		var again Judgement
		if err := json.Unmarshal(b, &again); err != nil || again != j {
			t.Fatalf("a judgement through JSON is %+v (%v), want %+v", again, err, j)
		}
	})
}
