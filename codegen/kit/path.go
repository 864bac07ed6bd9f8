package kit

import (
	"net/url"
	"strings"
)

// A path template is literal text and {name} expressions, in any mix
// within a segment: "/items/{id}", "/{Sid}.{Extension}", "/v{major}.{minor}",
// "/search/page-{n}.atom". The wrapper expands it as RFC 6570 level 1 (simple
// string expansion) does, and the generated mock routes a request back to
// its values, so both sides read a template the same way.

// templatePart is one piece of a path template: literal text, or the name
// of an expression.
type templatePart struct {
	text  string // literal text (Var false) or the expression's name
	isVar bool
}

// parseTemplate splits a path template into literal and expression parts.
// A "{" that opens no expression (no "}" before the next "{" or "/")
// is literal text.
func parseTemplate(template string) []templatePart {
	var parts []templatePart
	rest := template
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(rest[i:], '}')
		}
		if i < 0 || j < 0 {
			parts = append(parts, templatePart{text: rest})
			break
		}
		name := rest[i+1 : i+j]
		if strings.ContainsAny(name, "{/") {
			// "{" opens no expression here ("/a{/{id}"): it is text.
			parts = append(parts, templatePart{text: rest[:i+1]})
			rest = rest[i+1:]
			continue
		}
		if i > 0 {
			parts = append(parts, templatePart{text: rest[:i]})
		}
		parts = append(parts, templatePart{text: name, isVar: true})
		rest = rest[i+j+1:]
	}
	return parts
}

// pctEncode is RFC 6570's simple string expansion of a value: every byte
// but the unreserved characters (ALPHA, DIGIT, "-", ".", "_", "~") is
// percent-encoded, so a value can carry "/", "?", "#", "{", spaces and any
// reserved character without changing the request's structure.
func pctEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// escapeLiteral escapes a template's literal text as a URL path would be
// (slashes kept), so the wrapper and the mock compare the same bytes.
func escapeLiteral(s string) string {
	return (&url.URL{Path: s}).EscapedPath()
}

// expandPath expands the path part of a template (no query) into its
// escaped form: literals escaped as a path, each expression replaced by its
// value percent-encoded (RFC 6570 level 1). A value is a list of items: one
// for a scalar, several for an array or an object's keys and values, joined
// by a literal comma as RFC 6570 joins a list (the "simple" style). An
// expression without a value expands to nothing, as in RFC 6570.
func expandPath(template string, values map[string][]string) string {
	var b strings.Builder
	for _, p := range parseTemplate(template) {
		if p.isVar {
			for i, item := range values[p.text] {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(pctEncode(item))
			}
		} else {
			b.WriteString(escapeLiteral(p.text))
		}
	}
	return b.String()
}

// maxMatchSteps bounds the backtracking of matchTemplate (a template with
// many expressions in one long segment would otherwise be explored
// exponentially).
const maxMatchSteps = 100000

// matchTemplate matches an escaped request path against a path template and
// returns the values of its expressions, decoded. The template matches the
// path's tail (a mock may sit under a base path). Several expressions may
// share a segment with literals between them ("{name}.{format}"), and a value
// may itself hold the separator ("1.2" in "{major}.{minor}" read from
// "v1.2.3"): every split is tried, and the first whose values accept takes
// them (accept is nil or says whether a value fits its expression's
// parameter). A name that occurs twice must have one value.
func matchTemplate(template, path string, accept func(name, value string) bool) (map[string]string, bool) {
	parts := parseTemplate(template)
	for i := range parts {
		if !parts[i].isVar {
			parts[i].text = escapeLiteral(parts[i].text)
		}
	}
	steps := 0
	for start := 0; start < len(path); start++ {
		if start > 0 && path[start] != '/' {
			continue
		}
		vals := map[string]string{}
		if matchFrom(parts, path[start:], 0, 0, vals, accept, &steps) {
			return vals, true
		}
		if steps > maxMatchSteps {
			break
		}
	}
	return nil, false
}

func matchFrom(parts []templatePart, p string, i, pos int, vals map[string]string, accept func(string, string) bool, steps *int) bool {
	if *steps++; *steps > maxMatchSteps {
		return false
	}
	if i == len(parts) {
		return pos == len(p) || (pos == len(p)-1 && p[pos] == '/')
	}
	part := parts[i]
	if !part.isVar {
		return strings.HasPrefix(p[pos:], part.text) && matchFrom(parts, p, i+1, pos+len(part.text), vals, accept, steps)
	}
	for end := pos + 1; end <= len(p) && p[end-1] != '/'; end++ {
		raw := p[pos:end]
		v, err := url.PathUnescape(raw)
		if err != nil {
			continue // a cut through a %XX escape
		}
		prev, seen := vals[part.text]
		if seen && prev != v {
			continue
		}
		if !seen && accept != nil && !accept(part.text, v) {
			continue
		}
		vals[part.text] = v
		if matchFrom(parts, p, i+1, end, vals, accept, steps) {
			return true
		}
		if !seen {
			delete(vals, part.text)
		}
	}
	return false
}
