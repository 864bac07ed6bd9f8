// Package httpx holds what every Toolsmith HTTP handler shares: the response
// envelope, the single error-to-status mapping, strict JSON
// request decoding that names the offending field, and the caller the
// security middleware authenticated.
package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/internal/jsoncheck"
)

// MaxBodyBytes bounds request bodies (batch registration included).
const MaxBodyBytes = 8 << 20

// Envelope is the response shape of every handler: a status and either
// data or an error.
type Envelope struct {
	Status string     `json:"status"` // success | error
	Data   any        `json:"data,omitempty"`
	Error  *ErrorBody `json:"error,omitempty"`
}

// ErrorBody describes a failure; Fields names every offending input field.
type ErrorBody struct {
	Code    string             `json:"code"`
	Message string             `json:"message"`
	Fields  []fault.FieldError `json:"fields,omitempty"`
}

// OK writes {"status":"success","data":data} with the given status code.
func OK(c *gin.Context, status int, data any) {
	c.JSON(status, Envelope{Status: "success", Data: data})
}

// Status maps an error to its HTTP status and a short code. It is the one
// place where error kinds become HTTP semantics.
func Status(err error) (int, string) {
	switch {
	case errors.Is(err, fault.ErrMalformed):
		return http.StatusBadRequest, "bad_request"
	case errors.Is(err, fault.ErrInvalid), errors.Is(err, graph.ErrDimension):
		return http.StatusUnprocessableEntity, "validation_failed"
	case errors.Is(err, fault.ErrNotFound):
		return http.StatusNotFound, "not_found"
	case errors.Is(err, fault.ErrUnauthenticated):
		return http.StatusUnauthorized, "unauthenticated"
	case errors.Is(err, fault.ErrConflict):
		return http.StatusConflict, "conflict"
	case errors.Is(err, fault.ErrForbidden):
		return http.StatusForbidden, "forbidden"
	case errors.Is(err, fault.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, "payload_too_large"
	case errors.Is(err, fault.ErrLimit):
		return http.StatusTooManyRequests, "limit_exceeded"
	case errors.Is(err, fault.ErrUnavailable):
		return http.StatusServiceUnavailable, "unavailable"
	default:
		return http.StatusInternalServerError, "internal"
	}
}

// Error writes err as an error envelope with the mapped status. Internal
// errors are logged through gin and reported without their details.
func Error(c *gin.Context, err error) {
	status, code := Status(err)
	msg := err.Error()
	if status == http.StatusInternalServerError {
		_ = c.Error(err)
		msg = "internal error; see the server log"
	}
	c.AbortWithStatusJSON(status, Envelope{Status: "error", Error: &ErrorBody{Code: code, Message: msg, Fields: fault.Fields(err)}})
}

// BindJSON decodes the request body strictly into dst: unknown fields, wrong
// types, repeated keys, text that is not UTF-8, trailing data and oversized
// bodies are ErrMalformed errors that name the field path.
func BindJSON(c *gin.Context, dst any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, MaxBodyBytes+1))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return fmt.Errorf("body: the request body is over the %d-byte limit: %w", tooBig.Limit, fault.ErrTooLarge)
	}
	if err != nil {
		return fault.Malformed("body", "cannot read request body: %v", err)
	}
	if len(body) > MaxBodyBytes {
		return fmt.Errorf("body: the request body is over the %d-byte limit: %w", MaxBodyBytes, fault.ErrTooLarge)
	}
	return DecodeStrict(body, dst)
}

// DecodeStrict is BindJSON's decoder, for bodies already read. A key
// repeated in one object (exactly, or, for a struct's field, in another
// case: "verb" and "Verb") and a string that is not UTF-8 are refused
// (jsoncheck.Scan) before decoding, which would keep the last of the keys
// and turn the bytes into U+FFFD without a word.
func DecodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return fault.Malformed("body", "request body is empty; expected a JSON object")
	}
	folds, err := jsoncheck.Scan(body, "")
	if err != nil {
		return err
	}
	if err := foldedField(folds, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonFieldError(body, dst, err)
	}
	if dec.More() {
		return fault.Malformed("body", "unexpected data after the JSON value")
	}
	return nil
}

func jsonFieldError(body []byte, dst any, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var timeErr *time.ParseError
	switch {
	case errors.As(err, &typeErr):
		path := dropEmbedded(reflect.TypeOf(dst), typeErr.Field)
		if path == "" {
			path = "body"
		} else if p := typePath(body, dst, typeErr.Field, typeErr.Value); p != "" {
			path = p // with the indices encoding/json leaves out
		}
		return fault.Malformed(path, "must be %s, got JSON %s", jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fault.Malformed("body", "invalid JSON at byte %d: %v", syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		path := unknownFieldPath(body, dst, name)
		if path == "" {
			path = name
		}
		if name == "" {
			// An empty key: name where it stands, or the body itself.
			path = strings.TrimSuffix(path, ".")
			if path == "" {
				path = "body"
			}
			return fault.Malformed(path, `holds an unknown field with an empty name ("")`)
		}
		return fault.Malformed(path, "unknown field")
	case errors.As(err, &timeErr):
		path := timePath(body, dst, timeErr.Value)
		if path == "" {
			path = "body"
		}
		return fault.Malformed(path, "a time must be RFC 3339, such as 2026-12-31T23:59:59Z, got %q", timeErr.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fault.Malformed("body", "truncated JSON")
	default:
		return fault.Malformed("body", "%v", err)
	}
}

// Caller returns the caller the request acts as: the authenticated
// principal narrowed by the request's headers, as the server's security
// middleware stored it (see identity.Narrow). A request that did not pass
// through that middleware is an anonymous guest; headers alone never make
// anyone more. The error is always nil; it stays for the handlers' shape.
func Caller(c *gin.Context) (access.Caller, error) {
	_, caller, _ := identity.FromContext(c.Request.Context())
	return caller, nil
}

// Principal returns the authenticated principal of the request (the
// anonymous guest when there is none).
func Principal(c *gin.Context) identity.Principal {
	p, _, _ := identity.FromContext(c.Request.Context())
	return p
}

// auditToolsKey holds the tool ids a handler wrote, for the audit record.
const auditToolsKey = "httpx.auditTools"

// AuditTools names the tools a request wrote (registered, updated,
// batch-registered), so the audit record of the call carries each one: a
// route whose tool id is not in the path (POST /tools/register) has no
// other way to say which tool it was about. Empty ids are skipped and a
// repeated id is named once.
func AuditTools(c *gin.Context, ids ...string) {
	have := AuditedTools(c)
	for _, id := range ids {
		if id != "" && !slices.Contains(have, id) {
			have = append(have, id)
		}
	}
	c.Set(auditToolsKey, have)
}

// AuditedTools returns the ids AuditTools recorded, in order.
func AuditedTools(c *gin.Context) []string {
	v, _ := c.Get(auditToolsKey)
	ids, _ := v.([]string)
	return ids
}

// Acting returns the principal as the request's narrowed caller acts (see
// identity.Principal.Acting): what key management checks levels against.
func Acting(c *gin.Context) identity.Principal {
	p, caller, ok := identity.FromContext(c.Request.Context())
	if !ok {
		return p
	}
	return p.Acting(caller)
}

// QueryInt reads an integer query parameter with a default and an inclusive
// range; out-of-range or non-numeric values are 400 errors naming it.
func QueryInt(c *gin.Context, name string, def, min, max int) (int, error) {
	raw, ok := c.GetQuery(name)
	if !ok || raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, fault.Malformed(name, "must be an integer, got %q", raw)
	}
	if n < min || n > max {
		return 0, fault.Malformed(name, "must be between %d and %d, got %d", min, max, n)
	}
	return n, nil
}

// QueryBool reads a boolean query parameter with a default.
func QueryBool(c *gin.Context, name string, def bool) (bool, error) {
	raw, ok := c.GetQuery(name)
	if !ok || raw == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, fault.Malformed(name, "must be true or false, got %q", raw)
	}
	return b, nil
}

// Mounter adds a feature's routes under /api/v1. Each feature package
// (tools, retrieval, verbs, airlock, …) provides one; the composition root
// passes them to the server.
type Mounter interface {
	Mount(v1 *gin.RouterGroup)
}

// MountFunc adapts a function to Mounter.
type MountFunc func(v1 *gin.RouterGroup)

// Mount calls f.
func (f MountFunc) Mount(v1 *gin.RouterGroup) { f(v1) }

// MaxIDLen bounds an id named in a request path. Every id Toolsmith mints
// or accepts (tool ids, run and workflow ids, key, source and session ids)
// is far shorter; a longer one can only fail further down, as a file name
// too long or a Temporal refusal.
const MaxIDLen = 200

// CheckID returns a fault.ErrMalformed error naming field unless id is 1 to
// MaxIDLen characters of printable ASCII without spaces. Ids are ASCII
// everywhere in Toolsmith; NUL, invalid UTF-8 or other text would otherwise
// reach Temporal, the file system or the store and fail there as a 5xx.
func CheckID(field, id string) error {
	if id == "" {
		return fault.Malformed(field, "must not be empty")
	}
	if len(id) > MaxIDLen {
		return fault.Malformed(field, "must be at most %d characters, got %d", MaxIDLen, len(id))
	}
	for i := 0; i < len(id); i++ {
		if b := id[i]; b <= ' ' || b > '~' {
			return fault.Malformed(field, "must be printable ASCII without spaces; byte %d is 0x%02x", i, b)
		}
	}
	return nil
}

// runIDRe matches a Temporal run id: a UUID in its canonical form.
var runIDRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// RunID reads a run-progress path parameter: "latest" (returned as "",
// Temporal's latest run) or a Temporal run id. Temporal refuses a run id
// that is not a UUID as an invalid argument; that is the caller's mistake,
// so it is a fault.ErrMalformed error naming field, saying what.
func RunID(field, id, what string) (string, error) {
	switch {
	case id == "latest":
		return "", nil
	case !runIDRe.MatchString(id):
		return "", fault.Malformed(field, "must be \"latest\" or a %s run id (a UUID, as in statusUrl), got %q", what, id)
	}
	return id, nil
}

// CheckPathIDs checks every named parameter of the matched route (":id",
// ":toolId") with CheckID; catch-all parameters ("*path") are paths, not
// ids, and are left to their handler. It writes the 400 and returns false
// when one fails.
func CheckPathIDs(c *gin.Context) bool {
	for _, p := range c.Params {
		if strings.Contains(c.FullPath(), "*"+p.Key) {
			continue
		}
		if err := CheckID(p.Key, p.Value); err != nil {
			Error(c, err)
			return false
		}
	}
	return true
}

// jsonKind names what a Go type reads from JSON, in JSON's words rather
// than the Go type's name ("an object", not "map[string]interface {}").
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return "a JSON value of another type"
	}
}
