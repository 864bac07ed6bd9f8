package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// argNames maps, per MCP tool, the field names the domain services put in
// their validation errors (the REST API's names) to the tool's own
// argument names, so a planner reads the argument it sent: find_tools'
// intent is retrieval's "q", fulfil_verb's threshold the verb request's
// "options.threshold". A path not listed keeps its name (the tool's
// argument has the domain's name); a listed prefix maps the paths below it
// too (call_tool's "inputs.amount" is "arguments.amount").
var argNames = map[string]map[string]string{
	"find_tools":       {"q": "intent", "maxTools": "limit"},
	"kb.hybrid_search": {"q": "query", "maxTools": "limit"},
	"call_tool":        {"inputs": "arguments"},
	"fulfil_verb":      {"options.threshold": "threshold", "options.dryRun": "dryRun"},
}

// argError is err with its field paths renamed to tool's argument names
// (argNames); an error without fields comes back as it was.
func argError(tool string, err error) error {
	names := argNames[tool]
	var v *fault.ValidationError
	if len(names) == 0 || !errors.As(err, &v) {
		return err
	}
	out := &fault.ValidationError{Malformed: v.Malformed}
	for _, f := range v.Fields {
		out.Fields = append(out.Fields, fault.FieldError{Path: argName(names, f.Path), Message: f.Message})
	}
	return out
}

// argName renames path by the longest entry of names that is the path or
// a dotted or indexed prefix of it.
func argName(names map[string]string, path string) string {
	best := ""
	for from := range names {
		if len(from) <= len(best) {
			continue
		}
		if path == from || strings.HasPrefix(path, from+".") || strings.HasPrefix(path, from+"[") {
			best = from
		}
	}
	if best == "" {
		return path
	}
	return names[best] + path[len(best):]
}

// decodeArguments decodes a tools/call's arguments into dst (a tool's
// input struct, or a catalogue tool's map). A value of the wrong kind for
// its argument (a string for a number, 1e20 for an integer) is a
// fault.ErrMalformed error naming the argument as the tool calls it, in
// JSON's words ("startByte: must be an integer between 0 and …"), never
// encoding/json's message with its Go struct and type names. Arguments
// that are not an object are named "arguments". root prefixes the
// argument's name: "" for a gateway tool, whose arguments are its fields,
// "arguments" for a catalogue tool, named as call_tool's are
// ("arguments.amount").
func decodeArguments(raw json.RawMessage, dst any, root string) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	err := json.Unmarshal(raw, dst)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		path := typeErr.Field
		if path == "" {
			// encoding/json names no field for a value inside a map (a
			// catalogue tool's arguments): the first key whose value does
			// not decode is the argument.
			path = badKey(raw)
		}
		if path == "" {
			return fault.Malformed("arguments", "must be a JSON object, got JSON %s", typeErr.Value)
		}
		if root != "" {
			path = root + "." + path
		}
		return fault.Malformed(path, "%s, got JSON %s", argKind(typeErr.Type), fault.Echo(typeErr.Value))
	}
	return fault.Malformed("arguments", "must be a JSON object of the tool's arguments")
}

// badKey is the first key (in sorted order) of the JSON object raw whose
// value does not decode, or "" when raw is not an object or every value
// decodes.
func badKey(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var v any
		if json.Unmarshal(m[k], &v) != nil {
			return k
		}
	}
	return ""
}

// argKind says what an argument of Go type t takes, in JSON's words: an
// integer with the range it holds (an int is 64 bits), a number, a
// string, true or false, an array or an object.
func argKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return "must be an integer between " + itoa(-1<<(bits-1)) + " and " + itoa(1<<(bits-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if t.Bits() == 64 {
			return "must be an integer between 0 and 18446744073709551615"
		}
		return "must be an integer between 0 and " + itoa(1<<t.Bits()-1)
	case reflect.Float32, reflect.Float64:
		return "must be a number"
	case reflect.String:
		return "must be a string"
	case reflect.Bool:
		return "must be true or false"
	case reflect.Slice, reflect.Array:
		return "must be an array"
	case reflect.Struct, reflect.Map:
		return "must be an object"
	}
	return "has the wrong type"
}

// itoa formats an integer bound.
func itoa(n int64) string {
	return strconv.FormatInt(n, 10)
}
