package codegen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
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

// TestToJSONSchemaStaysSmallWhenReferencesFanOut converts a schema whose
// objects each refer to eight objects of the next level: inlined to
// maxSchemaDepth it would hold 8^6 subschemas. The result must stay within
// maxSchemaNodes, keep the top levels, and compile quickly.
func TestToJSONSchemaStaysSmallWhenReferencesFanOut(t *testing.T) {
	level := &openapi3.Schema{Type: &openapi3.Types{"string"}}
	for d := 0; d < 8; d++ {
		next := &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: openapi3.Schemas{}}
		for p := 0; p < 8; p++ {
			next.Properties[fmt.Sprintf("p%d", p)] = &openapi3.SchemaRef{Value: level}
		}
		level = next
	}
	raw := ToJSONSchema(level)
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	nodes := 0
	var walk func(v any)
	walk = func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		nodes++
		if props, ok := m["properties"].(map[string]any); ok {
			for _, p := range props {
				walk(p)
			}
		}
	}
	walk(doc)
	if nodes > maxSchemaNodes || nodes < 8*8 {
		t.Fatalf("%d subschemas (%d bytes): want between 64 and %d", nodes, len(raw), maxSchemaNodes)
	}
	top := doc.(map[string]any)["properties"].(map[string]any)
	if inner, _ := top["p0"].(map[string]any)["properties"].(map[string]any); len(inner) != 8 {
		t.Fatalf("the second level was cut: %v", top["p0"])
	}
	c := jsonschema.NewCompiler()
	jd, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err := c.AddResource("input.json", jd); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("input.json"); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func roundTrip(v any) any {
	b, _ := json.Marshal(v)
	out, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	return out
}

// Types convert to JSON Schema's type names, each once, which JSON Schema
// requires: FuzzToJSONSchema found {"type": ["string", "null"], "nullable":
// true} converted to ["string","null","null"], and {"type": ""} kept as "",
// both refused by registration.
func TestToJSONSchemaTypesAreUnique(t *testing.T) {
	for in, want := range map[string]string{
		`{"type": ["string", "null"], "nullable": true}`:  `["string","null"]`,
		`{"type": ["string", "string"]}`:                  `"string"`,
		`{"type": "string", "nullable": true}`:            `["string","null"]`,
		`{"type": ""}`:                                    ``,
		`{"type": ["file", "integer"], "nullable": true}`: `["integer","null"]`,
	} {
		var s openapi3.Schema
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Fatal(err)
		}
		var out struct {
			Type json.RawMessage `json:"type"`
		}
		raw := ToJSONSchema(&s)
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		if string(out.Type) != want {
			t.Errorf("%s: type %s, want %s", in, out.Type, want)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("s.json", doc); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile("s.json"); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// A multipleOf of 0 or less (which JSON Schema forbids, and which divides
// nothing) is left out rather than refused at registration; found by
// FuzzToJSONSchema.
func TestToJSONSchemaDropsNonPositiveMultipleOf(t *testing.T) {
	for in, want := range map[string]bool{`{"multipleOf": 0}`: false, `{"multipleOf": -2}`: false, `{"multipleOf": 0.5}`: true} {
		var s openapi3.Schema
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(ToJSONSchema(&s)), "multipleOf"); got != want {
			t.Errorf("%s: multipleOf kept = %v, want %v", in, got, want)
		}
	}
}

// A small recursive schema whose subschemas carry long titles inlines only
// as deep as maxSchemaBytes allows: FuzzToJSONSchema found a 1.7 kB schema
// converting to 570 kB, more than registration accepts.
func TestToJSONSchemaBoundsBytes(t *testing.T) {
	s := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Title: strings.Repeat("t", 1500)}
	s.Properties = openapi3.Schemas{}
	for _, k := range []string{"a", "b", "c"} {
		s.Properties[k] = &openapi3.SchemaRef{Ref: "#/components/schemas/S", Value: s}
	}
	raw := ToJSONSchema(s)
	if len(raw) > maxSchemaBytes {
		t.Fatalf("%d bytes, over %d", len(raw), maxSchemaBytes)
	}
	var out struct {
		Properties map[string]struct {
			Title string `json:"title"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.Properties["a"].Title == "" {
		t.Errorf("not even one level inlined: %.200s", raw)
	}
}
