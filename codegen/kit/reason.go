package kit

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// StableReason is an error's first line, the same every time for the same
// failure: a validation error that groups several causes lists them in the
// order the validator met them, which for an object follows Go's map order
// (OpenAPI 3.1's JSON Schema validator), so the first line changed from
// run to run. Here the grouped causes are sorted and the first is named,
// with how many more there are.
func StableReason(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	const grouped = "validation failed due to: "
	i := strings.Index(msg, grouped)
	var leaves []string
	collectLeaves(err, &leaves, 0)
	if len(leaves) < 2 {
		return FirstLine(msg)
	}
	sort.Strings(leaves)
	prefix := ""
	if i >= 0 {
		prefix = msg[:i]
	} else if j := strings.Index(msg, leaves[0]); j >= 0 {
		prefix = msg[:j]
	}
	return FirstLine(fmt.Sprintf("%s%s (and %d more)", prefix, leaves[0], len(leaves)-1))
}

// collectLeaves gathers the messages of the innermost causes of err.
func collectLeaves(err error, out *[]string, depth int) {
	if err == nil || depth > 64 {
		return
	}
	var me openapi3.MultiError
	if errors.As(err, &me) && len(me) > 0 {
		// errors.As finds the first MultiError down the chain.
		for _, e := range me {
			collectLeaves(e, out, depth+1)
		}
		return
	}
	if se, ok := err.(*openapi3.SchemaError); ok && se.Origin != nil {
		collectLeaves(se.Origin, out, depth+1)
		return
	}
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range u.Unwrap() {
			collectLeaves(e, out, depth+1)
		}
		return
	}
	if e := errors.Unwrap(err); e != nil {
		collectLeaves(e, out, depth+1)
		return
	}
	*out = append(*out, FirstLine(err.Error()))
}
