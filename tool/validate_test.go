package tool_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

const validJSON = `{
  "toolId": "currency.convert",
  "verb": "CONVERT_CURRENCY",
  "name": "Currency converter",
  "description": "Converts an amount between two currencies at the latest mid-market rate. Rates refresh hourly.",
  "category": "finance",
  "tags": ["currency", "exchange"],
  "module": "currency",
  "inputSchema": {
    "type": "object",
    "properties": {
      "amount": {"type": "number", "exclusiveMinimum": 0},
      "from": {"type": "string", "pattern": "^[A-Z]{3}$"},
      "to": {"type": "string", "pattern": "^[A-Z]{3}$"},
      "items": {"type": "array", "items": {"type": "integer"}}
    },
    "required": ["amount", "from", "to"]
  },
  "outputSchema": {
    "type": "object",
    "properties": {"converted": {"type": "number"}, "rate": {"type": "number"}},
    "required": ["converted", "rate"]
  },
  "examples": [
    {"scenario": "dollars to euros", "input": {"amount": 100, "from": "USD", "to": "EUR"}, "output": {"converted": 92.1, "rate": 0.921}}
  ],
  "entities": [{"name": "Currency", "type": "Concept"}],
  "relationships": {
    "dependencies": ["currency.rates"],
    "alternatives": ["finance.fx"],
    "commonPairings": [{"toolId": "currency.rates", "cooccurrenceScore": 0.5, "typicalSequence": "before"}]
  },
  "commonErrors": ["unknown currency", {"error": "rate unavailable", "resolution": "retry later"}],
  "source": {"origin": "demo", "license": "Apache-2.0", "specUrl": "https://example.com/openapi.json"}
}`

func valid(t *testing.T) tool.Manifest {
	t.Helper()
	m, err := tool.Parse([]byte(validJSON))
	if err != nil {
		t.Fatalf("Parse(valid): %v", err)
	}
	return m
}

func paths(err error) []string {
	var out []string
	for _, f := range fault.Fields(err) {
		out = append(out, f.Path)
	}
	return out
}

func TestValidateAcceptsValidManifest(t *testing.T) {
	m := valid(t)
	if err := tool.Validate(&m); err != nil {
		t.Fatalf("Validate(raw) = %v", err)
	}
	tool.Normalize(&m)
	if err := tool.Validate(&m); err != nil {
		t.Fatalf("Validate(normalized) = %v", err)
	}
}

func TestValidateRules(t *testing.T) {
	long := strings.Repeat("a", 129)
	tests := []struct {
		name   string
		mutate func(m *tool.Manifest)
		want   []string // exact paths, in order
		msg    string   // substring of the first message
	}{
		{"toolId required", func(m *tool.Manifest) { m.ToolID = ""; m.Module = "" }, []string{"toolId"}, "required"},
		{"toolId too long", func(m *tool.Manifest) { m.ToolID = long; m.Module = "" }, []string{"toolId"}, "at most 128"},
		{"toolId pattern", func(m *tool.Manifest) { m.ToolID = "1bad id"; m.Module = "" }, []string{"toolId"}, "must match"},
		{"toolId trailing dot", func(m *tool.Manifest) { m.ToolID = "currency."; m.Module = "" }, []string{"toolId"}, "must match"},
		{"verb required", func(m *tool.Manifest) { m.Verb = "" }, []string{"verb"}, "required"},
		{"verb snake", func(m *tool.Manifest) { m.Verb = "convertCurrency" }, []string{"verb"}, "UPPER_SNAKE"},
		{"verb double underscore", func(m *tool.Manifest) { m.Verb = "CONVERT__CURRENCY" }, []string{"verb"}, "UPPER_SNAKE"},
		{"name required", func(m *tool.Manifest) { m.Name = "  " }, []string{"name"}, "required"},
		{"name too long", func(m *tool.Manifest) { m.Name = strings.Repeat("n", 201) }, []string{"name"}, "at most 200"},
		{"description required", func(m *tool.Manifest) { m.Description = "" }, []string{"description"}, "required"},
		{"category required", func(m *tool.Manifest) { m.Category = "" }, []string{"category"}, "required"},
		{"shortDescription too long", func(m *tool.Manifest) { m.ShortDescription = strings.Repeat("é", 101) }, []string{"shortDescription"}, "at most 100"},
		{"description too long", func(m *tool.Manifest) { m.Description = strings.Repeat("é", tool.MaxDescriptionLen+1) }, []string{"description"}, "at most 16000"},
		{"use case too long", func(m *tool.Manifest) { m.UseCases = []string{strings.Repeat("u", tool.MaxListItemLen+1)} }, []string{"useCases[0]"}, "at most 1000"},
		{"complexity enum", func(m *tool.Manifest) { m.Complexity = "extreme" }, []string{"complexity"}, "one of low, medium, high"},
		{"requiredPermission enum", func(m *tool.Manifest) { m.RequiredPermission = "root" }, []string{"requiredPermission"}, "guest, user, admin, owner"},
		{"status enum", func(m *tool.Manifest) { m.Status = "retired" }, []string{"status"}, "active, deprecated, disabled"},
		{"version semver", func(m *tool.Manifest) { m.Version = "1.2" }, []string{"version"}, "semantic version"},
		{"version leading v", func(m *tool.Manifest) { m.Version = "v1.2.3" }, []string{"version"}, "semantic version"},
		{"permissions item", func(m *tool.Manifest) { m.PermissionsRequired = []string{"public", "role:", "admin"} }, []string{"permissionsRequired[1]", "permissionsRequired[2]"}, "role:NAME"},
		{"tags non-empty", func(m *tool.Manifest) { m.Tags = []string{"ok", ""} }, []string{"tags[1]"}, "non-empty"},
		{"groups non-empty", func(m *tool.Manifest) { m.Groups = []string{" "} }, []string{"groups[0]"}, "non-empty"},
		{"states non-empty", func(m *tool.Manifest) { m.AvailableInStates = []string{"analysis", ""} }, []string{"availableInStates[1]"}, "non-empty"},
		{"useCases non-empty", func(m *tool.Manifest) { m.UseCases = []string{""} }, []string{"useCases[0]"}, "non-empty"},
		{"module differs from prefix", func(m *tool.Manifest) { m.Module = "finance" }, []string{"module"}, `prefix "currency"`},
		{"module without dotted id", func(m *tool.Manifest) { m.ToolID = "convert" }, []string{"toolId"}, `"currency.convert"`},
		{"module pattern", func(m *tool.Manifest) { m.Module = "cur rency" }, []string{"module"}, "must match"},
		{"entity name", func(m *tool.Manifest) { m.Entities = []tool.Entity{{Type: "Airline"}} }, []string{"entities[0].name"}, "required"},
		{"entity alias", func(m *tool.Manifest) { m.Entities = []tool.Entity{{Name: "Southwest", Aliases: []string{""}}} }, []string{"entities[0].aliases[0]"}, "non-empty"},
		{"dependency empty", func(m *tool.Manifest) { m.Relationships.Dependencies = []string{""} }, []string{"relationships.dependencies[0]"}, "non-empty"},
		{"alternative self", func(m *tool.Manifest) { m.Relationships.Alternatives = []string{"currency.convert"} }, []string{"relationships.alternatives[0]"}, "itself"},
		{"alternative malformed", func(m *tool.Manifest) { m.Relationships.Alternatives = []string{"not an id"} }, []string{"relationships.alternatives[0]"}, "tool id"},
		{"pairing score", func(m *tool.Manifest) { m.Relationships.Pairings[0].Score = 1.5 }, []string{"relationships.commonPairings[0].cooccurrenceScore"}, "between 0 and 1"},
		{"pairing negative score", func(m *tool.Manifest) { m.Relationships.Pairings[0].Score = -0.1 }, []string{"relationships.commonPairings[0].cooccurrenceScore"}, "between 0 and 1"},
		{"pairing sequence", func(m *tool.Manifest) { m.Relationships.Pairings[0].Sequence = "during" }, []string{"relationships.commonPairings[0].typicalSequence"}, "before, after, parallel"},
		{"pairing self", func(m *tool.Manifest) { m.Relationships.Pairings[0].ToolID = "currency.convert" }, []string{"relationships.commonPairings[0].toolId"}, "itself"},
		{"commonError text", func(m *tool.Manifest) { m.CommonErrors = []tool.CommonError{{Resolution: "x"}} }, []string{"commonErrors[0].error"}, "required"},
		{"specUrl", func(m *tool.Manifest) { m.Source.SpecURL = "openapi.json" }, []string{"source.specUrl"}, "absolute URL"},
		{"input schema not object", func(m *tool.Manifest) { m.InputSchema = json.RawMessage(`{"type":"string"}`); m.Examples = nil }, []string{"inputSchema.type"}, `must be "object"`},
		{"input schema type typo", func(m *tool.Manifest) {
			m.InputSchema = json.RawMessage(`{"type":"object","properties":{"amount":{"type":"numbr"}}}`)
			m.Examples = nil
		}, []string{"inputSchema.properties.amount.type"}, "must be"},
		{"input schema array index", func(m *tool.Manifest) {
			m.InputSchema = json.RawMessage(`{"type":"object","allOf":[{"minProperties":-1}]}`)
			m.Examples = nil
		}, []string{"inputSchema.allOf[0].minProperties"}, ""},
		{"input schema external ref", func(m *tool.Manifest) {
			m.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)
			m.Examples = nil
		}, []string{"inputSchema"}, "external $ref"},
		{"input schema too large", func(m *tool.Manifest) {
			m.InputSchema = json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", tool.MaxSchemaBytes) + `"}`)
			m.Examples = nil
		}, []string{"inputSchema"}, "at most 524288 bytes"},
		{"output schema typo", func(m *tool.Manifest) {
			m.OutputSchema = json.RawMessage(`{"type":"object","required":"converted"}`)
		}, []string{"outputSchema.required"}, ""},
		{"example input missing", func(m *tool.Manifest) { m.Examples[0].Input = nil }, []string{"examples[0].input"}, "required"},
		{"example input wrong type", func(m *tool.Manifest) {
			m.Examples[0].Input = json.RawMessage(`{"amount":"100","from":"USD","to":"EUR"}`)
		}, []string{"examples[0].input.amount"}, "got string, want number"},
		{"example input missing property", func(m *tool.Manifest) {
			m.Examples[0].Input = json.RawMessage(`{"amount":1,"from":"USD"}`)
		}, []string{"examples[0].input"}, "missing property 'to'"},
		{"example input array item", func(m *tool.Manifest) {
			m.Examples[0].Input = json.RawMessage(`{"amount":1,"from":"USD","to":"EUR","items":[1,"x"]}`)
		}, []string{"examples[0].input.items[1]"}, "want integer"},
		{"example input pattern", func(m *tool.Manifest) {
			m.Examples[0].Input = json.RawMessage(`{"amount":1,"from":"usd","to":"EUR"}`)
		}, []string{"examples[0].input.from"}, "does not match pattern"},
		{"example output", func(m *tool.Manifest) { m.Examples[0].Output = json.RawMessage(`{"converted":1}`) }, []string{"examples[0].output"}, "missing property 'rate'"},
		{"several problems at once", func(m *tool.Manifest) {
			m.Verb = "x"
			m.Category = ""
			m.Examples[0].Input = json.RawMessage(`{"amount":-5,"from":"USD","to":"EUR"}`)
		}, []string{"verb", "category", "examples[0].input.amount"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := valid(t)
			tc.mutate(&m)
			err := tool.Validate(&m)
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("Validate = %v, want fault.ErrInvalid", err)
			}
			if got := paths(err); !slices.Equal(got, tc.want) {
				t.Fatalf("paths = %q, want %q (err: %v)", got, tc.want, err)
			}
			if msg := fault.Fields(err)[0].Message; !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q does not contain %q", msg, tc.msg)
			}
		})
	}
}

func TestParseStrict(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want []string
		msg  string
	}{
		{"syntax", `{"toolId": }`, []string{""}, "not valid JSON"},
		{"not object", `[1]`, []string{""}, "JSON object"},
		{"trailing data", `{} {}`, []string{""}, "after the JSON object"},
		{"unknown top-level", `{"toolId":"a","colour":"red"}`, []string{"colour"}, "unknown field"},
		{"snake case hint", `{"tool_id":"a"}`, []string{"tool_id"}, `did you mean "toolId"`},
		{"unknown nested", `{"relationships":{"commonPairings":[{"toolId":"b","score":1}]}}`, []string{"relationships.commonPairings[0].score"}, "unknown field"},
		{"unknown in entity", `{"entities":[{"name":"x","kind":"y"}]}`, []string{"entities[0].kind"}, "unknown field"},
		{"type string", `{"toolId": 5}`, []string{"toolId"}, "must be a string, got number"},
		{"type array", `{"tags": "a"}`, []string{"tags"}, "must be an array"},
		{"type array item", `{"tags": ["a", 1]}`, []string{"tags[1]"}, "must be a string"},
		{"type number", `{"relationships":{"commonPairings":[{"toolId":"b","cooccurrenceScore":"high"}]}}`, []string{"relationships.commonPairings[0].cooccurrenceScore"}, "must be a number"},
		{"type object", `{"source": "demo"}`, []string{"source"}, "must be an object"},
		{"commonError bad", `{"commonErrors": [5]}`, []string{"commonErrors[0]"}, "must be an object"},
		{"all at once", `{"toolId": 1, "x": 2, "tags": [true]}`, []string{"tags[0]", "toolId", "x"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tool.Parse([]byte(tc.raw))
			if !errors.Is(err, fault.ErrMalformed) {
				t.Fatalf("Parse = %v, want fault.ErrMalformed", err)
			}
			if got := paths(err); !slices.Equal(got, tc.want) {
				t.Fatalf("paths = %q, want %q (err: %v)", got, tc.want, err)
			}
			if msg := fault.Fields(err)[0].Message; !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q does not contain %q", msg, tc.msg)
			}
		})
	}
}

func TestParseAcceptsFreeFormSchemasAndNulls(t *testing.T) {
	m, err := tool.Parse([]byte(`{"toolId":"a.b","tags":null,"inputSchema":{"type":"object","x-anything":{"deep":[1]}},
		"examples":[{"input":{"whatever":true},"output":[1,2]}],"commonErrors":["boom"]}`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if m.ToolID != "a.b" || len(m.Examples) != 1 || m.CommonErrors[0].Error != "boom" {
		t.Fatalf("Parse decoded %+v", m)
	}
}

func TestNormalizeDefaults(t *testing.T) {
	m := tool.Manifest{ToolID: " a.b ", Description: "Does a thing. And more.", Complexity: "HIGH", Status: ""}
	tool.Normalize(&m)
	checks := []struct{ field, got, want string }{
		{"toolId", m.ToolID, "a.b"},
		{"groups", strings.Join(m.Groups, ","), "default"},
		{"status", m.Status, "active"},
		{"version", m.Version, "1.0.0"},
		{"complexity", m.Complexity, "high"},
		{"requiredPermission", m.RequiredPermission, "guest"},
		{"permissionsRequired", strings.Join(m.PermissionsRequired, ","), "public"},
		{"shortDescription", m.ShortDescription, "Does a thing."},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	kept := tool.Manifest{Groups: []string{"admin"}, Version: "2.0.0", ShortDescription: "mine", Description: "Long. Text."}
	tool.Normalize(&kept)
	if kept.Groups[0] != "admin" || kept.Version != "2.0.0" || kept.ShortDescription != "mine" {
		t.Errorf("Normalize overwrote set fields: %+v", kept)
	}
}

func TestShortDescription(t *testing.T) {
	long := strings.Repeat("word ", 40) // 200 chars, one sentence
	tests := []struct {
		name, in, want string
	}{
		{"first sentence", "Converts money. Uses hourly rates.", "Converts money."},
		{"question", "Is it raining? Ask here.", "Is it raining?"},
		{"no sentence end", "Converts money", "Converts money"},
		{"decimal is not an end", "Costs 3.5 dollars per call. More.", "Costs 3.5 dollars per call."},
		{"whitespace collapsed", "Converts\n\t money.  Next.", "Converts money."},
		{"cut on word", long, strings.TrimSpace(strings.Repeat("word ", 19)) + "…"},
		{"one huge word", strings.Repeat("x", 150), strings.Repeat("x", 99) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tool.ShortDescription(tc.in)
			if got != tc.want {
				t.Fatalf("ShortDescription = %q, want %q", got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > tool.MaxShortDescriptionLen {
				t.Fatalf("length %d > 100", n)
			}
		})
	}
}

func TestCompileSchemaAndValidateValue(t *testing.T) {
	s, err := tool.CompileSchema("inputSchema", json.RawMessage(`{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"rows":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}}}}`))
	if err != nil {
		t.Fatalf("CompileSchema: %v", err)
	}
	var v any
	if err := json.Unmarshal([]byte(`{"when":"yesterday","rows":[{"n":1},{"n":1.5}]}`), &v); err != nil {
		t.Fatal(err)
	}
	got := tool.ValidateValue(s, "input", v)
	var ps []string
	for _, f := range got {
		ps = append(ps, f.Path)
	}
	want := []string{"input.when", "input.rows[1].n"}
	slices.Sort(ps)
	slices.Sort(want)
	if !slices.Equal(ps, want) {
		t.Fatalf("paths = %q, want %q (%v)", ps, want, got)
	}
	if fe := tool.ValidateValue(s, "input", map[string]any{"when": "2024-01-02T03:04:05Z"}); fe != nil {
		t.Fatalf("valid value reported %v", fe)
	}
	_, err = tool.CompileSchema("outputSchema", json.RawMessage(`{"type":`))
	if !errors.Is(err, fault.ErrInvalid) || paths(err)[0] != "outputSchema" {
		t.Fatalf("bad JSON schema: %v", err)
	}
}

func TestValidateRefusesControlCharacters(t *testing.T) {
	m := tool.Manifest{ToolID: "t.j", Verb: "DO_IT", Name: "bad\x00name", Description: "line one\nline two\x1b[2J", Category: "misc",
		UseCases: []string{"fine", "use\x1b[31m red"}, Tags: []string{"ok\x07"}}
	err := tool.Validate(&m)
	fields := fault.Fields(err)
	var paths []string
	for _, f := range fields {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"description", "name", "tags[0]", "useCases[1]"}) {
		t.Fatalf("fields %v (%v), want name, description, tags[0] and useCases[1]", paths, err)
	}
	if got := tool.StripControl("a\x00b\tc\nd\x7f"); got != "ab\tc\nd" {
		t.Fatalf("StripControl = %q", got)
	}
	// A bidirectional override or isolate is refused: the text would read
	// otherwise than it is stored. Right-to-left marks stay allowed.
	m = tool.Manifest{ToolID: "t.j", Verb: "DO_IT", Name: "Detect \u202elanguage", Description: "\u2067isolated\u2069 words", Category: "misc",
		UseCases: []string{"\u05e9\u05dc\u05d5\u05dd\u200f ok"}}
	paths = nil
	for _, f := range fault.Fields(tool.Validate(&m)) {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"description", "name"}) {
		t.Fatalf("bidi controls: fields %v, want description and name", paths)
	}
}
