package codegen

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"
)

// dropUncompilablePatterns removes the "pattern" of every schema whose
// regular expression Go's RE2 engine (which kin-openapi validates with)
// cannot compile — e.g. repeat counts over 1000 or look-arounds — so that
// such a schema does not refuse every value. Each dropped pattern becomes a
// reviewer warning.
func dropUncompilablePatterns(doc *openapi3.T) []string {
	seen := map[*openapi3.Schema]bool{}
	dropped := map[string]string{}
	var visit func(s *openapi3.Schema)
	visitRef := func(r *openapi3.SchemaRef) {
		if r != nil {
			visit(r.Value)
		}
	}
	visit = func(s *openapi3.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Pattern != "" {
			if _, err := regexp.Compile(s.Pattern); err != nil {
				dropped[s.Pattern] = err.Error()
				s.Pattern = ""
			}
		}
		for _, p := range s.Properties {
			visitRef(p)
		}
		visitRef(s.Items)
		visitRef(s.Not)
		visitRef(s.AdditionalProperties.Schema)
		for _, group := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, r := range group {
				visitRef(r)
			}
		}
	}
	visitParams := func(ps openapi3.Parameters) {
		for _, p := range ps {
			if p != nil && p.Value != nil {
				visitRef(p.Value.Schema)
				for _, mt := range p.Value.Content {
					visitRef(mt.Schema)
				}
			}
		}
	}
	visitContent := func(c openapi3.Content) {
		for _, mt := range c {
			if mt != nil {
				visitRef(mt.Schema)
			}
		}
	}
	if doc.Components != nil {
		for _, s := range doc.Components.Schemas {
			visitRef(s)
		}
		for _, p := range doc.Components.Parameters {
			if p != nil && p.Value != nil {
				visitRef(p.Value.Schema)
			}
		}
		for _, rb := range doc.Components.RequestBodies {
			if rb != nil && rb.Value != nil {
				visitContent(rb.Value.Content)
			}
		}
		for _, r := range doc.Components.Responses {
			if r != nil && r.Value != nil {
				visitContent(r.Value.Content)
			}
		}
	}
	for _, item := range doc.Paths.Map() {
		visitParams(item.Parameters)
		for _, op := range item.Operations() {
			visitParams(op.Parameters)
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				visitContent(op.RequestBody.Value.Content)
			}
			if op.Responses != nil {
				for _, r := range op.Responses.Map() {
					if r != nil && r.Value != nil {
						visitContent(r.Value.Content)
					}
				}
			}
		}
	}
	patterns := make([]string, 0, len(dropped))
	for p := range dropped {
		patterns = append(patterns, p)
	}
	sort.Strings(patterns)
	var warnings []string
	for i, p := range patterns {
		if i == 5 {
			warnings = append(warnings, fmt.Sprintf("… and %d more patterns dropped", len(patterns)-5))
			break
		}
		warnings = append(warnings, fmt.Sprintf("pattern %q dropped: Go's regexp (RE2) cannot compile it (%s)", p, dropped[p]))
	}
	return warnings
}
