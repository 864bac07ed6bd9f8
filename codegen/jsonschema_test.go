package codegen

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolsmith/toolsmith/codegen/kit"
)

// TestToJSONSchemaCompilesAndAgreesWithTheSpec converts every input schema
// of the test specs to JSON Schema, compiles it with a draft 2020-12
// validator, and checks that it accepts the wrapper's valid input and
// refuses its invalid one, as the OpenAPI schema does.
func TestToJSONSchemaCompilesAndAgreesWithTheSpec(t *testing.T) {
	for _, name := range []string{"petstore", "swagger2"} {
		data, err := os.ReadFile(specPath(t, name))
		if err != nil {
			t.Fatal(err)
		}
		n, err := Normalise(context.Background(), data)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range kit.Operations(n.Doc) {
			s, err := kit.InputSchema(n.Doc, tl)
			if err != nil {
				t.Fatal(err)
			}
			raw := ToJSONSchema(s)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource("input.json", doc); err != nil {
				t.Fatal(err)
			}
			compiled, err := c.Compile("input.json")
			if err != nil {
				t.Fatalf("%s/%s: %v\n%s", name, tl.Name, err, raw)
			}
			valid, err := kit.ValidInput(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := compiled.Validate(roundTrip(valid)); err != nil {
				t.Errorf("%s/%s: JSON Schema refuses valid input %v: %v", name, tl.Name, valid, err)
			}
			if err := compiled.Validate(roundTrip(kit.InvalidInput(s, valid))); err == nil {
				t.Errorf("%s/%s: JSON Schema accepts invalid input", name, tl.Name)
			}
		}
	}
	nullable := &openapi3.Schema{Type: &openapi3.Types{"integer"}, Nullable: true, Min: ptr(1.0), ExclusiveMin: openapi3.ExclusiveBound{Bool: ptr(true)}}
	var got map[string]any
	_ = json.Unmarshal(ToJSONSchema(nullable), &got)
	if types, _ := got["type"].([]any); len(types) != 2 || got["exclusiveMinimum"] != 1.0 || got["minimum"] != nil {
		t.Fatalf("nullable/exclusive conversion: %v", got)
	}
}

func ptr[T any](v T) *T { return &v }

func roundTrip(v any) any {
	b, _ := json.Marshal(v)
	out, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	return out
}
