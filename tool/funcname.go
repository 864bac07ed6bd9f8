package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// MaxFunctionNameLen is the longest function name OpenAI's function calling
// accepts.
const MaxFunctionNameLen = 64

// FunctionNameRe is what OpenAI accepts as a function name.
var FunctionNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// hashedSep separates the hashed form's readable prefix from its hash. A
// plain name never holds three underscores in a row (see FunctionName).
const (
	hashedSep = "___"
	hashLen   = 12
)

// FunctionName is the OpenAI-format function name of a tool id: letters,
// digits, '_' and '-', at most 64 characters. Each '.' becomes "__", so
// "currency.convert" is "currency__convert" and ToolIDFromFunctionName gives
// the id back. An id whose plain form would be ambiguous (it holds "__", or
// '_' next to a '.') or longer than 64 characters gets the hashed form: the
// plain form cut to fit, "___" and 12 hex digits of the id's SHA-256. A
// hashed name maps back only against the catalogue (MatchesFunctionName).
// Different valid ids always get different names (up to the hash's
// collision odds for hashed ones).
func FunctionName(toolID string) string {
	plain := strings.ReplaceAll(toolID, ".", "__")
	if len(plain) <= MaxFunctionNameLen && plainIsReversible(toolID) {
		return plain
	}
	sum := sha256.Sum256([]byte(toolID))
	prefix := plain
	if n := MaxFunctionNameLen - len(hashedSep) - hashLen; len(prefix) > n {
		prefix = prefix[:n]
	}
	return prefix + hashedSep + hex.EncodeToString(sum[:])[:hashLen]
}

// plainIsReversible reports whether replacing '.' with "__" in id can be
// undone: no "__" of its own and no '_' beside a '.'.
func plainIsReversible(id string) bool {
	return !strings.Contains(id, "__") && !strings.Contains(id, "_.") && !strings.Contains(id, "._")
}

// ToolIDFromFunctionName maps a plain function name back to its tool id.
// It reports false for a hashed name (and for anything FunctionName does
// not produce), which only the catalogue can resolve: find the id whose
// FunctionName is the name (MatchesFunctionName).
func ToolIDFromFunctionName(name string) (string, bool) {
	if !FunctionNameRe.MatchString(name) || strings.Contains(name, hashedSep) {
		return "", false
	}
	id := strings.ReplaceAll(name, "__", ".")
	if !toolIDRe.MatchString(id) || FunctionName(id) != name {
		return "", false
	}
	return id, true
}

// MatchesFunctionName reports whether name is the function name of toolID.
func MatchesFunctionName(toolID, name string) bool { return FunctionName(toolID) == name }
