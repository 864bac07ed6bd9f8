package codegen

import (
	"encoding/json"
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

// ToJSONSchema converts an OpenAPI 3.0 schema into a JSON Schema (draft
// 2020-12) document for a tool manifest: $refs are inlined (recursion cut at
// a bounded depth), nullable becomes a "null" type, boolean exclusive bounds
// become numeric ones, and OpenAPI-only keywords (discriminator, xml,
// example, externalDocs) are dropped.
//
// Large schemas are inlined less deeply: the depth is the largest (at most
// maxSchemaDepth, at least 1) whose result has at most maxSchemaNodes
// subschemas.
func ToJSONSchema(s *openapi3.Schema) json.RawMessage {
	limit := maxSchemaDepth
	for limit > 1 {
		budget := maxSchemaNodes
		if countNodes(s, 0, limit, &budget) {
			break
		}
		limit--
	}
	b, _ := json.Marshal(convert(s, 0, limit))
	return b
}

// countNodes counts the subschemas convert would emit at this depth limit
// against budget and reports whether they fit; it stops as soon as they do
// not.
func countNodes(s *openapi3.Schema, depth, limit int, budget *int) bool {
	if s == nil {
		return true
	}
	if *budget--; *budget < 0 {
		return false
	}
	if depth > limit { // emitted as {}
		return true
	}
	next := func(r *openapi3.SchemaRef) bool {
		return r == nil || countNodes(r.Value, depth+1, limit, budget)
	}
	if !next(s.Items) || !next(s.Not) || !next(s.AdditionalProperties.Schema) {
		return false
	}
	for _, r := range s.Properties {
		if !next(r) {
			return false
		}
	}
	for _, group := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, r := range group {
			if !next(r) {
				return false
			}
		}
	}
	return true
}

func convert(s *openapi3.Schema, depth, limit int) map[string]any {
	out := map[string]any{}
	if s == nil || depth > limit {
		return out
	}
	if s.Type != nil {
		types := append([]string(nil), s.Type.Slice()...)
		if s.Nullable && len(types) > 0 {
			types = append(types, "null")
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
	if s.MultipleOf != nil {
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
		out["items"] = convert(s.Items.Value, depth+1, limit)
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
				props[k] = convert(ref.Value, depth+1, limit)
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
		out["additionalProperties"] = convert(s.AdditionalProperties.Schema.Value, depth+1, limit)
	}
	for key, group := range map[string]openapi3.SchemaRefs{"allOf": s.AllOf, "oneOf": s.OneOf, "anyOf": s.AnyOf} {
		if len(group) == 0 {
			continue
		}
		list := make([]any, 0, len(group))
		for _, r := range group {
			if r != nil {
				list = append(list, convert(r.Value, depth+1, limit))
			}
		}
		out[key] = list
	}
	if s.Not != nil {
		out["not"] = convert(s.Not.Value, depth+1, limit)
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
