package kit

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp/syntax"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Sample returns a value that satisfies schema, preferring the schema's own
// example, default or first enum value when they validate, and synthesising
// one from types, formats, patterns and bounds otherwise. ok is false when no
// valid value could be found (the caller then skips or reports).
func Sample(s *openapi3.Schema) (v any, ok bool) {
	return sample(s, 0, newBudget())
}

// direction says which way a sampled value travels: readOnly properties
// belong to responses only and writeOnly ones to requests only, even when
// they are listed as required (OpenAPI 3.0: "required" takes effect in the
// direction the property travels).
type direction int

const (
	either direction = iota
	request
	response
)

// sampleFor is Sample for a value that travels one way.
func sampleFor(s *openapi3.Schema, d direction) (any, bool) {
	b := newBudget()
	b.dir = d
	return sample(s, 0, b)
}

// visitOptions validate a value as it travels.
func (d direction) visitOptions() []openapi3.SchemaValidationOption {
	switch d {
	case request:
		return []openapi3.SchemaValidationOption{openapi3.VisitAsRequest()}
	case response:
		return []openapi3.SchemaValidationOption{openapi3.VisitAsResponse()}
	}
	return []openapi3.SchemaValidationOption{openapi3.DisableReadOnlyValidation(), openapi3.DisableWriteOnlyValidation()}
}

// skips reports whether a property never travels this way.
func (d direction) skips(p *openapi3.Schema) bool {
	return d == request && p.ReadOnly || d == response && p.WriteOnly
}

// maxDepth bounds recursion through nested (possibly recursive) schemas.
const maxDepth = 24

// maxSteps bounds the work of one top-level Sample or synthesis: a schema
// whose alternatives nest (oneOf in allOf in oneOf …) would otherwise be
// explored exponentially in its depth. Past the budget, values are the
// cheapest that fit the type.
const maxSteps = 20000

// budget counts the steps left to one top-level call, and says which way
// the value travels.
type budget struct {
	left int
	dir  direction
}

func newBudget() *budget { return &budget{left: maxSteps} }

// spend takes a step and reports whether the budget allowed it.
func (b *budget) spend() bool {
	b.left--
	return b.left >= 0
}

func sample(s *openapi3.Schema, depth int, b *budget) (v any, ok bool) {
	if s == nil {
		return map[string]any{}, true
	}
	for _, c := range candidates(s, depth, b) {
		c = normaliseJSON(c)
		if s.VisitJSON(c, b.dir.visitOptions()...) == nil {
			return c, true
		}
	}
	return nil, false
}

// candidates lists plausible values for s, best first.
func candidates(s *openapi3.Schema, depth int, b *budget) []any {
	var out []any
	if s.Example != nil {
		out = append(out, s.Example)
	}
	if s.Default != nil {
		out = append(out, s.Default)
	}
	if len(s.Enum) > 0 {
		out = append(out, s.Enum...)
	}
	if depth > maxDepth || !b.spend() {
		return append(out, nil, map[string]any{}, "x", 1.0, []any{})
	}
	if len(s.AllOf) > 0 {
		out = append(out, synthesise(mergeAllOf(s), depth, b))
	}
	for _, group := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf} {
		for _, r := range group {
			if r != nil && r.Value != nil {
				merged := *r.Value
				// Keep the parent's own properties beside the alternative's.
				if len(s.Properties) > 0 && merged.Properties == nil {
					merged.Properties = s.Properties
				}
				out = append(out, candidates(&merged, depth+1, b)...)
			}
		}
	}
	out = append(out, synthesise(s, depth, b))
	if s.Nullable {
		out = append(out, nil)
	}
	return out
}

func mergeAllOf(s *openapi3.Schema) *openapi3.Schema {
	m := *s
	m.AllOf = nil
	m.Properties = openapi3.Schemas{}
	for k, v := range s.Properties {
		m.Properties[k] = v
	}
	req := append([]string{}, s.Required...)
	for _, r := range s.AllOf {
		if r == nil || r.Value == nil {
			continue
		}
		sub := r.Value
		if len(sub.AllOf) > 0 {
			sub = mergeAllOf(sub)
		}
		if m.Type == nil || len(m.Type.Slice()) == 0 {
			m.Type = sub.Type
		}
		for k, v := range sub.Properties {
			m.Properties[k] = v
		}
		req = append(req, sub.Required...)
		if m.Format == "" {
			m.Format = sub.Format
		}
		if len(m.Enum) == 0 {
			m.Enum = sub.Enum
		}
	}
	m.Required = req
	return &m
}

func typeOf(s *openapi3.Schema) string {
	if s.Type != nil {
		for _, t := range s.Type.Slice() {
			if t != "null" {
				return t
			}
		}
	}
	switch {
	case len(s.Properties) > 0 || s.AdditionalProperties.Schema != nil:
		return "object"
	case s.Items != nil:
		return "array"
	case s.Pattern != "" || s.Format != "" || s.MinLength > 0:
		return "string"
	case s.Min != nil || s.Max != nil:
		return "number"
	}
	return ""
}

func synthesise(s *openapi3.Schema, depth int, b *budget) any {
	if len(s.AllOf) > 0 {
		s = mergeAllOf(s)
	}
	deep := depth > maxDepth || !b.spend()
	switch typeOf(s) {
	case "object":
		obj := map[string]any{}
		if deep {
			for _, r := range s.Required {
				obj[r] = "x"
			}
			return obj
		}
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		required := map[string]bool{}
		for _, r := range s.Required {
			required[r] = true
		}
		for _, k := range names {
			ref := s.Properties[k]
			if ref == nil || ref.Value == nil || b.dir.skips(ref.Value) || (!required[k] && (ref.Value.ReadOnly || depth > 3)) {
				continue
			}
			if v, ok := sample(ref.Value, depth+1, b); ok {
				obj[k] = v
			} else if required[k] {
				obj[k] = synthesise(ref.Value, depth+1, b)
			}
		}
		for _, r := range s.Required {
			if ref := s.Properties[r]; ref != nil && ref.Value != nil && b.dir.skips(ref.Value) {
				continue
			}
			if _, ok := obj[r]; !ok {
				obj[r] = "x"
			}
		}
		return obj
	case "array":
		n := int(s.MinItems)
		if n == 0 {
			n = 1
		}
		if s.MaxItems != nil && uint64(n) > *s.MaxItems {
			n = int(*s.MaxItems)
		}
		arr := make([]any, 0, n)
		for i := 0; i < n; i++ {
			var item any = "x"
			if s.Items != nil && s.Items.Value != nil && !deep {
				if v, ok := sample(s.Items.Value, depth+1, b); ok {
					item = v
				} else {
					item = synthesise(s.Items.Value, depth+1, b)
				}
			}
			if s.UniqueItems && i > 0 {
				if str, ok := item.(string); ok {
					item = fmt.Sprintf("%s%d", str, i)
				} else if f, ok := item.(float64); ok {
					item = f + float64(i)
				}
			}
			arr = append(arr, item)
		}
		return arr
	case "integer":
		return number(s, true)
	case "number":
		return number(s, false)
	case "boolean":
		return true
	case "string":
		return str(s)
	}
	return "x"
}

func number(s *openapi3.Schema, integer bool) any {
	v := 1.0
	if s.Min != nil {
		v = *s.Min
		if s.ExclusiveMin.IsTrue() || (s.ExclusiveMin.Value != nil) {
			v++
		}
	} else if s.Max != nil && *s.Max < v {
		v = *s.Max
		if s.ExclusiveMax.IsTrue() || (s.ExclusiveMax.Value != nil) {
			v--
		}
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		m := *s.MultipleOf
		v = math.Ceil(v/m) * m
	}
	if integer {
		v = math.Ceil(v)
	}
	return v
}

func str(s *openapi3.Schema) string {
	var v string
	switch s.Format {
	case "date-time":
		v = "2024-01-02T03:04:05Z"
	case "date":
		v = "2024-01-02"
	case "time":
		v = "03:04:05"
	case "email":
		v = "user@example.com"
	case "uuid":
		v = "123e4567-e89b-12d3-a456-426614174000"
	case "uri", "url":
		v = "https://example.com/x"
	case "hostname":
		v = "example.com"
	case "ipv4":
		v = "192.0.2.1"
	case "ipv6":
		v = "2001:db8::1"
	case "byte":
		v = "eA=="
	case "int32", "int64":
		v = "1"
	default:
		v = "x"
	}
	if s.Pattern != "" {
		if p, ok := fromPattern(s.Pattern, int(s.MinLength)); ok {
			v = p
		}
	}
	for uint64(len([]rune(v))) < s.MinLength {
		v += "x"
	}
	if s.MaxLength != nil && uint64(len([]rune(v))) > *s.MaxLength {
		v = string([]rune(v)[:*s.MaxLength])
	}
	return v
}

// fromPattern builds a string matching a regular expression by walking its
// syntax tree and taking the simplest branch of each node.
func fromPattern(pattern string, minLen int) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !gen(&b, re.Simplify(), 0) {
		return "", false
	}
	return b.String(), true
}

func gen(b *strings.Builder, re *syntax.Regexp, depth int) bool {
	if depth > 50 {
		return false
	}
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) < 2 {
			return false
		}
		// Prefer a letter or digit inside the class.
		r := re.Rune[0]
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for _, want := range []rune{'a', 'A', '0'} {
				if lo <= want && want <= hi {
					r = want
					goto found
				}
			}
		}
	found:
		b.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture:
		return gen(b, re.Sub[0], depth+1)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !gen(b, sub, depth+1) {
				return false
			}
		}
	case syntax.OpAlternate:
		return gen(b, re.Sub[0], depth+1)
	case syntax.OpStar, syntax.OpQuest:
		// zero repetitions
	case syntax.OpPlus:
		return gen(b, re.Sub[0], depth+1)
	case syntax.OpRepeat:
		for i := 0; i < re.Min; i++ {
			if !gen(b, re.Sub[0], depth+1) {
				return false
			}
		}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
	default:
		return false
	}
	return true
}

// InvalidInput returns arguments the tool's input schema refuses: a required
// argument left out when there is one, else an unknown argument.
func InvalidInput(schema *openapi3.Schema, valid map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range valid {
		out[k] = v
	}
	if len(schema.Required) > 0 {
		delete(out, schema.Required[0])
		return out
	}
	out["__not_a_parameter__"] = true
	return out
}

// ValidInput returns arguments satisfying a tool's input schema.
func ValidInput(schema *openapi3.Schema) (map[string]any, error) {
	v, ok := sampleFor(schema, request)
	if !ok {
		return nil, fmt.Errorf("kit: no value satisfies the input schema")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("kit: input sample is %T, not an object", v)
	}
	return m, nil
}

// MarshalIndent is json.MarshalIndent with two spaces.
func MarshalIndent(v any) []byte {
	b, _ := json.MarshalIndent(v, "", "  ")
	return b
}
