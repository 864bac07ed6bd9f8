package kit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestExpandPathIsRFC6570LevelOne(t *testing.T) {
	for _, c := range []struct {
		template string
		values   map[string][]string
		want     string
	}{
		{"/items/{id}", map[string][]string{"id": {"7"}}, "/items/7"},
		{"/Media/{Sid}.{Ext}", map[string][]string{"Sid": {"ME1"}, "Ext": {"png"}}, "/Media/ME1.png"},
		{"/v{major}.{minor}/page-{n}.atom", map[string][]string{"major": {"1.2"}, "minor": {"3"}, "n": {"4"}}, "/v1.2.3/page-4.atom"},
		// Reserved characters are percent-encoded, unreserved ones kept;
		// a value looking like an expression is not expanded again.
		{"/f/{name}/{b}", map[string][]string{"name": {"a b/c?d#e%f&g=h+i:j@k"}, "b": {"{name}"}}, "/f/a%20b%2Fc%3Fd%23e%25f%26g%3Dh%2Bi%3Aj%40k/%7Bname%7D"},
		{"/x/{a}~{b}", map[string][]string{"a": {"-._~"}, "b": {"é"}}, "/x/-._~~%C3%A9"},
		{"/same/{Sid}/again/{Sid}", map[string][]string{"Sid": {"s"}}, "/same/s/again/s"},
		{"/broken{/{id}", map[string][]string{"id": {"1"}}, "/broken%7B/1"},
		// A list's items are joined by a literal comma; a comma inside an
		// item is encoded.
		{"/t/{ids}", map[string][]string{"ids": {"1", "2", "a,b"}}, "/t/1,2,a%2Cb"},
	} {
		if got := expandPath(c.template, c.values); got != c.want {
			t.Errorf("expandPath(%q) = %q, want %q", c.template, got, c.want)
		}
	}
}

func TestMatchTemplateSplitsSegmentsByTheParametersSchemas(t *testing.T) {
	integer := func(name, v string) bool {
		if name != "minor" {
			return true
		}
		return !strings.ContainsAny(v, ".") && v != ""
	}
	for _, c := range []struct {
		template, path string
		accept         func(string, string) bool
		want           map[string]string
	}{
		{"/v{major}.{minor}", "/v1.2.3", integer, map[string]string{"major": "1.2", "minor": "3"}},
		{"/v{major}.{minor}", "/v1.2.3", nil, map[string]string{"major": "1", "minor": "2.3"}},
		{"/Media/{Sid}.{Ext}", "/base/Media/ME%201.png", nil, map[string]string{"Sid": "ME 1", "Ext": "png"}},
		{"/f/{name}", "/f/a%20b%2Fc%3Fd", nil, map[string]string{"name": "a b/c?d"}},
		{"/same/{Sid}/again/{Sid}", "/same/s/again/s", nil, map[string]string{"Sid": "s"}},
		{"/same/{Sid}/again/{Sid}", "/same/s/again/t", nil, nil},
		{"/items/{id}", "/items/7/", nil, map[string]string{"id": "7"}},
		{"/items/{id}", "/other/7", nil, nil},
	} {
		got, ok := matchTemplate(c.template, c.path, c.accept)
		if ok != (c.want != nil) || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("matchTemplate(%q, %q) = %v %v, want %v", c.template, c.path, got, ok, c.want)
		}
	}
}

// TestPathValuesTravelOnceEncoded: the request carries each value
// percent-encoded once (a value with a space used to leave as "%2520"), and
// a generated test passes for templates with several parameters in a
// segment, literal suffixes and values a naive split would misread, and
// for a parameter whose schema is readOnly (a body's direction does not
// apply to parameters).
func TestPathValuesTravelOnceEncoded(t *testing.T) {
	spec := `{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {
	  "/v{major}.{minor}/parts/{part}.{format}": {"post": {"operationId": "addPart",
	    "parameters": [{"name": "major", "in": "path", "required": true, "schema": {"type": "string", "example": "1.2"}},
	      {"name": "minor", "in": "path", "required": true, "schema": {"type": "integer"}},
	      {"name": "part", "in": "path", "required": true, "schema": {"type": "string", "enum": ["a b/c"]}},
	      {"name": "format", "in": "path", "required": true, "schema": {"type": "string", "enum": ["json"]}}],
	    "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["id", "name"],
	      "properties": {"id": {"type": "string", "readOnly": true}, "name": {"type": "string"}}}}}},
	    "responses": {"201": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
	  "/alerts/{alert_number}": {"get": {"operationId": "getAlert",
	    "parameters": [{"name": "alert_number", "in": "path", "required": true, "schema": {"type": "integer", "readOnly": true}}],
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
	  "/things/{ids}": {"put": {"operationId": "putThings",
	    "parameters": [{"name": "ids", "in": "path", "required": true, "schema": {"type": "array", "items": {"type": "integer"}}}],
	    "responses": {"204": {"description": "ok"}}}}}}`
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	ops := Operations(doc)
	w, err := New([]byte(spec), ops, Options{BaseURL: srv.URL + "/base"})
	if err != nil {
		t.Fatal(err)
	}
	res := w.Call(context.Background(), "add_part", map[string]any{"major": "1.2", "minor": 3, "part": "a b/c", "format": "json", "body": map[string]any{"name": "n"}})
	if !res.Success || len(seen) != 1 || seen[0] != "/base/v1.2.3/parts/a%20b%2Fc.json" {
		t.Fatalf("call: %+v, the API saw %q", res, seen)
	}
	if res := w.Call(context.Background(), "add_part", map[string]any{"major": "1", "minor": 3, "part": "a b/c", "format": "json", "body": map[string]any{"id": "x", "name": "n"}}); res.Stage != StageInput {
		t.Errorf("a readOnly property must be refused before any request: %+v", res)
	}
	for _, tl := range ops {
		if err := Preflight([]byte(spec), tl); err != nil {
			t.Errorf("%s: preflight: %v", tl.Name, err)
		}
		for _, c := range VerifyTool([]byte(spec), tl) {
			if c.Err != nil {
				t.Errorf("%s/%s: %v", tl.Name, c.Name, c.Err)
			}
		}
	}
	if got := simple([]any{1.0, 2.0}); !reflect.DeepEqual(got, []string{"1", "2"}) {
		t.Errorf("simple array: %q", got)
	}
	if got := simple(map[string]any{"b": 2.0, "a": "x"}); !reflect.DeepEqual(got, []string{"a", "x", "b", "2"}) {
		t.Errorf("simple object: %q", got)
	}
	if res := w.Call(context.Background(), "put_things", map[string]any{"ids": []any{1, 2}}); len(seen) != 2 || seen[1] != "/base/things/1,2" {
		t.Errorf("an array path value goes as its items joined by commas: %+v, the API saw %q", res, seen)
	}
}

// TestSamplesTravelOneWay: a readOnly property is left out of a request
// and a writeOnly one out of a response, even when listed as required.
func TestSamplesTravelOneWay(t *testing.T) {
	s := openapi3.NewObjectSchema()
	s.Required = []string{"id", "name", "secret"}
	s.Properties = openapi3.Schemas{
		"id":     openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, ReadOnly: true}),
		"name":   openapi3.NewSchemaRef("", openapi3.NewStringSchema()),
		"secret": openapi3.NewSchemaRef("", &openapi3.Schema{Type: &openapi3.Types{"string"}, WriteOnly: true}),
	}
	req, ok := sampleFor(s, request)
	if m, _ := req.(map[string]any); !ok || m["id"] != nil || m["name"] == nil || m["secret"] == nil {
		t.Errorf("request sample: %v %v", req, ok)
	}
	resp, ok := sampleFor(s, response)
	if m, _ := resp.(map[string]any); !ok || m["id"] == nil || m["name"] == nil || m["secret"] != nil {
		t.Errorf("response sample: %v %v", resp, ok)
	}
}

// TestResponseRangesAreReadInOneOrder: with both "2XX" and "2xx" declared,
// the mock plays "2XX", the one response validation looks up, every time.
func TestResponseRangesAreReadInOneOrder(t *testing.T) {
	spec := `{"openapi": "3.0.3", "info": {"title": "x", "version": "1"}, "paths": {"/a": {"get": {"operationId": "getA", "responses": {
	  "2XX": {"description": "upper", "content": {"application/json": {"schema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}}}},
	  "2xx": {"description": "lower", "content": {"application/json": {"schema": {"type": "string", "enum": ["lower"]}}}}}}}}}`
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	_, op, _ := Operation(doc, Operations(doc)[0])
	for i := 0; i < 20; i++ {
		if _, _, body := ValidResponse(op); string(body) != `{"id":1}` {
			t.Fatalf("run %d: the mock played %s", i, body)
		}
	}
}
