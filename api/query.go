package api

import (
	"net/url"
	"strings"
)

// badQuery names what of a raw query string does not parse: the
// parameter whose value holds a malformed percent-escape (?actor=key:abc%),
// or "query" when a name itself is broken (?limt%zz=1, a ";" separator).
// It is "" for a query that parses. url.Query drops what it cannot parse,
// so without this check a filter would silently go missing and the route
// answer as if it had not been asked.
func badQuery(raw string) string {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		if strings.Contains(pair, ";") {
			return "query"
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return "query"
		}
		if _, err := url.QueryUnescape(v); err != nil {
			return name
		}
	}
	return ""
}
