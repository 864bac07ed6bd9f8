package kit

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// MockMode selects how a Mock answers.
type MockMode int

// Mock modes.
const (
	// MockValid answers with a response that matches the spec.
	MockValid MockMode = iota
	// MockInvalid answers with a response that breaks the spec.
	MockInvalid
	// MockRedirect answers 302 to RedirectTo (another host).
	MockRedirect
)

// ErrNoInvalidResponse is returned when a spec accepts every response of an
// operation (any status, any body), so no invalid one can be built.
var ErrNoInvalidResponse = errors.New("the operation accepts any response; no invalid response exists")

// Mock is an http.Handler that plays one operation of a spec: it validates
// each request against the operation and answers from the spec's examples
// and schemas.
type Mock struct {
	doc        *openapi3.T
	tool       Tool
	Mode       MockMode
	RedirectTo string

	mu       sync.Mutex
	requests int
	problems []string
}

// NewMock builds a Mock for one tool of a spec.
func NewMock(specJSON []byte, t Tool) (*Mock, error) {
	doc, err := LoadSpec(specJSON)
	if err != nil {
		return nil, err
	}
	if _, _, err := Operation(doc, t); err != nil {
		return nil, err
	}
	return &Mock{doc: doc, tool: t}, nil
}

// Requests counts the requests the mock received.
func (m *Mock) Requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests
}

// Problems lists requests that did not match the spec.
func (m *Mock) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.requests++
	m.mu.Unlock()
	item, op, _ := Operation(m.doc, m.tool)
	wirePath, fixed := SplitTemplate(m.tool.Path)
	params, ok := m.route(item, op, wirePath, r.URL.EscapedPath())
	if !ok {
		// Templates with literal reserved characters ("(", "*") may arrive
		// escaped otherwise.
		params, ok = m.route(item, op, wirePath, r.URL.Path)
	}
	// Parameters declared "in: path" that the template puts in its query
	// part ("/search?term={term}") arrive as query parameters.
	for _, key := range sortedValuesKeys(fixed) {
		for _, v := range fixed[key] {
			if name, isExpr := expression(v); isExpr && ok {
				params[name] = r.URL.Query().Get(key)
			} else if ok && r.URL.Query().Get(key) != v {
				ok = false
			}
		}
	}
	if !ok || r.Method != m.tool.Method {
		m.problem(fmt.Sprintf("unexpected %s %s", r.Method, r.URL.Path))
		http.Error(w, "no such operation", http.StatusNotFound)
		return
	}
	route := &routers.Route{Spec: m.doc, Path: m.tool.Path, PathItem: item, Method: m.tool.Method, Operation: op}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: requestOptions(r)}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		m.problem("request does not match the spec: " + FirstLine(err.Error()))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch m.Mode {
	case MockRedirect:
		http.Redirect(w, r, m.RedirectTo, http.StatusFound)
	case MockInvalid:
		status, ctype, body, err := InvalidResponse(op)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	default:
		status, ctype, body := ValidResponse(op)
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

func (m *Mock) problem(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.problems = append(m.problems, p)
}

// route matches a request path against the tool's template and returns its
// path parameters. Where a segment holds several expressions and a value
// could be split more than one way ("{major}.{minor}" from "1.2.3"), the
// split whose values each parameter's schema accepts wins; when none does,
// the first split is taken and request validation says what is wrong.
func (m *Mock) route(item *openapi3.PathItem, op *openapi3.Operation, template, path string) (map[string]string, bool) {
	schemas := map[string]*openapi3.Schema{}
	for _, p := range Parameters(item, op) {
		if p.In == openapi3.ParameterInPath && p.Schema != nil && p.Schema.Value != nil {
			schemas[p.Name] = p.Schema.Value
		}
	}
	accept := func(name, value string) bool {
		s := schemas[name]
		return s == nil || s.VisitJSON(typedValue(s, value)) == nil
	}
	if params, ok := matchTemplate(template, path, accept); ok {
		return params, true
	}
	return matchTemplate(template, path, nil)
}

// typedValue reads a path value as the JSON type its schema names.
func typedValue(s *openapi3.Schema, v string) any {
	switch typeOf(s) {
	case "integer", "number":
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case "array":
		items := []any{}
		for _, x := range strings.Split(v, ",") {
			if s.Items != nil && s.Items.Value != nil {
				items = append(items, typedValue(s.Items.Value, x))
			} else {
				items = append(items, x)
			}
		}
		return items
	}
	return v
}

// successResponse picks the response a healthy API gives: the lowest 2xx
// status, else the default response, else an empty 200.
func successResponse(op *openapi3.Operation) (int, *openapi3.Response) {
	if op.Responses == nil {
		return http.StatusOK, nil
	}
	var codes []int
	for code := range op.Responses.Map() {
		if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 {
			codes = append(codes, n)
		}
	}
	sort.Ints(codes)
	if len(codes) > 0 {
		r := op.Responses.Status(codes[0])
		if r != nil {
			return codes[0], r.Value
		}
	}
	if code, r := rangeResponse(op, "2XX"); r != nil {
		return code, r
	}
	if d := op.Responses.Default(); d != nil && d.Value != nil {
		return http.StatusOK, d.Value
	}
	// Only error responses are declared: play the first of them.
	var any []int
	for code := range op.Responses.Map() {
		if n, err := strconv.Atoi(code); err == nil {
			any = append(any, n)
		}
	}
	sort.Ints(any)
	if len(any) > 0 {
		if r := op.Responses.Status(any[0]); r != nil {
			return any[0], r.Value
		}
	}
	return http.StatusOK, nil
}

func rangeResponse(op *openapi3.Operation, key string) (int, *openapi3.Response) {
	m := op.Responses.Map()
	codes := make([]string, 0, len(m))
	for code := range m {
		codes = append(codes, code)
	}
	sort.Strings(codes) // "2XX" before "2xx", whichever map order
	for _, code := range codes {
		if r := m[code]; strings.EqualFold(code, key) && r != nil && r.Value != nil {
			return 200, r.Value
		}
	}
	return 0, nil
}

func pickMedia(resp *openapi3.Response) (string, *openapi3.MediaType) {
	if resp == nil || len(resp.Content) == 0 {
		return "", nil
	}
	types := make([]string, 0, len(resp.Content))
	for mt := range resp.Content {
		types = append(types, mt)
	}
	sort.Slice(types, func(i, j int) bool {
		if mediaRank(types[i]) != mediaRank(types[j]) {
			return mediaRank(types[i]) < mediaRank(types[j])
		}
		return types[i] < types[j]
	})
	return types[0], resp.Content[types[0]]
}

// ValidResponse builds the status, content type and body of a response that
// matches the operation: the media type's example when it validates, else a
// synthesised sample.
func ValidResponse(op *openapi3.Operation) (int, string, []byte) {
	status, resp := successResponse(op)
	mt, media := pickMedia(resp)
	if media == nil || noBody(status) {
		return status, "", nil
	}
	mtName := concreteType(mt)
	var schema *openapi3.Schema
	if media.Schema != nil {
		schema = media.Schema.Value
	}
	var value any
	found := false
	examples := []any{}
	if media.Example != nil {
		examples = append(examples, media.Example)
	}
	names := make([]string, 0, len(media.Examples))
	for k := range media.Examples {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if ex := media.Examples[k]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
			examples = append(examples, ex.Value.Value)
		}
	}
	for _, ex := range examples {
		ex = normaliseJSON(ex)
		if schema == nil || schema.VisitJSON(ex, response.visitOptions()...) == nil {
			value, found = ex, true
			break
		}
	}
	if !found && schema != nil {
		if value, found = sampleFor(schema, response); !found {
			// Best effort: a synthesised value that may still miss a rule.
			b := newBudget()
			b.dir = response
			value, found = synthesise(schema, 0, b), true
		}
	}
	if !found {
		value = map[string]any{}
	}
	if strings.Contains(mtName, "xml") {
		if b, err := encodeXML(value); err == nil {
			return status, mtName, b
		}
	}
	if !strings.Contains(mtName, "json") {
		if s, ok := value.(string); ok {
			return status, mtName, []byte(s)
		}
	}
	b, _ := json.Marshal(value)
	return status, mtName, b
}

// InvalidResponse builds a response that breaks the operation's spec: a body
// of the wrong JSON type, else a content type the spec does not declare,
// else a status it does not declare.
func InvalidResponse(op *openapi3.Operation) (int, string, []byte, error) {
	status, resp := successResponse(op)
	mt, media := pickMedia(resp)
	if noBody(status) || unvalidatedStatus(status) {
		media = nil // no body can be wrong; fall through to an undeclared status
	}
	// A content type the spec does not declare is refused whatever the body
	// (binary formats included); a wildcard declaration accepts any type,
	// so then a body of the wrong JSON type is sent instead.
	if media != nil && !strings.Contains(mt, "*") {
		return status, "application/x-toolsmith-undeclared", []byte("?"), nil
	}
	if media != nil && strings.Contains(mt, "json") && media.Schema != nil && media.Schema.Value != nil {
		for _, wrong := range []any{"not-what-the-spec-says", 12345.0, []any{}, map[string]any{"__unexpected__": true}} {
			if media.Schema.Value.VisitJSON(wrong) != nil {
				b, _ := json.Marshal(wrong)
				return status, concreteType(mt), b, nil
			}
		}
	}
	if op.Responses == nil || op.Responses.Default() == nil {
		for _, code := range []int{418, 299, 599} {
			if op.Responses == nil || op.Responses.Status(code) == nil {
				return code, "", nil, nil
			}
		}
	}
	return 0, "", nil, ErrNoInvalidResponse
}

// unvalidatedStatus reports the statuses openapi3filter never validates
// (redirects and 304): a wrong body under them goes unnoticed.
func unvalidatedStatus(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusNotModified, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// concreteType turns a declared media type into one a response can carry:
// wildcards become JSON ("*/*", "application/*") or plain text ("text/*").
func concreteType(mt string) string {
	switch {
	case !strings.Contains(mt, "*"):
		return mt
	case strings.HasPrefix(mt, "text/"):
		return "text/plain"
	case mt == "*/*" || strings.HasPrefix(mt, "application/"):
		return "application/json"
	default:
		return strings.ReplaceAll(mt, "*", "x")
	}
}
