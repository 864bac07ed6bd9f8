package codegen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/tool"
)

// FuzzNormalise imports arbitrary bytes as an OpenAPI or Swagger document,
// as onboarding does. Seeds are in testdata/fuzz/FuzzNormalise (the specs
// of testdata/ and of airlock/testdata/regressions). Properties:
//   - every failure wraps ErrStructural;
//   - a normalised spec has paths and is JSON that normalises again to the
//     same JSON (Normalise is idempotent, so a wrapper embedding it sees
//     what the reviewer saw);
//   - every operation's input schema converts to a JSON Schema that tool
//     registration accepts (see checkConverted).
func FuzzNormalise(f *testing.F) {
	for _, name := range []string{"petstore", "swagger2"} {
		data, err := os.ReadFile(specPath(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {/a: {get: {responses: {'200': {description: ok}}}}}\n"))
	f.Add([]byte(`{"swagger":"2.0","info":{"title":"t","version":"v1"},"paths":{"/a/{id}":{"get":{"parameters":[{"name":"id","in":"path","required":true,"type":"string"}],"responses":{"200":{"description":"ok"}}}}}}`))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Normalise(ctx, data)
		if err != nil {
			if !errors.Is(err, ErrStructural) {
				t.Fatalf("Normalise failed without ErrStructural: %v", err)
			}
			return
		}
		if n.Doc.Paths == nil || n.Doc.Paths.Len() == 0 || !json.Valid(n.JSON) {
			t.Fatalf("a normalised spec without paths or valid JSON:\n%s", n.JSON)
		}
		again, err := Normalise(ctx, n.JSON)
		if err != nil {
			t.Fatalf("a normalised spec does not normalise again: %v\n%s", err, n.JSON)
		}
		if !bytes.Equal(n.JSON, again.JSON) {
			t.Fatalf("Normalise is not idempotent:\nonce:  %s\ntwice: %s", n.JSON, again.JSON)
		}
		for _, tl := range kit.Operations(n.Doc) {
			s, err := kit.InputSchema(n.Doc, tl)
			if err != nil {
				continue // the airlock's preflight reports such an operation
			}
			checkConverted(t, tl.Name, s)
		}
	})
}

// FuzzToJSONSchema converts arbitrary OpenAPI schemas to JSON Schema. Each
// is components.schemas.S of a spec whose one operation takes it as its
// body, imported by Normalise, so that $refs (recursive ones included)
// resolve and repairs apply as in onboarding; a schema Normalise refuses
// is skipped (its validation warnings are not: onboarding goes on after
// them). Seeds are in testdata/fuzz/FuzzToJSONSchema (the test specs'
// component schemas). Properties: see checkConverted, for S and for the
// operation's input schema.
func FuzzToJSONSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":1,"maxLength":40},"born":{"type":"string","format":"date"}}}`))
	f.Add([]byte(`{"allOf":[{"$ref":"#/components/schemas/T"},{"type":"object","properties":{"id":{"type":"string"}}}]}`))
	f.Add([]byte(`{"type":"object","properties":{"child":{"$ref":"#/components/schemas/S"},"n":{"type":"number","nullable":true,"minimum":0,"exclusiveMinimum":true}}}`))
	f.Add([]byte(`{"type":"array","items":{"type":"integer","enum":[1,2]},"uniqueItems":true,"minItems":1}`))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, schema []byte) {
		if !json.Valid(schema) {
			return
		}
		spec := fmt.Sprintf(`{"openapi":"3.0.3","info":{"title":"t","version":"1.0.0"},`+
			`"paths":{"/s":{"post":{"operationId":"postS","requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S"}}}},"responses":{"200":{"description":"ok"}}}}},`+
			`"components":{"schemas":{"S":%s,"T":{"type":"object","properties":{"s":{"$ref":"#/components/schemas/S"}}}}}}`, schema)
		n, err := Normalise(ctx, []byte(spec))
		if err != nil {
			return
		}
		if s := n.Doc.Components.Schemas["S"]; s != nil && s.Value != nil {
			checkConverted(t, "S", s.Value)
		}
		for _, tl := range kit.Operations(n.Doc) {
			if in, err := kit.InputSchema(n.Doc, tl); err == nil {
				checkConverted(t, tl.Name, in)
			}
		}
	})
}

// checkConverted asserts what the airlock needs of ToJSONSchema(s): the
// same bytes every time, JSON Schema that tool registration compiles, and
// within registration's size bound (tool.MaxSchemaBytes).
func checkConverted(t *testing.T, name string, s *openapi3.Schema) {
	t.Helper()
	raw := ToJSONSchema(s)
	if !bytes.Equal(raw, ToJSONSchema(s)) {
		t.Fatalf("%s: ToJSONSchema is not deterministic", name)
	}
	if len(raw) > tool.MaxSchemaBytes {
		t.Fatalf("%s: the converted schema has %d bytes, over registration's %d", name, len(raw), tool.MaxSchemaBytes)
	}
	if _, err := tool.CompileSchema("inputSchema", raw); err != nil {
		t.Fatalf("%s: registration refuses the converted schema: %v\n%s", name, err, raw)
	}
}
