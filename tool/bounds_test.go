package tool_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// nestedArraySchema is an object schema whose property "a" is an array of
// arrays nested depth deep.
func nestedArraySchema(depth int) json.RawMessage {
	inner := `{"type":"string"}`
	for range depth {
		inner = `{"type":"array","items":` + inner + `}`
	}
	return json.RawMessage(`{"type":"object","properties":{"a":` + inner + `}}`)
}

// TestValidateRefusesDeepSchemas: a schema nested past MaxJSONDepth is one
// error naming the field, found on the raw JSON (the compiler never sees
// it), whatever the depth; the deepest schema within the bound passes.
func TestValidateRefusesDeepSchemas(t *testing.T) {
	for _, depth := range []int{40, 1000, 9000} {
		m := valid(t)
		m.InputSchema = nestedArraySchema(depth)
		m.OutputSchema = nestedArraySchema(depth)
		m.Examples = nil
		err := tool.Validate(&m)
		if !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("depth %d: Validate = %v, want invalid", depth, err)
		}
		if got := paths(err); !slices.Equal(got, []string{"inputSchema", "outputSchema"}) {
			t.Fatalf("depth %d: paths %q, want inputSchema and outputSchema (%v)", depth, got, err)
		}
		if msg := fault.Fields(err)[0].Message; !strings.Contains(msg, "at most 32 deep") {
			t.Fatalf("depth %d: message %q does not give the bound", depth, msg)
		}
	}
	// {"type":"object","properties":{"a": …}} is two levels, each array
	// schema one more and the string schema inside them one: 29 arrays make
	// the bound's 32 exactly.
	m := valid(t)
	m.InputSchema = nestedArraySchema(tool.MaxJSONDepth - 3)
	m.Examples = nil
	if err := tool.Validate(&m); err != nil {
		t.Fatalf("a schema %d deep: %v", tool.MaxJSONDepth, err)
	}
}

func TestDeeperThan(t *testing.T) {
	tests := []struct {
		raw  string
		max  int
		want bool
	}{
		{`{}`, 1, false},
		{`{"a":{}}`, 1, true},
		{`[[[]]]`, 3, false},
		{`[[[]]]`, 2, true},
		{`{"a":"[[[[{{{{"}`, 1, false},       // brackets in a string do not count
		{`{"a":"\"[[[[", "b":[]}`, 2, false}, // nor after an escaped quote
		{`{"a":"\\", "b":[[]]}`, 2, true},    // an escaped backslash ends the string
		{`"plain"`, 0, false},
	}
	for _, tc := range tests {
		if got := tool.DeeperThan([]byte(tc.raw), tc.max); got != tc.want {
			t.Errorf("DeeperThan(%s, %d) = %v, want %v", tc.raw, tc.max, got, tc.want)
		}
		var v any
		if err := json.Unmarshal([]byte(tc.raw), &v); err != nil {
			t.Fatal(err)
		}
		if got := tool.ValueDeeperThan(v, tc.max); got != tc.want {
			t.Errorf("ValueDeeperThan(%s, %d) = %v, want %v", tc.raw, tc.max, got, tc.want)
		}
	}
}

// TestValidateBoundsLists: every list of a manifest has a bound, and a
// list over it is one error naming the list (not one per item).
func TestValidateBoundsLists(t *testing.T) {
	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	over := tool.MaxListItems + 1
	words := many(over, func(i int) string { return "w" + strings.Repeat("x", i%7) })
	ids := many(over, func(i int) string { return "other.t" + strings.Repeat("x", i%7) })
	tests := []struct {
		path   string
		mutate func(m *tool.Manifest)
	}{
		{"tags", func(m *tool.Manifest) { m.Tags = words }},
		{"groups", func(m *tool.Manifest) { m.Groups = words }},
		{"availableInStates", func(m *tool.Manifest) { m.AvailableInStates = words }},
		{"useCases", func(m *tool.Manifest) { m.UseCases = words }},
		{"permissionsRequired", func(m *tool.Manifest) { m.PermissionsRequired = many(over, func(int) string { return "public" }) }},
		{"entities", func(m *tool.Manifest) { m.Entities = make([]tool.Entity, over); m.Entities[0].Name = "" }},
		{"entities[0].aliases", func(m *tool.Manifest) { m.Entities = []tool.Entity{{Name: "E", Aliases: words}} }},
		{"relationships.dependencies", func(m *tool.Manifest) { m.Relationships.Dependencies = ids }},
		{"relationships.alternatives", func(m *tool.Manifest) { m.Relationships.Alternatives = ids }},
		{"relationships.commonPairings", func(m *tool.Manifest) {
			m.Relationships.Pairings = make([]tool.Pairing, over)
		}},
		{"commonErrors", func(m *tool.Manifest) { m.CommonErrors = make([]tool.CommonError, over) }},
		{"examples", func(m *tool.Manifest) { m.Examples = make([]tool.Example, tool.MaxExamples+1) }},
		{"inputSchema.properties", func(m *tool.Manifest) {
			props := many(tool.MaxParameters+1, func(i int) string { return `"p` + strconv.Itoa(i) + `":{}` })
			m.InputSchema = json.RawMessage(`{"type":"object","properties":{` + strings.Join(props, ",") + `}}`)
			m.Examples = nil
		}},
		{"inputSchema.required", func(m *tool.Manifest) {
			req := many(tool.MaxParameters+1, func(i int) string { return `"p` + strconv.Itoa(i) + `"` })
			m.InputSchema = json.RawMessage(`{"type":"object","required":[` + strings.Join(req, ",") + `]}`)
			m.Examples = nil
		}},
	}
	for _, tc := range tests {
		m := valid(t)
		tc.mutate(&m)
		err := tool.Validate(&m)
		if got := paths(err); !slices.Equal(got, []string{tc.path}) {
			t.Errorf("%s: paths %q, want just %q (%v)", tc.path, got, tc.path, err)
			continue
		}
		if msg := fault.Fields(err)[0].Message; !strings.Contains(msg, "items, got") {
			t.Errorf("%s: message %q", tc.path, msg)
		}
	}
	// At the bound the lists pass.
	m := valid(t)
	m.Tags = words[:tool.MaxListItems]
	m.UseCases = words[:tool.MaxListItems]
	if err := tool.Validate(&m); err != nil {
		t.Fatalf("lists at the bound: %v", err)
	}
}

// TestValidateBoundsTexts: the free texts beside the lists are bounded and
// carry no control characters other than tab and newline, nor do a
// schema's property names, titles and descriptions.
func TestValidateBoundsTexts(t *testing.T) {
	long := strings.Repeat("s", tool.MaxTextLen+1)
	tests := []struct {
		path   string
		mutate func(m *tool.Manifest)
		msg    string
	}{
		{"examples[0].scenario", func(m *tool.Manifest) { m.Examples[0].Scenario = long }, "at most 2000"},
		{"examples[0].scenario", func(m *tool.Manifest) { m.Examples[0].Scenario = "red \x1b[31m" }, "control"},
		{"examples[0].explanation", func(m *tool.Manifest) { m.Examples[0].Explanation = "\x00" }, "control"},
		{"examples[0].input", func(m *tool.Manifest) {
			m.Examples[0].Input = json.RawMessage(`{"amount":1,"from":"USD","to":"EUR","items":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`)
		}, "at most 32 deep"},
		{"examples[0].output", func(m *tool.Manifest) {
			m.Examples[0].Output = json.RawMessage(`{"converted":"` + strings.Repeat("x", tool.MaxExampleBytes) + `"}`)
		}, "bytes"},
		{"entities[0].name", func(m *tool.Manifest) { m.Entities[0].Name = "Cur\x1brency" }, "control"},
		{"entities[0].name", func(m *tool.Manifest) { m.Entities[0].Name = strings.Repeat("n", tool.MaxNameLen+1) }, "at most 200"},
		{"entities[0].type", func(m *tool.Manifest) { m.Entities[0].Type = "Con\x1bcept" }, "control"},
		{"source.origin", func(m *tool.Manifest) { m.Source.Origin = "de\x1bmo" }, "control"},
		{"source.license", func(m *tool.Manifest) { m.Source.License = long }, "at most 2000"},
		{"commonErrors[1].resolution", func(m *tool.Manifest) { m.CommonErrors[1].Resolution = "retry\x1b" }, "control"},
		{"explanation", func(m *tool.Manifest) { m.Explanation = "\x1b[2J" }, "control"},
		{"inputSchema.properties", func(m *tool.Manifest) {
			m.InputSchema = json.RawMessage(`{"type":"object","properties":{"am\u001bount":{"type":"number"}}}`)
			m.Examples = nil
		}, "member name"},
		{"inputSchema.properties.amount.description", func(m *tool.Manifest) {
			m.InputSchema = json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","description":"how \u001b[31mmuch"}}}`)
			m.Examples = nil
		}, "control"},
		{"outputSchema.title", func(m *tool.Manifest) {
			m.OutputSchema = json.RawMessage(`{"type":"object","title":"\u0007"}`)
		}, "control"},
	}
	for _, tc := range tests {
		m := valid(t)
		tc.mutate(&m)
		err := tool.Validate(&m)
		if got := paths(err); !slices.Equal(got, []string{tc.path}) {
			t.Errorf("%s: paths %q, want just %q (%v)", tc.path, got, tc.path, err)
			continue
		}
		if msg := fault.Fields(err)[0].Message; !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: message %q, want %q in it", tc.path, msg, tc.msg)
		}
	}
	// Tabs and newlines stay allowed in prose.
	m := valid(t)
	m.Examples[0].Scenario = "dollars\tto euros\nat the mid rate"
	m.InputSchema = json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number","description":"how much,\nin the from currency"},"from":{"type":"string"},"to":{"type":"string"}}}`)
	if err := tool.Validate(&m); err != nil {
		t.Fatalf("tabs and newlines: %v", err)
	}
}
