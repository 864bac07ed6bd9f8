package codegen

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolsmith/toolsmith/templates"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRequires keeps the golden go.mod independent of dependency bumps.
var goldenRequires = []Require{{Path: KinOpenAPI, Version: "v0.0.0-golden"}}

func generate(t *testing.T, name, baseURL string, ops ...string) (*Normalised, *Wrapper) {
	t.Helper()
	data, err := os.ReadFile(specPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Normalise(context.Background(), data)
	if err != nil {
		t.Fatalf("normalise %s: %v", name, err)
	}
	g, err := New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	w, err := g.Generate(n, Options{Name: name, BaseURL: baseURL, Operations: ops, Requires: goldenRequires})
	if err != nil {
		t.Fatalf("generate %s: %v", name, err)
	}
	return n, w
}

func specPath(t testing.TB, name string) string {
	matches, _ := filepath.Glob(filepath.Join("testdata", name, "spec.*"))
	if len(matches) != 1 {
		t.Fatalf("testdata/%s: want one spec.*, found %v", name, matches)
	}
	return matches[0]
}

func TestGenerateGolden(t *testing.T) {
	cases := []struct{ name, base string }{
		{"petstore", "https://pets.example.com/v1"},
		{"swagger2", "https://rates.example.org/api"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, w := generate(t, c.name, c.base)
			for _, f := range []string{"main.go", "wrapper_test.go", "go.mod"} {
				golden := filepath.Join("testdata", c.name, f+".golden")
				got := w.Files[f]
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./codegen -run Golden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s:\n%s", f, golden, got)
				}
			}
			if len(w.Files["spec.json"]) == 0 || len(w.Files["kit/call.go"]) == 0 {
				t.Errorf("spec.json or kit sources missing: %d files", len(w.Files))
			}
			if _, ok := w.Files["kit/kit_test.go"]; ok {
				t.Error("kit tests must not be copied into wrappers")
			}
		})
	}
}

func TestNormaliseConvertsSwaggerAndWarns(t *testing.T) {
	n, w := generate(t, "swagger2", "https://rates.example.org/api")
	if n.Version != "2.0" || n.Doc.OpenAPI == "" || !strings.HasPrefix(n.Doc.OpenAPI, "3") {
		t.Fatalf("version=%q openapi=%q", n.Version, n.Doc.OpenAPI)
	}
	names := []string{}
	for _, tl := range w.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "convert_amount,get_rates_by_base" {
		t.Fatalf("tools = %v", names)
	}
	bad := []struct{ name, spec string }{
		{"not yaml", "{{{"},
		{"no version", `{"info": {"title": "x"}}`},
		{"no paths", `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {}}`},
		{"external ref", `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"get": {"responses": {"200": {"$ref": "https://evil.example/r.json"}}}}}}`},
	}
	for _, b := range bad {
		if _, err := Normalise(context.Background(), []byte(b.spec)); !errors.Is(err, ErrStructural) {
			t.Errorf("%s: err = %v, want ErrStructural", b.name, err)
		}
	}
	warn := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"get": {"parameters": [{"name": "q", "in": "query", "schema": {"type": "integer", "example": "not a number"}}], "responses": {"200": {"description": "ok"}}}}}}`
	n, err := Normalise(context.Background(), []byte(warn))
	if err != nil || len(n.Warnings) == 0 {
		t.Fatalf("a bad example must be a warning, not an error: err=%v warnings=%v", err, n.Warnings)
	}
}

func TestGenerateSelectsOperationsAndValidatesOptions(t *testing.T) {
	_, w := generate(t, "petstore", "https://pets.example.com/v1", "createPet", "delete_pet")
	if len(w.Tools) != 2 {
		t.Fatalf("tools = %+v", w.Tools)
	}
	data, _ := os.ReadFile(specPath(t, "petstore"))
	n, _ := Normalise(context.Background(), data)
	g, _ := New(templates.FS)
	if _, err := g.Generate(n, Options{Name: "petstore", BaseURL: "https://x.example", Operations: []string{"nope"}, Requires: goldenRequires}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown operation: err = %v", err)
	}
	for _, o := range []Options{
		{Name: "Bad Name", BaseURL: "https://x.example", Requires: goldenRequires},
		{Name: "ok", BaseURL: "ftp://x.example", Requires: goldenRequires},
		{Name: "ok", BaseURL: "https://x.example"},
	} {
		if _, err := g.Generate(n, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := New(fstest.MapFS{"wrapper_main.go.tmpl": {Data: []byte("x")}}); err == nil {
		t.Error("templates missing from the FS must be an error")
	}
}

// TestVerifyBuildsAndRunsTheGeneratedTest compiles real wrappers offline and
// runs their generated tests (in a loopback-only network namespace when the
// machine allows it).
func TestVerifyBuildsAndRunsTheGeneratedTest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	ctx := context.Background()
	reqs, err := BuildRequires(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, base string }{{"petstore", "https://pets.example.com/v1"}, {"swagger2", "https://rates.example.org/api"}} {
		data, _ := os.ReadFile(specPath(t, c.name))
		n, err := Normalise(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := New(templates.FS)
		w, err := g.Generate(n, Options{Name: c.name, BaseURL: c.base, Requires: reqs})
		if err != nil {
			t.Fatal(err)
		}
		v, err := Verify(ctx, w, VerifyOptions{Dir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, v.Output)
		}
		if !v.Passed {
			t.Fatalf("%s: generated test failed (%v):\n%s", c.name, v.Failed(), v.Output)
		}
		t.Logf("%s: %d checks passed in %s, sandbox=%s", c.name, len(v.Tests), v.Duration.Round(1e6), v.Sandbox)
		if _, err := os.Stat(v.Binary); err != nil {
			t.Fatalf("wrapper binary missing: %v", err)
		}
	}
}

// TestVerifyWithARelativeDir builds into a relative Dir (the airlock's
// wrappers dir under a relative data dir): the wrapper lands in Dir, not in
// Dir joined onto itself, and Binary names it absolutely.
func TestVerifyWithARelativeDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	spec := specPath(t, "petstore") // read before the test changes directory
	ctx := context.Background()
	reqs, err := BuildRequires(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Normalise(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := New(templates.FS)
	w, err := g.Generate(n, Options{Name: "petstore", BaseURL: "https://pets.example.com/v1", Requires: reqs})
	if err != nil {
		t.Fatal(err)
	}
	wd := t.TempDir()
	t.Chdir(wd)
	rel := filepath.Join(".toolsmith", "airlock", "wrappers", "petstore")
	v, err := Verify(ctx, w, VerifyOptions{Dir: rel})
	if err != nil {
		t.Fatalf("%v\n%s", err, v.Output)
	}
	if !v.Passed {
		t.Fatalf("generated test failed (%v):\n%s", v.Failed(), v.Output)
	}
	want := filepath.Join(wd, rel, "wrapper")
	if v.Binary != want || !filepath.IsAbs(v.Dir) {
		t.Fatalf("binary %q in dir %q, want %q", v.Binary, v.Dir, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("wrapper binary not where Binary says: %v", err)
	}
	if _, err := os.Stat(filepath.Join(wd, rel, rel)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the relative dir was joined onto itself: %v", err)
	}
}

// TestVerifyReportsABrokenWrapper proves Verify fails when the generated
// code does not compile.
func TestVerifyReportsABrokenWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	reqs, err := BuildRequires(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(specPath(t, "petstore"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Normalise(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	w, err := g.Generate(n, Options{Name: "petstore", BaseURL: "https://pets.example.com/v1", Requires: reqs})
	if err != nil {
		t.Fatal(err)
	}
	w.Files["main.go"] = append(w.Files["main.go"], []byte("\nfunc broken() { undefined() }\n")...)
	if _, err := Verify(context.Background(), w, VerifyOptions{Dir: t.TempDir()}); !errors.Is(err, ErrBuild) {
		t.Fatalf("err = %v, want ErrBuild", err)
	}
}

func TestGenerateExcludesSelfContradictoryOperations(t *testing.T) {
	spec := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"},
	  "paths": {
	    "/ok": {"get": {"operationId": "ok", "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
	    "/star/{table}": {"get": {"operationId": "undeclaredPathParam", "parameters": [{"name": "table", "in": "path", "required": true, "schema": {"type": "string"}}, {"name": "schema", "in": "path", "required": true, "schema": {"type": "string"}}], "responses": {"200": {"description": "ok"}}}},
	    "/text": {"get": {"operationId": "textObject", "responses": {"200": {"description": "ok", "content": {"text/plain": {"schema": {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}}}}}}}
	  }}`
	n, err := Normalise(context.Background(), []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := New(templates.FS)
	w, err := g.Generate(n, Options{Name: "x", BaseURL: "https://x.example", Requires: goldenRequires})
	if err != nil {
		t.Fatal(err)
	}
	// A text body declared as an object is read as a string (Normalise),
	// so only the path parameter no request can carry is left out.
	if len(w.Tools) != 2 || w.Tools[0].Name != "ok" || w.Tools[1].Name != "text_object" || len(w.Excluded) != 1 ||
		!strings.Contains(w.Excluded[0].Reason, `"schema" does not appear in the path`) {
		t.Fatalf("tools=%+v excluded=%+v", w.Tools, w.Excluded)
	}
	if _, err := g.Generate(n, Options{Name: "x", BaseURL: "https://x.example", Operations: []string{"undeclaredPathParam"}, Requires: goldenRequires}); !errors.Is(err, ErrNoOperations) {
		t.Fatalf("err = %v, want ErrNoOperations", err)
	}
}

func TestNormaliseDropsPatternsGoCannotCompile(t *testing.T) {
	spec := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"post": {"operationId": "a",
	  "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/In"}}}},
	  "responses": {"200": {"description": "ok"}}}}},
	  "components": {"schemas": {"In": {"type": "object", "properties": {"arn": {"type": "string", "pattern": "arn:.{0,1023}"}, "ok": {"type": "string", "pattern": "^[a-z]+$"}}}}}}`
	n, err := Normalise(context.Background(), []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	props := n.Doc.Components.Schemas["In"].Value.Properties
	if props["arn"].Value.Pattern != "" || props["ok"].Value.Pattern != "^[a-z]+$" {
		t.Fatalf("patterns after normalise: %q %q", props["arn"].Value.Pattern, props["ok"].Value.Pattern)
	}
	found := false
	for _, w := range n.Warnings {
		found = found || strings.Contains(w, "arn:.{0,1023}")
	}
	if !found {
		t.Fatalf("no warning for the dropped pattern: %v", n.Warnings)
	}
}

// A null where a spec needs an object or a list reads as absent (kin-openapi
// dereferenced such nils: a Swagger path item of null crashed the import,
// found by FuzzNormalise), with a warning; nulls that are values stay, and
// a spec without info is reported, not a crash.
func TestNormaliseReadsNullsAsAbsent(t *testing.T) {
	for name, spec := range map[string]string{
		"swagger": `{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {"/gone": null, "/a": {"get": {
		  "parameters": [null, {"name": "q", "in": "query", "type": "string", "default": null, "x-note": null}],
		  "responses": {"200": {"description": "ok", "examples": {"application/json": null}}, "404": null}}}},
		  "parameters": {"p": null}, "responses": {"r": null}, "definitions": {"d": null}, "securityDefinitions": {"s": null}}`,
		"openapi": `{"openapi": "3.0.3", "info": {"title": "x", "version": "1.0.0"}, "paths": {"/gone": null, "/a": {"post": null, "get": {
		  "parameters": [null, {"name": "q", "in": "query", "schema": {"type": "string", "nullable": true, "default": null, "enum": ["a", null]}}],
		  "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"properties": {"example": null}}, "example": null, "examples": {"one": null}}}}, "404": null}}}},
		  "components": {"schemas": {"S": null}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			n, err := Normalise(context.Background(), []byte(spec))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(n.Warnings, "\n"), "null(s) where the spec needs") {
				t.Errorf("no warning for the removed nulls: %q", n.Warnings)
			}
			if n.Doc.Paths.Len() != 1 || n.Doc.Paths.Value("/a").Get == nil {
				t.Fatalf("paths: %s", n.JSON)
			}
			params := n.Doc.Paths.Value("/a").Get.Parameters
			if len(params) != 1 || params[0].Value.Name != "q" {
				t.Fatalf("parameters: %s", n.JSON)
			}
			if name == "openapi" && len(params[0].Value.Schema.Value.Enum) != 2 {
				t.Errorf("a null in an enum is a value and stays: %v", params[0].Value.Schema.Value.Enum)
			}
		})
	}
	n, err := Normalise(context.Background(), []byte(`{"openapi": "3.0.3", "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(n.Warnings, "\n"), "info") {
		t.Errorf("a spec without info: warnings %q", n.Warnings)
	}
}

// Normalise repairs what it can without changing what a call sends or
// accepts, and says so: duplicate names in "required", a version that is
// not semver, text bodies declared with non-string schemas.
func TestNormaliseRepairsLosslessly(t *testing.T) {
	spec := `{"openapi": "3.0.3", "info": {"title": "x", "version": "2.2.01"}, "paths": {"/a": {"post": {
	  "parameters": [{"name": "id", "in": "query", "required": true, "schema": {"type": "string"}}],
	  "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["a", "b", "a"], "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}}},
	  "responses": {"200": {"description": "ok", "content": {"text/csv": {"schema": {"type": "array", "items": {"type": "string"}}}, "application/json": {"schema": {"type": "object"}}}}}}}}}`
	n, err := Normalise(context.Background(), []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(n.Warnings, "\n")
	for _, want := range []string{"duplicate name(s) from \"required\"", `"2.2.01" is not semver`, "2.2.1", "text bodies are read and sent as strings", "POST /a 200 text/csv"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	op := n.Doc.Paths.Value("/a").Post
	if got := op.RequestBody.Value.Content["application/json"].Schema.Value.Required; strings.Join(got, ",") != "a,b" {
		t.Errorf("required = %v", got)
	}
	if !op.Parameters[0].Value.Required {
		t.Error("a parameter's required flag is not a list and stays")
	}
	resp := op.Responses.Status(200).Value.Content
	if !resp["text/csv"].Schema.Value.Type.Is("string") || !resp["application/json"].Schema.Value.Type.Is("object") {
		t.Errorf("bodies: csv %v, json %v", resp["text/csv"].Schema.Value.Type, resp["application/json"].Schema.Value.Type)
	}
	if n.Doc.Info.Version != "2.2.01" {
		t.Errorf("the spec keeps its version: %q", n.Doc.Info.Version)
	}
	for in, want := range map[string]string{"2.2.01": "2.2.1", "19.02.1": "19.2.1", "2010-04-01": "2010.4.1", "v3": "3.0.0", "1.2.3-beta": "1.2.3"} {
		if got := Semver(in); got != want {
			t.Errorf("Semver(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNormaliseReadsListsGivenForSchemas: a list where a schema is
// expected stopped the whole spec from loading ("cannot unmarshal array
// into value of type openapi2.Schema"); it is read as the schema it lists,
// and each repair is a warning.
func TestNormaliseReadsListsGivenForSchemas(t *testing.T) {
	swagger := `{"swagger": "2.0", "info": {"title": "x", "version": "1.0.0"}, "host": "api.example.com", "paths": {"/a": {"get": {
	  "produces": ["application/json"],
	  "responses": {"200": {"description": "ok", "schema": {"type": "object", "properties": {
	    "one": {"type": "array", "items": [{"type": "integer"}]},
	    "same": {"type": "array", "items": [{"type": "string"}, {"type": "string"}]},
	    "mixed": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
	    "none": {"type": "array", "items": []}}}}}}}}}`
	n, err := Normalise(context.Background(), []byte(swagger))
	if err != nil {
		t.Fatal(err)
	}
	props := n.Doc.Paths.Value("/a").Get.Responses.Status(200).Value.Content["application/json"].Schema.Value.Properties
	if !props["one"].Value.Items.Value.Type.Is("integer") || !props["same"].Value.Items.Value.Type.Is("string") {
		t.Errorf("one schema, or equal ones, become that schema: %v %v", props["one"].Value.Items.Value.Type, props["same"].Value.Items.Value.Type)
	}
	if it := props["mixed"].Value.Items.Value; it.Type != nil || len(it.AnyOf) != 0 || props["none"].Value.Items.Value.Type != nil {
		t.Errorf("Swagger 2.0 has no anyOf: different schemas accept anything: %+v", it)
	}
	all := strings.Join(n.Warnings, "\n")
	for _, want := range []string{"read 3 list(s) given where a schema is expected", "/one/items", "read 1 list(s) of different schemas", "/mixed/items", "not validated"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}

	openapi := `{"openapi": "3.0.3", "info": {"title": "x", "version": "1.0.0"}, "paths": {"/a": {"get": {"responses": {"200": {"description": "ok",
	  "content": {"application/json": {"schema": [{"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}]}}}}}}}}`
	n, err = Normalise(context.Background(), []byte(openapi))
	if err != nil {
		t.Fatal(err)
	}
	s := n.Doc.Paths.Value("/a").Get.Responses.Status(200).Value.Content["application/json"].Schema.Value
	if !s.Type.Is("array") || len(s.Items.Value.AnyOf) != 2 {
		t.Errorf("OpenAPI 3: a list of different schemas is their anyOf: %+v", s.Items.Value)
	}
	if !strings.Contains(strings.Join(n.Warnings, "\n"), "read 2 list(s)") {
		t.Errorf("warnings: %q", n.Warnings)
	}
}
