package modules

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// ErrSchemaMismatch marks arguments or results that do not fit a tool's
// inputSchema or outputSchema. Test it with errors.Is.
var ErrSchemaMismatch = errors.New("schema mismatch")

// schemaCache compiles each distinct schema once. It is safe for concurrent
// use; the key is the schema's digest, so two tools sharing a schema share
// the compiled form.
type schemaCache struct {
	mu sync.Mutex
	m  map[[32]byte]*jsonschema.Schema
}

func (c *schemaCache) compile(raw json.RawMessage) (*jsonschema.Schema, error) {
	key := sha256.Sum256(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[key]; ok {
		return s, nil
	}
	// The registration-time compiler, so a tool's schema means the same at
	// run time as when it was accepted: formats asserted, external $refs
	// refused (never read from the server's disk or network).
	s, err := tool.CompileSchema("schema", raw)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	if c.m == nil {
		c.m = map[[32]byte]*jsonschema.Schema{}
	}
	c.m[key] = s
	return s, nil
}

// validate checks a JSON document against a schema. An empty schema accepts
// everything. The error wraps ErrSchemaMismatch and names the failing
// locations ("at '/amount': got string, want number").
func (c *schemaCache) validate(schema json.RawMessage, doc json.RawMessage) error {
	if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
		return nil
	}
	s, err := c.compile(schema)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("%w: not JSON: %w", ErrSchemaMismatch, err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%w: %s", ErrSchemaMismatch, compactValidation(err))
	}
	return nil
}

// quotedValue is a long quoted input in a validator's message (the value
// that failed a pattern, an enum, a format): compactValidation cuts it as
// every error cuts echoed input (fault.Echo), so a 100 KB value is not
// sent back whole.
var quotedValue = regexp.MustCompile(`'[^']{64,}'`)

// compactValidation flattens jsonschema's multi-line error into one line of
// "at 'location': message" parts, echoed values cut to a short prefix.
func compactValidation(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	out := ve.BasicOutput()
	var parts []string
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		msg := quotedValue.ReplaceAllStringFunc(u.Error.String(), func(q string) string {
			return "'" + fault.Echo(q[1:len(q)-1]) + "'"
		})
		if msg == "" {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		parts = append(parts, fmt.Sprintf("at '%s': %s", loc, msg))
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return joinDedup(parts)
}

func joinDedup(parts []string) string {
	seen := map[string]bool{}
	var b bytes.Buffer
	for _, p := range parts {
		if seen[p] {
			continue
		}
		seen[p] = true
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}
