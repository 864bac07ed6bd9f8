package kit

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// Failure stages of a call, reported in Result.Stage.
const (
	StageInput    = "input"    // arguments refused before any request
	StageRequest  = "request"  // the built request does not match the spec
	StageHost     = "host"     // a request or redirect to a host other than the approved one
	StageNetwork  = "network"  // transport error or timeout
	StageResponse = "response" // the response does not match the spec
)

// ErrForeignHost is returned when a request would leave the approved host.
var ErrForeignHost = errors.New("request to a host other than the approved one refused")

// Credential is how a wrapper authenticates; the secret comes from the
// environment of the wrapper process, named by the approval's credential
// reference, never from the spec or the arguments.
type Credential struct {
	// Kind: "bearer", "header" (Name = header), "query" (Name = parameter), "basic" (Value = user:pass).
	Kind  string `json:"kind"`
	Name  string `json:"name,omitempty"`
	Value string `json:"-"`
}

// Wrapper calls the approved operations of one spec.
type Wrapper struct {
	doc     *openapi3.T
	tools   map[string]Tool
	schemas map[string]*openapi3.Schema
	base    *url.URL
	host    string
	client  *http.Client
	cred    *Credential
}

// Options configure a Wrapper.
type Options struct {
	// BaseURL is the approved server; requests go nowhere else.
	BaseURL string
	// Timeout bounds each call (default 30 s).
	Timeout time.Duration
	// Credential, when set, is attached to every request.
	Credential *Credential
	// Transport, when set, replaces http.DefaultTransport (tests).
	Transport http.RoundTripper
}

// New builds a Wrapper over a normalised OpenAPI 3 spec (JSON) and tools.
func New(specJSON []byte, tools []Tool, opts Options) (*Wrapper, error) {
	doc, err := LoadSpec(specJSON)
	if err != nil {
		return nil, err
	}
	host, err := HostOf(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	base, _ := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	w := &Wrapper{doc: doc, tools: map[string]Tool{}, schemas: map[string]*openapi3.Schema{}, base: base, host: host, cred: opts.Credential}
	for _, t := range tools {
		s, err := InputSchema(doc, t)
		if err != nil {
			return nil, err
		}
		w.tools[t.Name] = t
		w.schemas[t.Name] = s
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	rt := opts.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	w.client = &http.Client{
		Timeout:   timeout,
		Transport: hostGuard{host: host, next: rt},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != host {
				return fmt.Errorf("%w: redirect to %s", ErrForeignHost, req.URL.Host)
			}
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return nil
		},
	}
	return w, nil
}

// hostGuard refuses any request whose host is not the approved one: a
// second line behind CheckRedirect, whatever builds the request.
type hostGuard struct {
	host string
	next http.RoundTripper
}

func (g hostGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != g.host {
		return nil, fmt.Errorf("%w: %s", ErrForeignHost, r.URL.Host)
	}
	return g.next.RoundTrip(r)
}

// InputSchema returns the JSON input schema of a tool.
func (w *Wrapper) InputSchema(name string) (*openapi3.Schema, bool) {
	s, ok := w.schemas[name]
	return s, ok
}

// Result is what a call returns to Toolsmith.
type Result struct {
	Tool      string          `json:"tool"`
	Success   bool            `json:"success"`
	Status    int             `json:"status,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	Stage     string          `json:"stage,omitempty"`
	LatencyMs int64           `json:"latencyMs"`
}

// Call validates args, sends the request to the approved host, validates
// the response and returns the result. It never returns a Go error: every
// failure is a Result with Success false, a Stage and a message.
func (w *Wrapper) Call(ctx context.Context, name string, args map[string]any) Result {
	start := time.Now()
	res := w.call(ctx, name, args)
	res.Tool = name
	res.LatencyMs = time.Since(start).Milliseconds()
	return res
}

func fail(stage, format string, a ...any) Result {
	return Result{Success: false, Stage: stage, Error: fmt.Sprintf(format, a...)}
}

func (w *Wrapper) call(ctx context.Context, name string, args map[string]any) Result {
	t, ok := w.tools[name]
	if !ok {
		return fail(StageInput, "unknown tool %q", name)
	}
	if args == nil {
		args = map[string]any{}
	}
	// As a request: a readOnly property is refused and not required, as
	// request validation below and the API itself treat it.
	if err := w.schemas[name].VisitJSON(normaliseJSON(args), openapi3.MultiErrors(), openapi3.VisitAsRequest()); err != nil {
		return fail(StageInput, "invalid arguments: %s", FirstLine(err.Error()))
	}
	item, op, err := Operation(w.doc, t)
	if err != nil {
		return fail(StageInput, "%v", err)
	}
	req, pathParams, err := w.build(ctx, t, item, op, args)
	if err != nil {
		return fail(StageInput, "%v", err)
	}
	route := &routers.Route{Spec: w.doc, Path: t.Path, PathItem: item, Method: t.Method, Operation: op}
	vin := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: pathParams, Route: route,
		Options: requestOptions(req),
	}
	if err := openapi3filter.ValidateRequest(ctx, vin); err != nil {
		return fail(StageRequest, "request does not match the spec: %s", FirstLine(err.Error()))
	}
	// ValidateRequest reads the body; restore it for sending.
	if req.GetBody != nil {
		req.Body, _ = req.GetBody()
	}
	w.authenticate(req)
	resp, err := w.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrForeignHost) {
			return fail(StageHost, "%v", err)
		}
		return fail(StageNetwork, "%v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fail(StageNetwork, "reading response: %v", err)
	}
	rin := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: vin, Status: resp.StatusCode, Header: absentHeaders(op, resp.StatusCode, resp.Header),
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: responseOptions(op, resp.StatusCode, resp.Header.Get("Content-Type")),
	}
	out := Result{Status: resp.StatusCode, Result: asJSON(body, resp.Header.Get("Content-Type"))}
	if err := openapi3filter.ValidateResponse(ctx, rin); err != nil {
		out.Stage = StageResponse
		out.Error = "response does not match the spec: " + FirstLine(err.Error())
		return out
	}
	if resp.StatusCode >= 400 {
		out.Error = fmt.Sprintf("the API answered %d", resp.StatusCode)
		return out
	}
	out.Success = true
	return out
}

// build turns arguments into an HTTP request for the approved host.
func (w *Wrapper) build(ctx context.Context, t Tool, item *openapi3.PathItem, op *openapi3.Operation, args map[string]any) (*http.Request, map[string]string, error) {
	pathParams := map[string]string{}
	pathItems := map[string][]string{}
	query := url.Values{}
	header := http.Header{}
	params := Parameters(item, op)
	names := ArgNames(params)
	for i, p := range params {
		v, ok := args[names[i]]
		if !ok {
			continue
		}
		switch p.In {
		case openapi3.ParameterInPath:
			if strings.Contains(t.Path, "{"+p.Name+"}") {
				pathItems[p.Name] = simple(v)
				pathParams[p.Name] = strings.Join(pathItems[p.Name], ",")
			}
		case openapi3.ParameterInQuery:
			for _, s := range list(v) {
				query.Add(p.Name, s)
			}
		case openapi3.ParameterInHeader:
			header.Set(p.Name, strings.Join(list(v), ","))
		case openapi3.ParameterInCookie:
			header.Add("Cookie", (&http.Cookie{Name: p.Name, Value: scalar(v)}).String())
		}
	}
	// The template is expanded as a whole (RFC 6570 level 1), never by
	// replacing one expression after another: a value is percent-encoded
	// before it joins the path, so it cannot add segments, a query or a
	// fragment, nor be read as another expression.
	wire, fixed := SplitTemplate(t.Path)
	for _, k := range sortedValuesKeys(fixed) {
		for _, v := range fixed[k] {
			if name, ok := expression(v); ok {
				v = pathParams[name]
			}
			query.Add(k, v)
		}
	}
	u := *w.base
	raw := strings.TrimRight(w.base.EscapedPath(), "/") + expandPath(wire, pathItems)
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("path %q: %w", raw, err)
	}
	u.Path, u.RawPath = decoded, raw
	u.RawQuery = query.Encode()
	if u.Host != w.host {
		return nil, nil, ErrForeignHost
	}
	var body []byte
	var contentType string
	mt, _, _ := JSONBody(op)
	if v, ok := args[BodyArg]; ok && mt != "" {
		var err error
		if body, contentType, err = encodeBody(mt, v); err != nil {
			return nil, nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, t.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("building request: %w", err)
	}
	req.Header = header
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	if req.Header.Get("Accept") == "" { // an Accept parameter the caller set wins
		req.Header.Set("Accept", "application/json, */*;q=0.5")
	}
	req.Header.Set("User-Agent", "toolsmith-wrapper/1")
	return req, pathParams, nil
}

func (w *Wrapper) authenticate(req *http.Request) {
	c := w.cred
	if c == nil || c.Value == "" {
		return
	}
	switch c.Kind {
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+c.Value)
	case "header":
		req.Header.Set(c.Name, c.Value)
	case "query":
		q := req.URL.Query()
		q.Set(c.Name, c.Value)
		req.URL.RawQuery = q.Encode()
	case "basic":
		user, pass, _ := strings.Cut(c.Value, ":")
		req.SetBasicAuth(user, pass)
	}
}

// encodeBody serialises the body argument for a media type and returns the
// Content-Type to send (wildcard types are sent as JSON; multipart bodies get
// their boundary).
func encodeBody(mt string, v any) ([]byte, string, error) {
	switch {
	case mt == "application/x-www-form-urlencoded":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("body: a form body must be an object")
		}
		form := url.Values{}
		for _, k := range sortedKeys(m) {
			for _, s := range list(m[k]) {
				form.Add(k, s)
			}
		}
		return []byte(form.Encode()), mt, nil
	case strings.HasPrefix(mt, "multipart/"):
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("body: a multipart body must be an object")
		}
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for _, k := range sortedKeys(m) {
			for _, s := range list(m[k]) {
				if err := mw.WriteField(k, s); err != nil {
					return nil, "", fmt.Errorf("body: %w", err)
				}
			}
		}
		if err := mw.Close(); err != nil {
			return nil, "", fmt.Errorf("body: %w", err)
		}
		return buf.Bytes(), mw.FormDataContentType(), nil
	case strings.Contains(mt, "xml"):
		b, err := encodeXML(v)
		return b, mt, err
	case strings.Contains(mt, "*"):
		b, err := json.Marshal(v)
		return b, "application/json", err
	case strings.HasPrefix(mt, "text/"):
		return []byte(scalar(v)), mt, nil
	case strings.Contains(mt, "json"):
		b, err := json.Marshal(v)
		return b, mt, err
	default:
		if s, ok := v.(string); ok {
			return []byte(s), mt, nil
		}
		b, err := json.Marshal(v)
		return b, mt, err
	}
}

// expression reports whether v is a whole template expression ("{term}")
// and returns its name.
func expression(v string) (string, bool) {
	if len(v) > 2 && strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v[1 : len(v)-1], true
	}
	return "", false
}

func sortedValuesKeys(v url.Values) []string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64, int, int64, bool, json.Number:
		return fmt.Sprint(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// simple lists the items of a path value in OpenAPI's default path style
// ("simple", RFC 6570 {name}), which joins them by commas: an array's
// items, an object's keys and values (keys sorted), or the one scalar.
func simple(v any) []string {
	switch x := v.(type) {
	case []any:
		return list(x)
	case map[string]any:
		var kv []string
		for _, k := range sortedKeys(x) {
			kv = append(kv, k, scalar(x[k]))
		}
		return kv
	}
	return []string{scalar(v)}
}

func list(v any) []string {
	if arr, ok := v.([]any); ok {
		out := make([]string, 0, len(arr))
		for _, x := range arr {
			out = append(out, scalar(x))
		}
		return out
	}
	return []string{scalar(v)}
}

// normaliseJSON round-trips v through JSON so numbers are float64 and maps
// are map[string]any, as schema validation expects.
func normaliseJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

func asJSON(body []byte, contentType string) json.RawMessage {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if json.Valid(body) {
		return body
	}
	b, _ := json.Marshal(string(body))
	return b
}

// IsLoopback reports whether host (host[:port]) is a loopback address; the
// generated tests use it to prove they never leave the machine.
func IsLoopback(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// noBody reports whether HTTP forbids a response body for a status.
func noBody(status int) bool {
	return status == http.StatusNoContent || status == http.StatusNotModified || (status >= 100 && status < 200)
}

// requestOptions validates everything of a request but a body kin-openapi
// cannot decode (XML, HTML, …): the arguments it was built from were already
// validated against the tool's input schema.
func requestOptions(req *http.Request) *openapi3filter.Options {
	ct := req.Header.Get("Content-Type")
	return &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true,
		ExcludeRequestBody: ct != "" && !decodable(ct)}
}

// responseOptions validates status, headers and body; the body is skipped
// when HTTP forbids one (204, 304, 1xx) and when it is of a declared type
// kin-openapi cannot decode (XML, HTML, …); an undeclared type is still
// refused.
func responseOptions(op *openapi3.Operation, status int, contentType string) *openapi3filter.Options {
	exclude := noBody(status)
	if contentType != "" && !decodable(contentType) && op.Responses != nil {
		r := op.Responses.Status(status)
		if r == nil {
			r = op.Responses.Default()
		}
		// Only a type the spec names exactly: one covered by a wildcard
		// ("*/*") is still checked, so an undeclared type stays refused.
		if r != nil && r.Value != nil && declaresType(r.Value.Content, contentType) {
			exclude = true
		}
	}
	return &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: exclude}
}

// absentHeaders returns the headers a response is validated with: the
// response's own, plus, for each header the spec marks required that the
// response lacks, a value its schema accepts. A declared header is checked
// when it is present; its absence is not a reason to refuse an answer (a
// mock, or a proxy in between, cannot know such headers as rate-limit
// counters or request ids).
func absentHeaders(op *openapi3.Operation, status int, h http.Header) http.Header {
	if op.Responses == nil {
		return h
	}
	r := op.Responses.Status(status)
	if r == nil {
		r = op.Responses.Default()
	}
	if r == nil || r.Value == nil {
		return h
	}
	var out http.Header
	names := make([]string, 0, len(r.Value.Headers))
	for name := range r.Value.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		hr := r.Value.Headers[name]
		if hr == nil || hr.Value == nil || !hr.Value.Required || h.Get(name) != "" {
			continue
		}
		v := "x"
		if hr.Value.Schema != nil && hr.Value.Schema.Value != nil {
			if sv, ok := Sample(hr.Value.Schema.Value); ok {
				v = scalar(sv)
			}
		}
		if out == nil {
			out = h.Clone()
			if out == nil {
				out = http.Header{}
			}
		}
		out.Set(name, v)
	}
	if out == nil {
		return h
	}
	return out
}

// declaresType reports whether content names the media type of
// contentType, ignoring parameters on either side ("text/html;
// charset=UTF-8" declares text/html); wildcards do not count.
func declaresType(content openapi3.Content, contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	for k := range content {
		dk, _, _ := strings.Cut(k, ";")
		if strings.ToLower(strings.TrimSpace(dk)) == mt {
			return true
		}
	}
	return false
}

// decodable reports whether openapi3filter can decode a body of this type.
func decodable(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return openapi3filter.RegisteredBodyDecoder(mt) != nil || strings.HasSuffix(mt, "+json") || openapi3filter.RegisteredBodyDecoder("*/*") != nil
}

// encodeXML writes a JSON-like value as a plain XML document: objects become
// elements named by their keys (sorted), arrays repeat their element.
func encodeXML(v any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	if err := writeXML(&b, "request", v, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeXML(b *bytes.Buffer, name string, v any, depth int) error {
	if depth > 32 {
		return fmt.Errorf("body: nested too deeply for XML")
	}
	if !xmlName.MatchString(name) {
		name = "item"
	}
	switch x := v.(type) {
	case []any:
		for _, item := range x {
			if err := writeXML(b, name, item, depth+1); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		b.WriteString("<" + name + ">")
		for _, k := range sortedKeys(x) {
			if err := writeXML(b, k, x[k], depth+1); err != nil {
				return err
			}
		}
		b.WriteString("</" + name + ">")
		return nil
	default:
		b.WriteString("<" + name + ">")
		if err := xml.EscapeText(b, []byte(scalar(x))); err != nil {
			return err
		}
		b.WriteString("</" + name + ">")
		return nil
	}
}

var xmlName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9._-]*$`)

// WirePath is the part of a path template that goes on the wire as the
// path (see SplitTemplate).
func WirePath(template string) string {
	p, _ := SplitTemplate(template)
	return p
}

// SplitTemplate splits a path template into the request path and a fixed
// query. Some specs tell operations on one path apart with a fragment
// ("/#CreateQueue"), which a request never carries, or with a query
// ("/?Operation=CancelJob", "/search?term={term}"), which it carries as
// query parameters.
func SplitTemplate(template string) (string, url.Values) {
	if i := strings.IndexByte(template, '#'); i >= 0 {
		template = template[:i]
	}
	path, rawQuery, _ := strings.Cut(template, "?")
	if path == "" {
		path = "/"
	}
	fixed, err := url.ParseQuery(rawQuery)
	if err != nil {
		fixed = url.Values{}
	}
	return path, fixed
}
