package mcp

import (
	"errors"
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
