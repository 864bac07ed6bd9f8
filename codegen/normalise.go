package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/yaml"

	"github.com/toolsmith/toolsmith/codegen/kit"
)

// ErrStructural marks a spec whose structure is broken (it cannot be parsed,
// converted or validated even with example, default, format and pattern
// checks relaxed): onboarding stops with this reason.
var ErrStructural = errors.New("structural spec error")

// Normalised is a spec ready for a wrapper: OpenAPI 3, no external refs.
type Normalised struct {
	Doc      *openapi3.T
	JSON     []byte   // the normalised spec, as embedded in the wrapper
	Version  string   // the input's version: "2.0", "3.0.3", …
	Warnings []string // problems shown to the reviewer that do not stop onboarding
}

// Normalise parses an OpenAPI 3.x or Swagger 2.0 document (JSON or YAML),
// converts Swagger to OpenAPI 3, refuses external $refs, and validates it:
// structural errors are returned wrapped in ErrStructural; example, default,
// format and pattern problems become warnings.
func Normalise(ctx context.Context, data []byte) (*Normalised, error) {
	var probe struct {
		Swagger string `json:"swagger"`
		OpenAPI string `json:"openapi"`
	}
	js, err := yaml.YAMLToJSON(data) // JSON is YAML, so this reads both
	if err != nil {
		return nil, fmt.Errorf("%w: not JSON or YAML: %v", ErrStructural, err)
	}
	if err := json.Unmarshal(js, &probe); err != nil {
		return nil, fmt.Errorf("%w: the document is not an object: %v", ErrStructural, err)
	}
	js, repairs, err := repair(js, strings.HasPrefix(probe.Swagger, "2"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStructural, err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	var doc *openapi3.T
	version := probe.OpenAPI
	switch {
	case strings.HasPrefix(probe.Swagger, "2"):
		version = probe.Swagger
		var v2 openapi2.T
		if err := json.Unmarshal(js, &v2); err != nil {
			return nil, fmt.Errorf("%w: swagger 2.0: %v", ErrStructural, err)
		}
		v3, err := openapi2conv.ToV3(&v2)
		if err != nil {
			return nil, fmt.Errorf("%w: converting swagger 2.0 to openapi 3: %v", ErrStructural, err)
		}
		// Round-trip through JSON so that refs resolve under the loader's rules.
		b, err := json.Marshal(v3)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrStructural, err)
		}
		if doc, err = loader.LoadFromData(b); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrStructural, err)
		}
	case strings.HasPrefix(probe.OpenAPI, "3"):
		if doc, err = loader.LoadFromData(js); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrStructural, err)
		}
	default:
		return nil, fmt.Errorf("%w: neither \"openapi: 3.x\" nor \"swagger: 2.0\" at the top level", ErrStructural)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, fmt.Errorf("%w: the spec has no paths", ErrStructural)
	}
	n := &Normalised{Doc: doc, Version: version, Warnings: repairs}
	// The loader does not insist on info (the validation below reports it
	// missing), so a spec without one has a nil Info.
	if v := infoVersion(doc); v != "" && !semverRe.MatchString(v) {
		n.Warnings = append(n.Warnings, fmt.Sprintf("the API version %q is not semver: its tools are versioned %s and keep %q as their source version", v, Semver(v), v))
	}
	n.Warnings = append(n.Warnings, dropUncompilablePatterns(doc)...)
	n.Warnings = append(n.Warnings, textBodiesAsStrings(doc)...)
	// Strict validation first, to report everything; then relaxed, to decide.
	if err := doc.Validate(ctx, openapi3.EnableExamplesValidation(), openapi3.EnableSchemaPatternValidation(), openapi3.EnableSchemaDefaultsValidation()); err != nil {
		relaxed := doc.Validate(ctx,
			openapi3.DisableExamplesValidation(),
			openapi3.DisableSchemaDefaultsValidation(),
			openapi3.DisableSchemaPatternValidation(),
			openapi3.DisableSchemaFormatValidation(),
		)
		if relaxed != nil {
			n.Warnings = append(n.Warnings, "spec validation: "+kit.FirstLine(relaxed.Error()))
		} else {
			n.Warnings = append(n.Warnings, "examples/defaults/patterns: "+kit.FirstLine(err.Error()))
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: serialising the normalised spec: %v", ErrStructural, err)
	}
	n.JSON = b
	return n, nil
}

// repair makes lossless fixes to a decoded spec before it is loaded, and
// says what it changed:
//   - a "required" list that names a property twice keeps one of each
//     (JSON Schema wants the names unique; the set of required properties
//     is the same);
//   - a null where the spec needs an object or a list (a path item, an
//     operation, a parameter, a schema, …) is removed, as if absent: kin-openapi
//     reads such a null as a nil pointer and its converter and validator
//     dereference those, so `"paths": {"/a": null}` crashed the import.
//     Nulls that are values (example, default, enum and const values,
//     x- extensions) stay.
//   - a list where a schema is expected ("items": [{…}], JSON Schema's
//     tuple form, or a list under "schema", "additionalProperties", "not"
//     or as a property's or definition's schema), which kin-openapi cannot
//     read at all ("cannot unmarshal array into … Schema"), so the whole spec
//     failed to load: a list of one schema, or of equal ones, becomes that
//     schema; an empty list becomes {} (it constrained nothing); a list of
//     different schemas becomes their anyOf (OpenAPI 3) or, Swagger 2.0
//     having no anyOf, {} (any value), each said in a warning.
func repair(js []byte, swagger2 bool) ([]byte, []string, error) {
	var root any
	if err := json.Unmarshal(js, &root); err != nil {
		return nil, nil, err
	}
	dups, nulls := 0, 0
	var listed, loosened []string // where a list stood for a schema
	// asSchema repairs a list that stands where a schema is expected.
	asSchema := func(at string, list []any) any {
		distinct := []any{}
		for _, c := range list {
			if c == nil {
				continue
			}
			dup := false
			for _, d := range distinct {
				if reflect.DeepEqual(c, d) {
					dup = true
				}
			}
			if !dup {
				distinct = append(distinct, c)
			}
		}
		switch {
		case len(distinct) == 0:
			listed = append(listed, at)
			return map[string]any{}
		case len(distinct) == 1:
			listed = append(listed, at)
			return distinct[0]
		case swagger2:
			loosened = append(loosened, at)
			return map[string]any{}
		default:
			listed = append(listed, at)
			return map[string]any{"anyOf": distinct}
		}
	}
	// walk repairs v and returns it; names says v's keys are names (of
	// paths, properties, schemas, …), not keywords, and schemas that the
	// values under those names are schemas.
	var walk func(v any, names, schemas bool, at string) any
	walk = func(v any, names, schemas bool, at string) any {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedMapKeys(x) {
				c := x[k]
				here := at + "/" + k
				if list, ok := c.([]any); ok && ((names && schemas) || (!names && schemaKeywords[k])) {
					c = asSchema(here, list)
					x[k] = c
				}
				switch {
				case !names && k == "examples":
					// Named Example objects (OpenAPI), or a list of values
					// (JSON Schema), which stays as it is.
					if m, ok := c.(map[string]any); ok {
						x[k] = walk(m, true, false, here)
					}
				case !names && (valueKeywords[k] || strings.HasPrefix(k, "x-")):
					// A value, nulls included, stays as it is.
				case c == nil:
					nulls++
					delete(x, k)
				default:
					x[k] = walk(c, !names && nameMaps[k], !names && schemaMaps[k], here)
				}
			}
			if req, ok := x["required"].([]any); ok && !names {
				seen := map[string]bool{}
				out := req[:0:0]
				for _, r := range req {
					s, isString := r.(string)
					if isString && seen[s] {
						dups++
						continue
					}
					if isString {
						seen[s] = true
					}
					out = append(out, r)
				}
				x["required"] = out
			}
			return x
		case []any:
			out := x[:0:0]
			for i, c := range x {
				if c == nil {
					nulls++
					continue
				}
				out = append(out, walk(c, false, false, fmt.Sprintf("%s/%d", at, i)))
			}
			return out
		}
		return v
	}
	root = walk(root, false, false, "#")
	if dups == 0 && nulls == 0 && len(listed) == 0 && len(loosened) == 0 {
		return js, nil, nil
	}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, nil, err
	}
	var said []string
	if dups > 0 {
		said = append(said, fmt.Sprintf("removed %d duplicate name(s) from \"required\" lists (the required properties are unchanged)", dups))
	}
	if nulls > 0 {
		said = append(said, fmt.Sprintf("removed %d null(s) where the spec needs an object, a list or a string (read as absent)", nulls))
	}
	if len(listed) > 0 {
		said = append(said, fmt.Sprintf("read %d list(s) given where a schema is expected as the schema they list (one schema, or anyOf several): %s", len(listed), someOf(listed)))
	}
	if len(loosened) > 0 {
		said = append(said, fmt.Sprintf("read %d list(s) of different schemas given where one schema is expected as any value (Swagger 2.0 has no anyOf), so those values are not validated: %s", len(loosened), someOf(loosened)))
	}
	return b, said, nil
}

// someOf names the first three places of a list, and how many more.
func someOf(where []string) string {
	sort.Strings(where)
	if len(where) <= 3 {
		return strings.Join(where, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(where[:3], ", "), len(where)-3)
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// schemaKeywords are the keywords whose value is one schema.
var schemaKeywords = map[string]bool{"items": true, "schema": true, "additionalProperties": true, "not": true,
	"additionalItems": true, "contains": true, "propertyNames": true}

// schemaMaps are the name maps whose values are schemas.
var schemaMaps = map[string]bool{"properties": true, "patternProperties": true, "definitions": true, "$defs": true,
	"schemas": true, "dependentSchemas": true}

// valueKeywords hold values, where null is a value like any other.
var valueKeywords = map[string]bool{"example": true, "default": true, "enum": true, "const": true, "value": true}

// nameMaps are the keywords whose keys are names chosen by the spec's
// author (a property may be called "example"), not keywords.
var nameMaps = map[string]bool{"paths": true, "properties": true, "patternProperties": true, "definitions": true, "$defs": true,
	"schemas": true, "parameters": true, "responses": true, "requestBodies": true, "headers": true, "securitySchemes": true,
	"securityDefinitions": true, "links": true, "callbacks": true, "content": true, "encoding": true, "variables": true,
	"mapping": true, "scopes": true, "webhooks": true, "pathItems": true, "dependentSchemas": true}

func infoVersion(doc *openapi3.T) string {
	if doc.Info == nil {
		return ""
	}
	return doc.Info.Version
}

// semverRe is semver.org's core grammar (what a manifest's version needs).
var semverRe = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)

var versionNumbers = regexp.MustCompile(`\d+`)

// Semver maps an API's version to the semver a manifest needs: the first
// three numbers, without leading zeros ("2.2.01" → 2.2.1, "2015-08-24" →
// 2015.8.24, "v3" → 3.0.0). Callers keep the original beside it.
func Semver(v string) string {
	parts := versionNumbers.FindAllString(v, 3)
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	for i, p := range parts {
		if p = strings.TrimLeft(p, "0"); p == "" {
			p = "0"
		}
		parts[i] = p
	}
	return strings.Join(parts, ".")
}

// textBodiesAsStrings gives every text/* request or response body a string
// schema: such a body travels as text, and a schema of another type (an
// object, an array of rows for text/csv) is one no validator can apply to
// it, so the operation could never be called. The text itself is unchanged.
func textBodiesAsStrings(doc *openapi3.T) []string {
	var where []string
	fix := func(content openapi3.Content, label string) {
		types := make([]string, 0, len(content))
		for mt := range content {
			types = append(types, mt)
		}
		sort.Strings(types)
		for _, mt := range types {
			m := content[mt]
			if m == nil || m.Schema == nil || m.Schema.Value == nil || !strings.HasPrefix(strings.ToLower(mt), "text/") {
				continue
			}
			old := m.Schema.Value
			if old.Type != nil && old.Type.Is(openapi3.TypeString) {
				continue
			}
			m.Schema = openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Description: old.Description})
			where = append(where, label+" "+mt)
		}
	}
	for _, t := range kit.Operations(doc) {
		_, op, err := kit.Operation(doc, t)
		if err != nil {
			continue
		}
		label := t.Method + " " + t.Path
		if op.RequestBody != nil && op.RequestBody.Value != nil {
			fix(op.RequestBody.Value.Content, label+" request")
		}
		if op.Responses != nil {
			for code, r := range op.Responses.Map() {
				if r != nil && r.Value != nil {
					fix(r.Value.Content, label+" "+code)
				}
			}
		}
	}
	if len(where) == 0 {
		return nil
	}
	sort.Strings(where)
	more := ""
	if len(where) > 3 {
		more = fmt.Sprintf(" and %d more", len(where)-3)
		where = where[:3]
	}
	return []string{fmt.Sprintf("text bodies are read and sent as strings (their declared schemas cannot apply to text): %s%s", strings.Join(where, "; "), more)}
}
