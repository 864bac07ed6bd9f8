package tool

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/toolsmith/toolsmith/graph"
)

// ToGraph projects a (normalized, valid) manifest onto the graph store's
// record: the summary fields of the lightweight index, required and optional
// parameter names from inputSchema (properties listed in "required" are
// required, the rest optional, both sorted), entities, relations from the
// relationships block, use cases, the embedding and the manifest JSON itself.
// Slices are never nil so the JSON index shows [] rather than null.
// Timestamps are left for the caller and the store.
func ToGraph(m Manifest, embedding []float32) graph.Tool {
	req, opt := Params(m.InputSchema)
	raw, err := json.Marshal(m)
	if err != nil {
		// Manifest holds only strings, numbers and json.RawMessage that
		// Parse or the caller produced; RawMessage can only fail to marshal
		// when it is not valid JSON, which Validate rejects.
		raw = nil
	}
	t := graph.Tool{
		ToolSummary: graph.ToolSummary{
			ID:                m.ToolID,
			Verb:              m.Verb,
			Name:              m.Name,
			ShortDescription:  m.ShortDescription,
			Category:          m.Category,
			Tags:              nonNil(m.Tags),
			Groups:            nonNil(m.Groups),
			State:             m.State,
			AvailableInStates: slices.Clone(m.AvailableInStates),
			Permissions:       nonNil(m.PermissionsRequired),
			RequiredLevel:     m.RequiredPermission,
			Module:            m.Module,
			Complexity:        m.Complexity,
			Version:           m.Version,
			Status:            m.Status,
			RequiredParams:    req,
			OptionalParams:    opt,
		},
		Description: m.Description,
		UseCases:    slices.Clone(m.UseCases),
		ParamsText:  ParamsText(m.InputSchema),
		Embedding:   embedding,
		Manifest:    raw,
	}
	if t.Status == "" {
		t.Status = graph.StatusActive
	}
	for _, e := range m.Entities {
		t.Entities = append(t.Entities, graph.EntityRef{Name: e.Name, Type: e.Type, Aliases: slices.Clone(e.Aliases)})
	}
	if r := m.Relationships; r != nil {
		for _, id := range r.Dependencies {
			t.Relations = append(t.Relations, graph.Relation{Kind: graph.RelDependsOn, Target: id})
		}
		for _, id := range r.Alternatives {
			t.Relations = append(t.Relations, graph.Relation{Kind: graph.RelAlternative, Target: id})
		}
		for _, p := range r.Pairings {
			t.Relations = append(t.Relations, graph.Relation{Kind: graph.RelPairsWith, Target: p.ToolID, Score: p.Score, Sequence: p.Sequence})
		}
	}
	return t
}

// Params returns the required and optional top-level parameter names of an
// object input schema, each sorted. Required names that are not declared
// properties still count as required.
func Params(inputSchema json.RawMessage) (required, optional []string) {
	required, optional = []string{}, []string{}
	if isEmptyJSON(inputSchema) {
		return required, optional
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(inputSchema, &s); err != nil {
		return required, optional
	}
	for _, r := range s.Required {
		if !slices.Contains(required, r) {
			required = append(required, r)
		}
	}
	for name := range s.Properties {
		if !slices.Contains(required, name) {
			optional = append(optional, name)
		}
	}
	sort.Strings(required)
	sort.Strings(optional)
	return required, optional
}

// jsonTypes are the JSON types a parameter's schema may give it.
var jsonTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// RequiredTypes are the JSON types an object input schema gives its
// required parameters (Params names them): a property's "type", one name
// or a list of them. A required parameter without a declared property, a
// property without a "type" (or with "anyOf", "$ref" … instead) or with a
// name JSON Schema does not define is left out: its type is unknown, so
// any value fills it.
// nil when no required parameter has a type.
func RequiredTypes(inputSchema json.RawMessage) map[string][]string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(inputSchema) == 0 || json.Unmarshal(inputSchema, &s) != nil {
		return nil
	}
	var out map[string][]string
	for _, name := range s.Required {
		p, ok := s.Properties[name]
		if !ok || len(p.Type) == 0 {
			continue
		}
		var types []string
		var one string
		if json.Unmarshal(p.Type, &one) == nil {
			types = []string{one}
		} else if json.Unmarshal(p.Type, &types) != nil {
			continue
		}
		if len(types) == 0 || slices.ContainsFunc(types, func(t string) bool { return !slices.Contains(jsonTypes, t) }) {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[name] = types
	}
	return out
}

// Bounds of ParamsText: long schemas must not drown the description.
const (
	maxParamsInText    = 10
	maxParamDescInText = 80
	maxParamsText      = 500
)

// ParamsText says what a tool's inputs are, for the full-text index (not
// the embedding text, where a parameter's words would outweigh the tool's
// purpose; evaluation/TUNING.md, fifth round): each
// parameter's name in words ("from_currency" → "from currency") with the
// first clause of its description, required parameters first, at most ten
// and 500 characters, so that a terse tool whose parameters carry the
// meaning is still found, and a long schema does not drown the description.
func ParamsText(inputSchema json.RawMessage) string {
	if isEmptyJSON(inputSchema) {
		return ""
	}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(inputSchema, &s); err != nil {
		return ""
	}
	req, opt := Params(inputSchema)
	var parts []string
	for _, name := range append(req, opt...) {
		if len(parts) == maxParamsInText {
			break
		}
		p, ok := s.Properties[name]
		if !ok {
			continue
		}
		text := paramWords(name)
		desc := strings.TrimSpace(p.Description)
		if desc == "" {
			desc = strings.TrimSpace(p.Title)
		}
		if i := strings.IndexAny(desc, ".;\n"); i > 0 {
			desc = desc[:i]
		}
		if r := []rune(desc); len(r) > maxParamDescInText {
			desc = string(r[:maxParamDescInText])
		}
		if desc != "" {
			text += " (" + desc + ")"
		}
		parts = append(parts, text)
	}
	out := strings.Join(parts, ", ")
	if r := []rune(out); len(r) > maxParamsText {
		out = string(r[:maxParamsText])
	}
	return out
}

// paramWords splits a parameter name into lower-case words.
func paramWords(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
			continue
		case i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]):
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// EmbeddingText is the text embedded for a tool: the description,
// explanation, tags, input guidance and example scenarios joined; we
// lead with the name and the verb split into words ("convert currency") and
// add use cases and entity names and types, which is what planners' intents
// mention ("book a Southwest flight"). Empty parts are skipped; parts are
// joined as sentences so that no two words run together.
func EmbeddingText(m Manifest) string {
	var parts []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" {
			parts = append(parts, strings.TrimRight(s, "."))
		}
	}
	add(m.Name)
	add(VerbWords(m.Verb))
	add(m.Description)
	add(m.Explanation)
	add(strings.Join(m.Tags, " "))
	add(m.InputGuidance)
	for _, ex := range m.Examples {
		add(ex.Scenario)
	}
	for _, u := range m.UseCases {
		add(u)
	}
	var ents []string
	for _, e := range m.Entities {
		ents = append(ents, e.Name)
		if e.Type != "" && !slices.Contains(ents, e.Type) {
			ents = append(ents, e.Type)
		}
	}
	add(strings.Join(ents, " "))
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ". ") + "."
}

// VerbWords turns an UPPER_SNAKE verb into lower-case words:
// "CONVERT_CURRENCY" → "convert currency".
func VerbWords(verb string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(verb, func(r rune) bool { return r == '_' }), " "))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}
