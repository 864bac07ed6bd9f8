package api

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/tool"
)

// Why a query string does not parse (badQuery).
const (
	badEscape = "does not parse: a % must start an escape of two hex digits (%25 for a % itself), and parameters are separated by &"
	badUTF8   = "is not UTF-8 text: its percent-escapes spell bytes that are no characters"
	badCtrl   = "holds a control character (such as %00); only tab, newline and carriage return are allowed"
)

// badQuery names what of a raw query string does not parse: the
// parameter whose value holds a malformed percent-escape (?actor=key:abc%),
// or "query" when a name itself is broken (?limt%zz=1, a ";" separator).
// A name or value whose escapes spell bytes that are not UTF-8 (?q=%ff)
// is refused the same way, and so is one holding a control character
// other than tab, newline and carriage return (?actor=%00: no filter value
// holds one, as no text Toolsmith stores does, tool.ControlAt). why says which; both are "" for a query that
// parses. url.Query drops what it cannot parse,
// so without this check a filter would silently go missing and the route
// answer as if it had not been asked.
func badQuery(raw string) (name, why string) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			return "query", badEscape
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return "query", badEscape
		}
		if !utf8.ValidString(name) {
			return "query", badUTF8
		}
		if tool.ControlAt(name) >= 0 {
			return "query", badCtrl
		}
		if name == "" {
			name = "query" // a value without a name (?=%) is named by the query
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return name, badEscape
		}
		if !utf8.ValidString(value) {
			return name, badUTF8
		}
		if tool.ControlAt(value) >= 0 {
			return name, badCtrl
		}
	}
	return "", ""
}
