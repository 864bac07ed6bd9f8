package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
