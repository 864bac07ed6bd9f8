package modules

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Mapping is how a caller's inputs were fitted to a tool's inputSchema.
type Mapping struct {
	// Arguments are the inputs under the tool's own parameter names.
	Arguments map[string]any `json:"arguments"`
	// Renamed maps a tool parameter to the input name it was taken from, for
	// every parameter matched case- and separator-insensitively.
	Renamed map[string]string `json:"renamed,omitempty"`
	// Unused lists inputs that match no parameter of a schema that forbids
	// additional properties; they are left out rather than sent.
	Unused []string `json:"unused,omitempty"`
}

// MapInputs fits inputs to a tool's inputSchema without guessing: a parameter
// takes the input of exactly the same name, else the one input whose name is
// equal ignoring case, '_', '-', '.' and spaces ("fromCurrency" ↔
// "from_currency") after NFKC ("ａmount" ↔ "amount"). An input name holding
// an invisible character ("amount\u200b") is refused. Two inputs competing for one parameter (an exact name
// and a variant of it too), or a required parameter with no
// input, is an error wrapping ErrSchemaMismatch and fault.ErrInvalid. Types
// are not coerced here: the caller validates the result against the schema,
// which turns a string where a number is wanted into a mismatch.
//
// A schema without properties (or no schema) passes the inputs through.
func MapInputs(inputSchema json.RawMessage, inputs map[string]any) (Mapping, error) {
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	}
	if len(inputSchema) > 0 {
		if err := json.Unmarshal(inputSchema, &s); err != nil {
			return Mapping{}, fmt.Errorf("modules: map inputs: inputSchema: %w", err)
		}
	}
	if err := invisibleNames(inputs); err != nil {
		return Mapping{}, fmt.Errorf("%w: %w", ErrSchemaMismatch, err)
	}
	out := Mapping{Arguments: map[string]any{}}
	if len(s.Properties) == 0 {
		for k, v := range inputs {
			out.Arguments[k] = v
		}
		return out, nil
	}
	params := make([]string, 0, len(s.Properties))
	for p := range s.Properties {
		params = append(params, p)
	}
	slices.Sort(params)
	names := make([]string, 0, len(inputs))
	for n := range inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	// Each name is normalized once: the passes below compare every
	// parameter with every input.
	norms := make(map[string]string, len(params)+len(names))
	for _, n := range append(slices.Clone(params), names...) {
		if _, ok := norms[n]; !ok {
			norms[n] = normalize(n)
		}
	}

	verr := &fault.ValidationError{}
	used := map[string]bool{}
	var exact []string
	for _, p := range params {
		if v, ok := inputs[p]; ok {
			out.Arguments[p] = v
			used[p] = true
			exact = append(exact, p)
		}
	}
	for _, p := range params {
		if _, done := out.Arguments[p]; done {
			continue
		}
		var match []string
		for _, n := range names {
			if !used[n] && norms[n] == norms[p] {
				match = append(match, n)
			}
		}
		switch len(match) {
		case 0:
		case 1:
			out.Arguments[p] = inputs[match[0]]
			used[match[0]] = true
			if out.Renamed == nil {
				out.Renamed = map[string]string{}
			}
			out.Renamed[p] = match[0]
		default:
			verr.Add("inputs."+p, "ambiguous: %s all match parameter %q", strings.Join(match, ", "), p)
		}
	}
	// An exact name does not settle a second input that matches the same
	// parameter ignoring case and separators ("amount" and "Amount"): the
	// caller gave two values for one parameter, and which one they meant is
	// a guess. Checked after the fuzzy pass, so a variant that another
	// parameter takes (a schema with both "amount" and "Amount") is used.
	for _, p := range exact {
		match := []string{p}
		for _, n := range names {
			if !used[n] && norms[n] == norms[p] {
				match = append(match, n)
			}
		}
		if len(match) > 1 {
			verr.Add("inputs."+p, "ambiguous: %s all match parameter %q", strings.Join(match, ", "), p)
		}
	}
	for _, r := range s.Required {
		if _, ok := out.Arguments[r]; !ok && !slices.ContainsFunc(verr.Fields, func(f fault.FieldError) bool { return f.Path == "inputs."+r }) {
			verr.Add("inputs."+r, "required by the tool's inputSchema but not provided (given: %s)", listOrNone(names))
		}
	}
	closed := strings.TrimSpace(string(s.AdditionalProperties)) == "false"
	for _, n := range names {
		if used[n] {
			continue
		}
		if closed {
			out.Unused = append(out.Unused, n)
			continue
		}
		out.Arguments[n] = inputs[n]
	}
	if err := verr.Err(); err != nil {
		return out, fmt.Errorf("%w: %w", ErrSchemaMismatch, err)
	}
	return out, nil
}

// invisibleNames refuses an input name holding a character that shows as
// nothing: a control or format character (zero-width space, joiners, bidi
// controls, Unicode category Cf), a variation selector or another default
// ignorable code point. "amount\u200b" beside "amount" reads as one name
// twice, yet would pass as two; no parameter name needs one.
func invisibleNames(inputs map[string]any) error {
	var bad []string
	for n := range inputs {
		if strings.IndexFunc(n, invisible) >= 0 {
			bad = append(bad, n)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	v := &fault.ValidationError{}
	for _, n := range bad {
		i := strings.IndexFunc(n, invisible)
		v.Add("inputs", "the input name %q holds an invisible character (%U at byte %d); name inputs with visible characters", n, []rune(n[i:])[0], i)
	}
	return v
}

// invisible reports a character that renders as nothing.
func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// normalize is the name a parameter and an input are compared by: NFKC
// (full-width "ａｍｏｕｎｔ" is "amount", as are other compatibility
// forms), ASCII letters lower-cased, and '_', '-', ' ' and '.' dropped.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, norm.NFKC.String(s))
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// FitInputs maps inputs onto inputSchema (MapInputs) and checks the result
// with validate: what an execution does before it calls a tool, so that
// the same rule can answer a caller before a run starts. validate is a
// Router's ValidateArguments (compiled schemas cached) or the package's
// ValidateArguments. Errors wrap ErrSchemaMismatch.
func FitInputs(inputSchema json.RawMessage, inputs map[string]any, validate func(json.RawMessage, map[string]any) error) (Mapping, error) {
	mapping, err := MapInputs(inputSchema, inputs)
	if err != nil {
		return Mapping{}, err
	}
	if err := validate(inputSchema, mapping.Arguments); err != nil {
		return Mapping{}, err
	}
	return mapping, nil
}
