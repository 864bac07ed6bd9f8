package kit

import (
	"crypto/sha256"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// specs memoises parsed specs: a wrapper parses its embedded spec once per
// process however many tools it has. Parsed specs are only read afterwards.
var specs sync.Map // sha256 of the JSON → *openapi3.T

// LoadSpec parses a normalised spec (JSON), refusing external refs.
func LoadSpec(specJSON []byte) (*openapi3.T, error) {
	key := sha256.Sum256(specJSON)
	if doc, ok := specs.Load(key); ok {
		return doc.(*openapi3.T), nil
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(specJSON)
	if err != nil {
		return nil, fmt.Errorf("kit: load spec: %w", err)
	}
	actual, _ := specs.LoadOrStore(key, doc)
	return actual.(*openapi3.T), nil
}

// Tool is one approved operation of a wrapper.
type Tool struct {
	Name        string   `json:"name"` // snake_case, unique within the wrapper
	Method      string   `json:"method"`
	Path        string   `json:"path"`
	OperationID string   `json:"operationId,omitempty"`
	Summary     string   `json:"summary,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// Named reports whether want names the tool: its tool name, its
// operationId or one of its tags. It is the one rule for a policy's
// operations, both where a reviewer's choice is checked and where the
// wrapper is generated.
func (t Tool) Named(want string) bool {
	if t.Name == want || t.OperationID != "" && t.OperationID == want {
		return true
	}
	for _, tag := range t.Tags {
		if tag == want {
			return true
		}
	}
	return false
}

// BodyArg is the argument that carries a request body.
const BodyArg = "body"

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)
var camel = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// ToolName cleans an operationId, or method + path, into a snake_case name.
func ToolName(operationID, method, path string) string {
	base := operationID
	if base == "" {
		base = strings.ToLower(method) + "_" + strings.NewReplacer("{", "by_", "}", "").Replace(path)
	}
	base = camel.ReplaceAllString(base, "${1}_${2}")
	base = strings.Trim(nonWord.ReplaceAllString(strings.ToLower(base), "_"), "_")
	if base == "" {
		base = strings.ToLower(method)
	}
	if base[0] >= '0' && base[0] <= '9' {
		base = "op_" + base
	}
	// 60, not 64: room for a "_N" suffix when names collide, and verbs
	// (the upper-cased name) are limited to 64 characters.
	if len(base) > 60 {
		base = strings.TrimRight(base[:60], "_")
	}
	return base
}

// Operations lists every operation of doc as a Tool, in path then method
// order, with unique names.
func Operations(doc *openapi3.T) []Tool {
	var out []Tool
	seen := map[string]int{}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, p := range paths {
		item := doc.Paths.Value(p)
		ops := item.Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			op := ops[m]
			name := ToolName(op.OperationID, m, p)
			seen[name]++
			if seen[name] > 1 {
				name = fmt.Sprintf("%s_%d", name, seen[name])
			}
			summary := op.Summary
			if summary == "" {
				summary = FirstLine(op.Description)
			}
			out = append(out, Tool{Name: name, Method: strings.ToUpper(m), Path: p, OperationID: op.OperationID, Summary: summary, Tags: op.Tags})
		}
	}
	return out
}

// Operation finds the operation and path item of a tool.
func Operation(doc *openapi3.T, t Tool) (*openapi3.PathItem, *openapi3.Operation, error) {
	item := doc.Paths.Value(t.Path)
	if item == nil {
		return nil, nil, fmt.Errorf("kit: path %q not in spec", t.Path)
	}
	op := item.GetOperation(t.Method)
	if op == nil {
		return nil, nil, fmt.Errorf("kit: %s %s not in spec", t.Method, t.Path)
	}
	return item, op, nil
}

// Parameters merges path-item and operation parameters (the operation's win).
func Parameters(item *openapi3.PathItem, op *openapi3.Operation) []*openapi3.Parameter {
	byKey := map[string]*openapi3.Parameter{}
	var order []string
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			k := ref.Value.In + ":" + ref.Value.Name
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = ref.Value
		}
	}
	out := make([]*openapi3.Parameter, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

// JSONBody returns the media type and schema of an operation's request body
// when it has one: JSON preferred, then form-urlencoded, then anything else.
func JSONBody(op *openapi3.Operation) (mediaType string, schema *openapi3.SchemaRef, required bool) {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return "", nil, false
	}
	rb := op.RequestBody.Value
	if len(rb.Content) == 0 {
		return "", nil, false
	}
	types := make([]string, 0, len(rb.Content))
	for mt := range rb.Content {
		types = append(types, mt)
	}
	sort.Slice(types, func(i, j int) bool {
		return mediaRank(types[i]) < mediaRank(types[j]) || (mediaRank(types[i]) == mediaRank(types[j]) && types[i] < types[j])
	})
	mt := types[0]
	schema = rb.Content[mt].Schema
	if schema == nil {
		schema = openapi3.NewSchemaRef("", openapi3.NewSchema())
	}
	return mt, schema, rb.Required
}

func mediaRank(mt string) int {
	switch {
	case mt == "application/json":
		return 0
	case strings.HasSuffix(mt, "+json") || strings.Contains(mt, "json"):
		return 1
	case mt == "application/x-www-form-urlencoded":
		return 2
	case strings.HasPrefix(mt, "text/"):
		return 3
	default:
		return 4
	}
}

// InputSchema merges a tool's parameters and request body into one object
// schema: each parameter is a property under its own name (header and
// cookie parameters too), the body is the property "body". Unknown
// arguments are refused (additionalProperties: false).
func InputSchema(doc *openapi3.T, t Tool) (*openapi3.Schema, error) {
	item, op, err := Operation(doc, t)
	if err != nil {
		return nil, err
	}
	s := openapi3.NewObjectSchema()
	s.Properties = openapi3.Schemas{}
	no := false
	s.AdditionalProperties = openapi3.AdditionalProperties{Has: &no}
	params := Parameters(item, op)
	names := ArgNames(params)
	for i, p := range params {
		ps := p.Schema
		if ps == nil && len(p.Content) > 0 {
			// The spec allows one media type here; of several, the same
			// one is taken every time (map order is random).
			types := make([]string, 0, len(p.Content))
			for mt := range p.Content {
				types = append(types, mt)
			}
			sort.Slice(types, func(i, j int) bool {
				return mediaRank(types[i]) < mediaRank(types[j]) || (mediaRank(types[i]) == mediaRank(types[j]) && types[i] < types[j])
			})
			if mt := p.Content[types[0]]; mt != nil {
				ps = mt.Schema
			}
		}
		if ps == nil {
			ps = openapi3.NewSchemaRef("", openapi3.NewStringSchema())
		}
		if p.Description != "" && ps.Value != nil && ps.Value.Description == "" {
			cp := *ps.Value
			cp.Description = p.Description
			ps = openapi3.NewSchemaRef("", &cp)
		}
		if ps.Value != nil && (ps.Value.ReadOnly || ps.Value.WriteOnly) {
			// readOnly and writeOnly say which way a property of a body
			// travels; a parameter always travels in the request. Specs
			// reuse a response field's schema for a parameter (GitHub's
			// alert-number is readOnly), which must still be sent.
			cp := *ps.Value
			cp.ReadOnly, cp.WriteOnly = false, false
			ps = openapi3.NewSchemaRef("", &cp)
		}
		s.Properties[names[i]] = ps
		if p.Required || p.In == openapi3.ParameterInPath {
			s.Required = append(s.Required, names[i])
		}
	}
	if _, body, required := JSONBody(op); body != nil {
		s.Properties[BodyArg] = body
		if required {
			s.Required = append(s.Required, BodyArg)
		}
	}
	sort.Strings(s.Required)
	return s, nil
}

// ArgNames are the argument names of an operation's parameters, in order:
// a parameter's own name, or "<in>_<name>" (path_token, query_token) when
// parameters in different places share it, so each keeps its own value.
func ArgNames(params []*openapi3.Parameter) []string {
	count := map[string]int{}
	for _, p := range params {
		count[p.Name]++
	}
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = p.Name
		if count[p.Name] > 1 {
			out[i] = p.In + "_" + p.Name
		}
	}
	return out
}

// ServerURL returns the first server URL of the spec with its variables set
// to their defaults, or "" when there is none.
func ServerURL(doc *openapi3.T) string {
	if len(doc.Servers) == 0 || doc.Servers[0] == nil {
		return ""
	}
	srv := doc.Servers[0]
	u := srv.URL
	names := make([]string, 0, len(srv.Variables))
	for name := range srv.Variables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v := srv.Variables[name]; v != nil {
			u = strings.ReplaceAll(u, "{"+name+"}", v.Default)
		}
	}
	return u
}

// HostOf returns the host[:port] of a base URL.
func HostOf(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("kit: base URL %q: %w", base, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("kit: base URL %q must be http or https", base)
	}
	if u.Host == "" {
		return "", fmt.Errorf("kit: base URL %q has no host", base)
	}
	return u.Host, nil
}

// FirstLine returns the first line of s, cut to 300 characters.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
