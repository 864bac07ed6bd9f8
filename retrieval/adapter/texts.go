package adapter

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/toolsmith/toolsmith/tool"
)

// MaxSentences bounds how many sentences of a description become texts.
const MaxSentences = 4

// CatalogueTexts are the texts a tool's manifest says about it, each of
// which should retrieve the tool: its use cases, its short description and
// the first sentences of its description, its verb in words, its name, and
// its parameter names (one text). They are the unlabelled training data of
// an adapter learned from a catalogue alone; a text equal to another is
// given once.
func CatalogueTexts(m tool.Manifest) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.Join(strings.Fields(s), " ")
		k := strings.ToLower(strings.TrimRight(s, ". "))
		if len(k) < 3 || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, s)
	}
	for _, u := range m.UseCases {
		add(u)
	}
	add(m.ShortDescription)
	for i, s := range sentences(m.Description) {
		if i == MaxSentences {
			break
		}
		add(s)
	}
	add(tool.VerbWords(m.Verb))
	add(m.Name)
	add(strings.Join(paramNames(m.InputSchema), " "))
	return out
}

// sentences splits a text at ". ", "! ", "? " and line breaks.
func sentences(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i, r := range rs {
		end := r == '\n' || ((r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || rs[i+1] == ' '))
		if end {
			if t := strings.TrimSpace(string(rs[start : i+1])); t != "" {
				out = append(out, t)
			}
			start = i + 1
		}
	}
	if t := strings.TrimSpace(string(rs[start:])); t != "" {
		out = append(out, t)
	}
	return out
}

// paramNames are the property names of a JSON Schema object, in words
// ("from_currency" → "from currency"), sorted.
func paramNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []string
	for name := range s.Properties {
		out = append(out, strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' }), " "))
	}
	sort.Strings(out)
	return out
}
