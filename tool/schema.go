package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// printer renders jsonschema error kinds in English.
var printer = message.NewPrinter(language.English)

// errNoRemoteRefs is returned by the loader for every external $ref: a tool
// manifest must be self-contained, and resolving file:// or http:// refs at
// registration time would let a manifest read the server's files or network.
var errNoRemoteRefs = errors.New("external $ref is not allowed; inline the schema or use a local #/$defs reference")

type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: %s", errNoRemoteRefs, url)
}

// CompileSchema compiles raw as a JSON Schema (draft 2020-12 unless raw names
// another $schema) for the manifest field at path ("inputSchema"). Errors are
// a *fault.ValidationError whose field paths start with path, e.g.
// "inputSchema.properties.amount.type: value must be one of …". Format
// keywords are asserted so that run-time validation catches bad dates and
// e-mails; external $refs are refused.
func CompileSchema(path string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fault.Invalid(path, "is not valid JSON: %v", err)
	}
	loc := "mem:///toolsmith/" + strings.NewReplacer("[", "_", "]", "_", ".", "_").Replace(path) + ".json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(denyLoader{})
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fault.Invalid(path, "%v", err)
	}
	s, err := c.Compile(loc)
	if err == nil {
		return s, nil
	}
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		return nil, &fault.ValidationError{Fields: leafErrors(ve, path, doc)}
	}
	if errors.Is(err, errNoRemoteRefs) {
		return nil, fault.Invalid(path, "%v", errNoRemoteRefs)
	}
	return nil, fault.Invalid(path, "%v", err)
}

// ValidateValue validates v (as decoded by encoding/json or
// jsonschema.UnmarshalJSON) against s and returns one FieldError per failing
// location, with paths below path: "examples[0].input.amount". It returns nil
// when v is valid.
func ValidateValue(s *jsonschema.Schema, path string, v any) []fault.FieldError {
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return leafErrors(ve, path, v)
	}
	return []fault.FieldError{{Path: path, Message: err.Error()}}
}

// ValidateJSON decodes raw and validates it against s, like ValidateValue.
func ValidateJSON(s *jsonschema.Schema, path string, raw json.RawMessage) []fault.FieldError {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []fault.FieldError{{Path: path, Message: "is not valid JSON: " + err.Error()}}
	}
	return ValidateValue(s, path, v)
}

// leafErrors flattens a jsonschema error tree into its leaves, one per
// instance location (the first message wins, so anyOf alternatives at the
// same place do not repeat the path).
func leafErrors(root *jsonschema.ValidationError, base string, doc any) []fault.FieldError {
	var out []fault.FieldError
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		p := JoinPath(base, doc, e.InstanceLocation)
		if seen[p] {
			return
		}
		seen[p] = true
		out = append(out, fault.FieldError{Path: p, Message: e.ErrorKind.LocalizedString(printer)})
	}
	walk(root)
	return out
}

// JoinPath appends JSON-pointer tokens to a dotted field path, writing array
// indices as "[i]" and object keys as ".key", by walking doc to tell them
// apart: JoinPath("examples[0].input", {"items":[…]}, ["items","2"]) is
// "examples[0].input.items[2]".
func JoinPath(base string, doc any, tokens []string) string {
	var b strings.Builder
	b.WriteString(base)
	cur := doc
	for _, tok := range tokens {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
		case map[string]any:
			writeKey(&b, tok)
			cur = c[tok]
		default:
			writeKey(&b, tok)
			cur = nil
		}
	}
	return b.String()
}

func writeKey(b *strings.Builder, key string) {
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
}
