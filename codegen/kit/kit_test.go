package kit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

const petSpec = `{
  "openapi": "3.0.3",
  "info": {"title": "Pets", "version": "1.0.0"},
  "servers": [{"url": "https://pets.example.com/v1"}],
  "paths": {
    "/pets/{petId}": {
      "get": {
        "operationId": "getPetById",
        "parameters": [
          {"name": "petId", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}},
          {"name": "verbose", "in": "query", "schema": {"type": "boolean"}}
        ],
        "responses": {
          "200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"},
            "example": {"id": 7, "name": "Rex", "tag": "dog"}}}},
          "404": {"description": "missing"}
        }
      }
    },
    "/pets": {
      "post": {
        "operationId": "createPet",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}},
        "responses": {"201": {"description": "created", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
      }
    }
  },
  "components": {"schemas": {
    "NewPet": {"type": "object", "required": ["name"], "properties": {
      "name": {"type": "string", "minLength": 2, "pattern": "^[A-Z][a-z]+$"},
      "tag": {"type": "string", "enum": ["dog", "cat"]}}},
    "Pet": {"allOf": [{"$ref": "#/components/schemas/NewPet"}, {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "format": "int64"}}}]}
  }}
}`

func tools(t *testing.T) []Tool {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData([]byte(petSpec))
	if err != nil {
		t.Fatal(err)
	}
	return Operations(doc)
}

func TestOperationsNamesAndSchema(t *testing.T) {
	ts := tools(t)
	if len(ts) != 2 || ts[0].Name != "create_pet" || ts[1].Name != "get_pet_by_id" {
		t.Fatalf("tools = %+v", ts)
	}
	doc, _ := openapi3.NewLoader().LoadFromData([]byte(petSpec))
	s, err := InputSchema(doc, ts[1])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Required, ",") != "petId" || s.Properties["verbose"] == nil {
		t.Fatalf("input schema: required=%v props=%v", s.Required, s.Properties)
	}
	if got := ToolName("", "get", "/users/{id}/repos"); got != "get_users_by_id_repos" {
		t.Fatalf("ToolName = %q", got)
	}
}

func TestVerifyToolPassesOnAGoodSpec(t *testing.T) {
	for _, tool := range tools(t) {
		for _, c := range VerifyTool([]byte(petSpec), tool) {
			if c.Err != nil || c.Skipped != "" {
				t.Errorf("%s/%s: err=%v skipped=%q", tool.Name, c.Name, c.Err, c.Skipped)
			}
		}
	}
}

func TestCallRefusesBadInputAndForeignHosts(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		switch r.URL.Path {
		case "/v1/pets/1":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id": 1, "name": "Rex"}`))
		case "/v1/pets/2":
			http.Redirect(w, r, "http://198.51.100.7/steal", http.StatusFound)
		case "/v1/pets/3":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id": "three"}`))
		}
	}))
	defer srv.Close()
	w, err := New([]byte(petSpec), tools(t), Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		name  string
		args  map[string]any
		stage string
		ok    bool
	}{
		{"valid", map[string]any{"petId": 1}, "", true},
		{"missing required", map[string]any{}, StageInput, false},
		{"wrong type", map[string]any{"petId": "one"}, StageInput, false},
		{"below minimum", map[string]any{"petId": 0}, StageInput, false},
		{"unknown argument", map[string]any{"petId": 1, "admin": true}, StageInput, false},
		{"redirect elsewhere", map[string]any{"petId": 2}, StageHost, false},
		{"invalid response", map[string]any{"petId": 3}, StageResponse, false},
	}
	for _, c := range cases {
		before := hits
		res := w.Call(ctx, "get_pet_by_id", c.args)
		if res.Success != c.ok || res.Stage != c.stage {
			t.Errorf("%s: success=%v stage=%q error=%q", c.name, res.Success, res.Stage, res.Error)
		}
		if c.stage == StageInput && hits != before {
			t.Errorf("%s: a request was sent for refused input", c.name)
		}
	}
	if res := w.Call(ctx, "nope", nil); res.Success || res.Stage != StageInput {
		t.Errorf("unknown tool: %+v", res)
	}
	body := map[string]any{"body": map[string]any{"name": "Tom", "tag": "cat"}}
	if res := w.Call(ctx, "create_pet", body); res.Stage == StageInput {
		t.Errorf("valid body refused: %+v", res)
	}
}

func TestSampleHonoursFormatsPatternsAndBounds(t *testing.T) {
	cases := []string{
		`{"type":"string","pattern":"^[A-Z]{3}$"}`,
		`{"type":"string","format":"date-time"}`,
		`{"type":"string","minLength":5,"maxLength":6}`,
		`{"type":"integer","minimum":10,"maximum":20,"multipleOf":5}`,
		`{"type":"number","exclusiveMinimum":true,"minimum":0}`,
		`{"type":"array","minItems":2,"uniqueItems":true,"items":{"type":"string"}}`,
		`{"type":"object","required":["a","b"],"properties":{"a":{"type":"string","enum":["x","y"]},"b":{"oneOf":[{"type":"integer"},{"type":"string"}]}}}`,
		`{"type":"string","pattern":"^(foo|bar)-\\d+[a-f]?$"}`,
	}
	for _, js := range cases {
		var s openapi3.Schema
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			t.Fatal(err)
		}
		v, ok := Sample(&s)
		if !ok {
			t.Errorf("%s: no sample", js)
			continue
		}
		if err := s.VisitJSON(v); err != nil {
			t.Errorf("%s: sample %v invalid: %v", js, v, err)
		}
	}
}

func TestMainDescribeAndCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id": 5, "name": "Rex"}`))
	}))
	defer srv.Close()
	var out, errb strings.Builder
	if code := Main([]byte(petSpec), tools(t), srv.URL, []string{"describe"}, nil, &out, &errb); code != 0 {
		t.Fatalf("describe exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"get_pet_by_id"`) {
		t.Fatalf("describe output: %s", out.String())
	}
	out.Reset()
	in := strings.NewReader(`{"tool":"get_pet_by_id","arguments":{"petId":5}}`)
	if code := Main([]byte(petSpec), tools(t), srv.URL, []string{"call"}, in, &out, &errb); code != 0 {
		t.Fatalf("call exit %d: %s", code, errb.String())
	}
	var res Result
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || !res.Success || res.Status != 200 {
		t.Fatalf("call result %s (%v)", out.String(), err)
	}
	if code := Main([]byte(petSpec), tools(t), srv.URL, []string{"call"}, strings.NewReader(`{"tool":1}`), &out, &errb); code != 2 {
		t.Fatalf("bad request exit %d, want 2", code)
	}
}

func TestNoContentResponsesCarryNoBody(t *testing.T) {
	spec := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {"/watch/{id}": {"get": {"operationId": "watching",
	  "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	  "responses": {"204": {"description": "yes", "content": {"application/json": {"schema": {"type": "object", "required": ["a"]}}}}, "404": {"description": "no"}}}}}}`
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	tl := Operations(doc)[0]
	if err := Preflight([]byte(spec), tl); err != nil {
		t.Fatalf("preflight: %v", err)
	}
	for _, c := range VerifyTool([]byte(spec), tl) {
		if c.Err != nil {
			t.Errorf("%s: %v", c.Name, c.Err)
		}
	}
}

func TestXMLOperationsAreWrapped(t *testing.T) {
	spec := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {"/dist": {"post": {"operationId": "createDist",
	  "requestBody": {"required": true, "content": {"text/xml": {"schema": {"type": "object", "required": ["Name"], "properties": {"Name": {"type": "string"}}}}}},
	  "responses": {"200": {"description": "ok", "content": {"text/xml": {"schema": {"type": "object", "properties": {"Id": {"type": "string"}}}}}}}}}}}`
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	tl := Operations(doc)[0]
	if err := Preflight([]byte(spec), tl); err != nil {
		t.Fatalf("preflight: %v", err)
	}
	for _, c := range VerifyTool([]byte(spec), tl) {
		if c.Err != nil || c.Skipped != "" {
			t.Errorf("%s: err=%v skipped=%q", c.Name, c.Err, c.Skipped)
		}
	}
	b, err := encodeXML(map[string]any{"Name": "a<b", "Tags": []any{"x", "y"}})
	if err != nil || !strings.Contains(string(b), "<request><Name>a&lt;b</Name><Tags>x</Tags><Tags>y</Tags></request>") {
		t.Fatalf("xml: %s %v", b, err)
	}
}

func TestRedirectOnlyAndUndeclaredPathParameters(t *testing.T) {
	spec := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {
	  "/data/{id}": {"get": {"operationId": "data", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	    "responses": {"307": {"description": "moved", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
	  "/star/{table}/": {"get": {"operationId": "star", "parameters": [
	    {"name": "table", "in": "path", "required": true, "schema": {"type": "string"}},
	    {"name": "schema", "in": "path", "required": true, "schema": {"type": "string"}}],
	    "responses": {"200": {"description": "ok"}}}}}}`
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	ops := Operations(doc)
	for _, c := range VerifyTool([]byte(spec), ops[0]) {
		if c.Err != nil {
			t.Errorf("redirect-only %s: %v", c.Name, c.Err)
		}
	}
	if err := Preflight([]byte(spec), ops[1]); err == nil || !strings.Contains(err.Error(), `"schema" does not appear`) {
		t.Fatalf("undeclared path parameter must fail preflight: %v", err)
	}
}

func TestFragmentDisambiguatedOperations(t *testing.T) {
	spec := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {
	  "/#CreateQueue": {"post": {"operationId": "CreateQueue", "parameters": [{"name": "X-Target", "in": "header", "required": true, "schema": {"type": "string", "enum": ["Svc.CreateQueue"]}}],
	    "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["Name"], "properties": {"Name": {"type": "string"}}}}}},
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": {"Url": {"type": "string"}}}}}}}}}}}`
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	tl := Operations(doc)[0]
	if WirePath(tl.Path) != "/" {
		t.Fatalf("wire path of %q = %q", tl.Path, WirePath(tl.Path))
	}
	if err := Preflight([]byte(spec), tl); err != nil {
		t.Fatal(err)
	}
	for _, c := range VerifyTool([]byte(spec), tl) {
		if c.Err != nil {
			t.Errorf("%s: %v", c.Name, c.Err)
		}
	}
}

func TestQueryInPathTemplates(t *testing.T) {
	spec := `{"openapi": "3.0.0", "info": {"title": "x", "version": "1"}, "paths": {
	  "/?Operation=CancelJob": {"post": {"operationId": "CancelJob", "parameters": [{"name": "JobId", "in": "query", "required": true, "schema": {"type": "string"}}],
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object", "properties": {"Success": {"type": "boolean"}}}}}}}}},
	  "/api/search?term={term}&amount=25": {"get": {"operationId": "search", "parameters": [{"name": "term", "in": "path", "required": true, "schema": {"type": "string"}}],
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}}}}}}`
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	path, fixed := SplitTemplate("/api/search?term={term}&amount=25#x")
	if path != "/api/search" || fixed.Get("amount") != "25" || fixed.Get("term") != "{term}" {
		t.Fatalf("SplitTemplate: %q %v", path, fixed)
	}
	for _, tl := range Operations(doc) {
		if err := Preflight([]byte(spec), tl); err != nil {
			t.Fatalf("%s: preflight: %v", tl.Name, err)
		}
		for _, c := range VerifyTool([]byte(spec), tl) {
			if c.Err != nil {
				t.Errorf("%s/%s: %v", tl.Name, c.Name, c.Err)
			}
		}
	}
}

// TestSampleUnsatisfiableNestingIsBounded: when no valid value exists deep
// in a nested schema, every level used to try sampling and then
// synthesising its child, doubling the work per level (a large real spec
// hung the corpus check); the step budget keeps it linear.
func TestSampleUnsatisfiableNestingIsBounded(t *testing.T) {
	var nested func(n int) *openapi3.Schema
	nested = func(n int) *openapi3.Schema {
		if n == 0 { // no string is both "a" and matches ^b$
			return &openapi3.Schema{Type: &openapi3.Types{"string"}, Enum: []any{"a"}, Pattern: "^b$"}
		}
		return &openapi3.Schema{
			Type:       &openapi3.Types{"object"},
			Required:   []string{"a"},
			Properties: openapi3.Schemas{"a": {Value: nested(n - 1)}},
		}
	}
	s := nested(maxDepth)
	if v, ok := Sample(s); ok {
		t.Fatalf("Sample found %v for an unsatisfiable schema", v)
	}
	obj, ok := synthesise(s, 0, newBudget()).(map[string]any)
	if !ok || obj["a"] == nil {
		t.Fatalf("synthesised %v, want an object with its required property", obj)
	}
}

// A response header the spec marks required is checked when the API sends
// it and assumed when it does not; a caller's Accept parameter is the
// header sent.
func TestDeclaredHeadersAcceptAndText(t *testing.T) {
	spec := `{"openapi": "3.0.3", "info": {"title": "H", "version": "1.0.0"}, "servers": [{"url": "https://h.example.com"}],
	  "paths": {"/quota": {"get": {"operationId": "getQuota",
	    "parameters": [{"name": "Accept", "in": "header", "required": true, "schema": {"type": "string", "enum": ["application/json"]}}],
	    "responses": {"200": {"description": "ok",
	      "headers": {"X-RateLimit-Remaining": {"required": true, "schema": {"type": "integer", "minimum": 0}}},
	      "content": {"application/json": {"schema": {"type": "object"}}}}}}}}}`
	var accept, remaining string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		if remaining != "" {
			w.Header().Set("X-RateLimit-Remaining", remaining)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	ops := Operations(doc)
	if err := Preflight([]byte(spec), ops[0]); err != nil {
		t.Fatalf("preflight: %v", err)
	}
	w, err := New([]byte(spec), ops, Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		remaining string
		ok        bool
	}{{"", true}, {"7", true}, {"lots", false}, {"-1", false}} {
		remaining = c.remaining
		res := w.Call(context.Background(), "get_quota", map[string]any{"Accept": "application/json"})
		if res.Success != c.ok || (!c.ok && res.Stage != StageResponse) {
			t.Errorf("X-RateLimit-Remaining %q: %+v", c.remaining, res)
		}
		if accept != "application/json" {
			t.Errorf("Accept sent: %q", accept)
		}
	}
}

// Parameters that share a name in different places are separate arguments
// (path_token, query_token), each sent where it belongs.
func TestSameNameParametersKeepTheirValues(t *testing.T) {
	spec := `{"openapi": "3.0.3", "info": {"title": "T", "version": "1.0.0"}, "servers": [{"url": "https://t.example.com"}],
	  "paths": {"/tokens/{token}": {"delete": {"operationId": "deleteToken",
	    "parameters": [{"name": "token", "in": "path", "required": true, "schema": {"type": "string"}},
	                   {"name": "token", "in": "query", "required": true, "schema": {"type": "string"}}],
	    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}}}}`
	var path, query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query = r.URL.Path, r.URL.Query().Get("token")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	ops := Operations(doc)
	schema, err := InputSchema(doc, ops[0])
	if err != nil || schema.Properties["path_token"] == nil || schema.Properties["query_token"] == nil || len(schema.Required) != 2 {
		t.Fatalf("input schema: %+v %v", schema, err)
	}
	w, err := New([]byte(spec), ops, Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res := w.Call(context.Background(), "delete_token", map[string]any{"path_token": "tok-1", "query_token": "auth-2"})
	if !res.Success || path != "/tokens/tok-1" || query != "auth-2" {
		t.Fatalf("call: %+v path %q query %q", res, path, query)
	}
}
