package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// MaxSteps bounds a plan.
const MaxSteps = 10

// ErrInvalidPlan marks a model answer that is not a valid plan. It matches
// fault.ErrInvalid too.
var ErrInvalidPlan = fmt.Errorf("invalid plan: %w", fault.ErrInvalid)

// Reference prefixes of step input bindings.
const (
	RefInputs = "$inputs."
	RefSteps  = "$steps."
)

var (
	stepID   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)
	verbForm = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,99}$`)
)

// Plan is a decomposition of a verb into ordered steps. A plan with no steps
// and a Reason is the model saying the verb cannot be decomposed.
type Plan struct {
	Steps  []Step `json:"steps"`
	Reason string `json:"reason,omitempty"`
}

// Step is one step of a Plan. Inputs map a parameter name to a literal JSON
// value or to a reference string: "$inputs.<name>[.<path>]" (an input of the
// verb) or "$steps.<id>.output[.<path>]" (the output of an earlier step;
// path segments are object keys or array indexes).
type Step struct {
	ID          string         `json:"id"`
	Verb        string         `json:"verb"`
	Description string         `json:"description,omitempty"`
	Inputs      map[string]any `json:"inputs,omitempty"`
}

// NormalizeVerb upper-cases a verb and turns spaces, dots and dashes into
// underscores: "convert currency" → CONVERT_CURRENCY.
func NormalizeVerb(v string) string {
	v = strings.TrimSpace(v)
	v = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '.', '/':
			return '_'
		}
		return r
	}, v)
	return strings.ToUpper(v)
}

// ParsePlan reads a plan from a model's answer: the first JSON object in the
// text (code fences and prose around it are ignored). Verbs are normalized.
// It does not validate; see ValidatePlan.
func ParsePlan(text string) (Plan, error) {
	var p Plan
	if err := decodeAnswer(text, &p, ErrInvalidPlan); err != nil {
		return Plan{}, err
	}
	for i := range p.Steps {
		p.Steps[i].Verb = NormalizeVerb(p.Steps[i].Verb)
		p.Steps[i].ID = strings.TrimSpace(p.Steps[i].ID)
	}
	return p, nil
}

// decodeAnswer decodes the first JSON object of a model's answer into v
// (code fences and prose around it are ignored), strictly: unknown fields
// are refused. Errors wrap invalid.
func decodeAnswer(text string, v any, invalid error) error {
	start := strings.Index(text, "{")
	end := strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return fmt.Errorf("%w: the answer holds no JSON object: %q", invalid, clip(text, 200))
	}
	dec := json.NewDecoder(strings.NewReader(text[start : end+1]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", invalid, err)
	}
	return nil
}

// ValidatePlan checks a plan against the verb's input names: 1 to MaxSteps
// steps (or none with a Reason), unique well-formed ids, UPPER_SNAKE verbs,
// references only to known inputs and to earlier steps (no forward or self
// references). Every problem is reported with its path ("steps[1].inputs.amount").
func ValidatePlan(p Plan, inputNames []string) error {
	v := &fault.ValidationError{}
	if len(p.Steps) == 0 {
		if strings.TrimSpace(p.Reason) == "" {
			v.Add("steps", "a plan needs at least one step, or a reason why the verb cannot be decomposed")
		}
		return wrapInvalid(v)
	}
	if len(p.Steps) > MaxSteps {
		v.Add("steps", "has %d steps; at most %d are allowed", len(p.Steps), MaxSteps)
	}
	seen := map[string]int{}
	for i, s := range p.Steps {
		path := fmt.Sprintf("steps[%d]", i)
		switch {
		case !stepID.MatchString(s.ID):
			v.Add(path+".id", "must match %s, got %q", stepID, s.ID)
		case seen[s.ID] > 0:
			v.Add(path+".id", "duplicate id %q (also steps[%d])", s.ID, seen[s.ID]-1)
		}
		if !verbForm.MatchString(s.Verb) {
			v.Add(path+".verb", "must be UPPER_SNAKE, got %q", s.Verb)
		}
		for _, name := range sortedKeys(s.Inputs) {
			ref, ok := s.Inputs[name].(string)
			if !ok || !IsReference(ref) {
				continue
			}
			if err := checkRef(ref, inputNames, seen, s.ID); err != nil {
				v.Add(path+".inputs."+name, "%v", err)
			}
		}
		if stepID.MatchString(s.ID) && seen[s.ID] == 0 {
			seen[s.ID] = i + 1
		}
	}
	return wrapInvalid(v)
}

func wrapInvalid(v *fault.ValidationError) error {
	if err := v.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPlan, err)
	}
	return nil
}

// IsReference reports whether a binding string is a reference.
func IsReference(s string) bool {
	return strings.HasPrefix(s, RefInputs) || strings.HasPrefix(s, RefSteps)
}

func checkRef(ref string, inputNames []string, earlier map[string]int, self string) error {
	if rest, ok := strings.CutPrefix(ref, RefInputs); ok {
		name, _, _ := strings.Cut(rest, ".")
		if !slices.Contains(inputNames, name) {
			return fmt.Errorf("%s: unknown input %q (inputs: %s)", ref, name, strings.Join(inputNames, ", "))
		}
		return nil
	}
	rest := strings.TrimPrefix(ref, RefSteps)
	parts := strings.Split(rest, ".")
	if len(parts) < 2 || parts[1] != "output" {
		return fmt.Errorf("%s: must be $steps.<id>.output[.<path>]", ref)
	}
	switch id := parts[0]; {
	case id == self:
		return fmt.Errorf("%s: a step cannot use its own output", ref)
	case earlier[id] == 0:
		return fmt.Errorf("%s: step %q is not an earlier step", ref, id)
	}
	return nil
}

// Resolve replaces the references of a step's input bindings with values:
// inputs are the verb's inputs, outputs the decoded outputs of earlier steps
// by id. Literals pass through unchanged. A path that does not exist is an
// error naming the binding. Resolve is deterministic (keys are visited in
// sorted order), so workflows may call it.
func Resolve(bindings map[string]any, inputs map[string]any, outputs map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(bindings))
	var errs []error
	for _, name := range sortedKeys(bindings) {
		b := bindings[name]
		ref, ok := b.(string)
		if !ok || !IsReference(ref) {
			out[name] = b
			continue
		}
		v, err := lookup(ref, inputs, outputs)
		if err != nil {
			errs = append(errs, fmt.Errorf("inputs.%s: %w", name, err))
			continue
		}
		out[name] = v
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("llm: resolve bindings: %w", err)
	}
	return out, nil
}

func lookup(ref string, inputs, outputs map[string]any) (any, error) {
	var cur any
	var path []string
	if rest, ok := strings.CutPrefix(ref, RefInputs); ok {
		path = strings.Split(rest, ".")
		v, ok := inputs[path[0]]
		if !ok {
			return nil, fmt.Errorf("%s: no input %q", ref, path[0])
		}
		cur, path = v, path[1:]
	} else {
		parts := strings.Split(strings.TrimPrefix(ref, RefSteps), ".")
		if len(parts) < 2 || parts[1] != "output" {
			return nil, fmt.Errorf("%s: must be $steps.<id>.output[.<path>]", ref)
		}
		v, ok := outputs[parts[0]]
		if !ok {
			return nil, fmt.Errorf("%s: step %q has no output yet", ref, parts[0])
		}
		cur, path = v, parts[2:]
	}
	for i, seg := range path {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[seg]
			if !ok {
				return nil, fmt.Errorf("%s: no key %q at %s", ref, seg, strings.Join(path[:i], "."))
			}
			cur = v
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return nil, fmt.Errorf("%s: index %q out of range (length %d)", ref, seg, len(c))
			}
			cur = c[n]
		default:
			return nil, fmt.Errorf("%s: cannot descend into %T at %q", ref, cur, seg)
		}
	}
	return cur, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut at a rune boundary: half a rune is invalid UTF-8, which JSON
	// (a judgement's reason in the workflow's history) cannot carry.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
