package codegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	n := &Normalised{Doc: doc, Version: version}
	n.Warnings = append(n.Warnings, dropUncompilablePatterns(doc)...)
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
