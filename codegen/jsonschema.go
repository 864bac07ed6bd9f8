package codegen

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxSchemaDepth bounds the inlining of nested and recursive schemas in
// ToJSONSchema; deeper levels become {} (anything), which keeps manifests
// small and finite. The wrapper still validates the full spec at run time.
const maxSchemaDepth = 6

// maxSchemaNodes bounds the size of a converted schema: a spec whose
// objects refer to many others explodes when inlined (one real spec gave a
// 3 MB input schema at depth 6, which took the JSON Schema compiler nearly a
// minute and no planner could read). ToJSONSchema inlines to the deepest
// level at which the result stays within this many subschemas.
const maxSchemaNodes = 2000

// maxSchemaBytes bounds a converted schema's JSON: within maxSchemaNodes,
// subschemas with long titles, enums or defaults still multiplied (a 1.7 kB
// recursive schema gave 570 kB, over what registration accepts, 512 kB, so
// every manifest of the operation was refused; found by FuzzToJSONSchema).
// Half of registration's bound leaves room for the rest of the manifest.
const maxSchemaBytes = 256 << 10

// ToJSONSchema converts an OpenAPI 3.0 schema into a JSON Schema (draft
// 2020-12) document for a tool manifest: $refs are inlined (recursion cut at
// a bounded depth), nullable becomes a "null" type, boolean exclusive bounds
// become numeric ones, and OpenAPI-only keywords (discriminator, xml,
// example, externalDocs) are dropped.
//
// Large schemas are inlined less deeply: the depth is the largest (at most
// maxSchemaDepth) whose result has at most maxSchemaNodes subschemas and
// maxSchemaBytes bytes. At depth 0 only the schema's own keywords remain
// (its subschemas admit anything), which is as large as the spec made it.
func ToJSONSchema(s *openapi3.Schema) json.RawMessage {
	for limit := maxSchemaDepth; ; limit-- {
		c := converter{limit: limit, budget: maxSchemaNodes, bounded: limit > 1}
		out := c.convert(s, 0)
		if c.budget < 0 {
			continue
		}
		b, _ := json.Marshal(out)
		if len(b) <= maxSchemaBytes || limit == 0 {
			return b
		}
	}
}

// jsonSchemaTypes are the type names of JSON Schema.
var jsonSchemaTypes = []string{openapi3.TypeArray, openapi3.TypeBoolean, openapi3.TypeInteger, openapi3.TypeNull,
	openapi3.TypeNumber, openapi3.TypeObject, openapi3.TypeString}

// converter converts one schema at a depth limit. While bounded, every
// subschema it emits spends one of budget; once budget is below zero the
// result is incomplete and the conversion stops early.
type converter struct {
	limit   int
	budget  int
	bounded bool
}

func (c *converter) convert(s *openapi3.Schema, depth int) map[string]any {
	out := map[string]any{}
	if s == nil {
		return out
	}
	if c.bounded {
		if c.budget--; c.budget < 0 {
			return out
		}
	}
	if depth > c.limit {
		return out
	}
	if s.Type != nil {
		// JSON Schema knows seven type names and wants them unique: an
		// OpenAPI 3.1-style list may already hold "null" (or repeat a
		// type), and a spec may name a type JSON Schema lacks ("", "file");
		// registration refused ["string","null","null"] and "". An unknown
		// name constrains nothing here (the wrapper validates against the
		// spec itself).
		var types []string
		for _, t := range s.Type.Slice() {
			if slices.Contains(jsonSchemaTypes, t) && !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		if s.Nullable && len(types) > 0 && !slices.Contains(types, openapi3.TypeNull) {
			types = append(types, openapi3.TypeNull)
		}
		switch len(types) {
		case 0:
		case 1:
			out["type"] = types[0]
		default:
			out["type"] = types
		}
	}
	if s.Title != "" {
		out["title"] = s.Title
	}
	if s.Description != "" {
		out["description"] = trim(s.Description, 300)
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		out["enum"] = s.Enum
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	if s.Pattern != "" {
		out["pattern"] = s.Pattern
	}
	if s.MinLength > 0 {
		out["minLength"] = s.MinLength
	}
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	if s.Min != nil {
		if s.ExclusiveMin.IsTrue() {
			out["exclusiveMinimum"] = *s.Min
		} else {
			out["minimum"] = *s.Min
		}
	} else if s.ExclusiveMin.Value != nil {
		out["exclusiveMinimum"] = *s.ExclusiveMin.Value
	}
	if s.Max != nil {
		if s.ExclusiveMax.IsTrue() {
			out["exclusiveMaximum"] = *s.Max
		} else {
			out["maximum"] = *s.Max
		}
	} else if s.ExclusiveMax.Value != nil {
		out["exclusiveMaximum"] = *s.ExclusiveMax.Value
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		// JSON Schema's multipleOf must be positive; 0 or less in a
		// spec divides nothing and would make registration refuse the
		// manifest.
		out["multipleOf"] = *s.MultipleOf
	}
	if s.MinItems > 0 {
		out["minItems"] = s.MinItems
	}
	if s.MaxItems != nil {
		out["maxItems"] = *s.MaxItems
	}
	if s.UniqueItems {
		out["uniqueItems"] = true
	}
	if s.Items != nil {
		out["items"] = c.convert(s.Items.Value, depth+1)
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if ref := s.Properties[k]; ref != nil {
				props[k] = c.convert(ref.Value, depth+1)
			}
		}
		out["properties"] = props
	}
	if len(s.Required) > 0 {
		out["required"] = s.Required
	}
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		out["additionalProperties"] = false
	} else if s.AdditionalProperties.Schema != nil {
		out["additionalProperties"] = c.convert(s.AdditionalProperties.Schema.Value, depth+1)
	}
	for key, group := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "oneOf": s.OneOf, "anyOf": s.AnyOf} {
		if len(group) == 0 {
			continue
		}
		list := make([]any, 0, len(group))
		for _, r := range group {
			if r != nil {
				list = append(list, c.convert(r.Value, depth+1))
			}
		}
		out[key] = list
	}
	if s.Not != nil {
		out["not"] = c.convert(s.Not.Value, depth+1)
	}
	return out
}

func trim(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
