// Package fault defines the error kinds Toolsmith's domain packages return
// and its edges (HTTP, Temporal, CLI) translate, each in one place. Kinds are
// sentinels tested with errors.Is; a ValidationError carries the field paths
// of everything wrong with an input.
package fault

import (
	"errors"
	"fmt"
	"strings"
)

// Error kinds. Wrap them with context; test them with errors.Is.
var (
	// ErrInvalid: the input is well-formed but breaks a rule (HTTP 422).
	ErrInvalid = errors.New("invalid input")
	// ErrMalformed: the input cannot be read at all (HTTP 400).
	ErrMalformed = errors.New("malformed input")
	// ErrNotFound: the named thing does not exist (HTTP 404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the thing already exists or changed meanwhile (HTTP 409).
	ErrConflict = errors.New("conflict")
	// ErrUnauthenticated: the credential is missing where one is needed, or
	// it is malformed, expired, revoked or not verifiable (HTTP 401).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: the caller may not see or do this (HTTP 403).
	ErrForbidden = errors.New("forbidden")
	// ErrLimit: a rate limit, quota or budget is exhausted (HTTP 429).
	ErrLimit = errors.New("limit exceeded")
	// ErrTooLarge: the request body is over the size limit (HTTP 413).
	ErrTooLarge = errors.New("payload too large")
	// ErrUnavailable: a dependency (LLM, module, Temporal) is not configured or down (HTTP 503).
	ErrUnavailable = errors.New("unavailable")
)

// FieldError is one problem with one field of an input, e.g.
// Path "inputSchema.properties.amount.type", Message "must be one of …".
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (f FieldError) String() string {
	if f.Path == "" {
		return f.Message
	}
	return f.Path + ": " + f.Message
}

// ValidationError lists every field problem found in an input. It matches
// ErrInvalid with errors.Is, or ErrMalformed when Malformed is set.
type ValidationError struct {
	Fields    []FieldError `json:"fields"`
	Malformed bool         `json:"-"`
}

// Error joins the field problems: "toolId: is required; verb: must be UPPER_SNAKE".
func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Fields))
	for _, f := range e.Fields {
		parts = append(parts, f.String())
	}
	return strings.Join(parts, "; ")
}

// Is reports whether target is the kind this error stands for.
func (e *ValidationError) Is(target error) bool {
	if e.Malformed {
		return target == ErrMalformed
	}
	return target == ErrInvalid
}

// Add appends a field problem. A string argument quoted with %q is the
// input echoed back, and is echoed as Echo cuts it: a 120 KB query value
// makes a short message, not a 120 KB one (twice, in the message and the
// field).
func (e *ValidationError) Add(path, format string, args ...any) {
	echoed := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			a = echo(s)
		}
		echoed[i] = a
	}
	e.Fields = append(e.Fields, FieldError{Path: path, Message: fmt.Sprintf(format, echoed...)})
}

// MaxEcho is how many characters of an input a message quotes at most.
const MaxEcho = 64

// Echo is s as an error message quotes it: its first MaxEcho characters,
// and "…" when it is longer.
func Echo(s string) string {
	n := 0
	for i := range s {
		if n == MaxEcho {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// echo is a string argument of a field problem: quoted (%q), it is the
// input echoed back and is cut by Echo; any other verb prints it whole.
type echo string

func (e echo) Format(f fmt.State, verb rune) {
	s := string(e)
	if verb == 'q' {
		s = Echo(s)
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), s)
}

// Err returns e when it holds any field problem, else nil.
func (e *ValidationError) Err() error {
	if e == nil || len(e.Fields) == 0 {
		return nil
	}
	return e
}

// Invalid returns a ValidationError (HTTP 422) for one field.
func Invalid(path, format string, args ...any) *ValidationError {
	v := &ValidationError{}
	v.Add(path, format, args...)
	return v
}

// Malformed returns a ValidationError (HTTP 400) for one field.
func Malformed(path, format string, args ...any) *ValidationError {
	v := &ValidationError{Malformed: true}
	v.Add(path, format, args...)
	return v
}

// Fields returns the field problems of err, if it is or wraps a ValidationError.
func Fields(err error) []FieldError {
	var v *ValidationError
	if errors.As(err, &v) {
		return v.Fields
	}
	return nil
}
