package identity

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Request headers that describe a call's context. X-Tool-Groups,
// X-Allowed-Modules, X-Agent-State and X-Session-ID may only narrow what the
// credential allows; the X-User-* headers and X-Permission-Level speak for
// an end user and are read only from a trusted gateway's requests.
const (
	HeaderGroups         = "X-Tool-Groups"
	HeaderAllowedModules = "X-Allowed-Modules"
	HeaderState          = "X-Agent-State"
	HeaderSessionID      = "X-Session-ID"
	HeaderUserID         = "X-User-ID"
	HeaderRoles          = "X-User-Roles"
	HeaderPermissions    = "X-User-Permissions"
	HeaderLevel          = "X-Permission-Level"
)

// Narrow returns the caller a request acts as: the principal's allowances
// narrowed by the request's headers. A request for groups or modules outside
// the principal's is fault.ErrForbidden naming the header and the values
// (a header may only ask for a subset); a malformed value is fault.ErrMalformed.
// For a trusted gateway the X-User-* headers name the end user, whose
// level, roles and permissions may not exceed the gateway's own.
func Narrow(p Principal, h http.Header) (access.Caller, error) {
	c := p.Caller()
	if vals, ok := h[http.CanonicalHeaderKey(HeaderGroups)]; ok {
		want := splitList(strings.Join(vals, ","))
		if err := checkNames(HeaderGroups, want); err != nil {
			return access.Caller{}, err
		}
		if err := subset(HeaderGroups, want, c.EffectiveGroups(), true); err != nil {
			return access.Caller{}, err
		}
		c.Groups = want
		if c.Groups == nil {
			c.Groups = []string{} // present but empty: no tools at all
		}
	}
	if vals, ok := h[http.CanonicalHeaderKey(HeaderAllowedModules)]; ok {
		want := splitList(strings.Join(vals, ","))
		if err := checkNames(HeaderAllowedModules, want); err != nil {
			return access.Caller{}, err
		}
		if c.AllowedModules != nil {
			if err := subset(HeaderAllowedModules, want, c.AllowedModules, false); err != nil {
				return access.Caller{}, err
			}
		}
		c.AllowedModules = want
		if c.AllowedModules == nil {
			c.AllowedModules = []string{}
		}
	}
	c.State = strings.TrimSpace(h.Get(HeaderState))
	if len(c.State) > 128 {
		return access.Caller{}, fault.Malformed(HeaderState, "must be at most 128 characters")
	}
	sid := strings.TrimSpace(h.Get(HeaderSessionID))
	if len(sid) > 256 {
		return access.Caller{}, fault.Malformed(HeaderSessionID, "must be at most 256 characters")
	}
	if p.TrustedGateway {
		if err := actFor(&c, p, h); err != nil {
			return access.Caller{}, err
		}
	}
	c.SessionID = SessionKey(c.UserID, sid)
	return c, nil
}

// SessionKey scopes a client-chosen session id to the caller that uses it,
// so one caller can neither read nor feed another's session history by
// naming its id. An empty sid stays empty.
func SessionKey(userID, sid string) string {
	if sid == "" {
		return ""
	}
	if userID == "" {
		return "anonymous/" + sid
	}
	return userID + "/" + sid
}

// actFor applies a trusted gateway's end-user headers within the gateway's
// own limits. With X-User-ID the caller is that end user: a guest without
// roles or permissions unless the headers say more. Without it the gateway
// acts as itself, and a level, roles or permissions it sends still narrow
// what it may do (they can only lower it).
func actFor(c *access.Caller, p Principal, h http.Header) error {
	user := strings.TrimSpace(h.Get(HeaderUserID))
	if len(user) > 256 {
		return fault.Malformed(HeaderUserID, "must be at most 256 characters")
	}
	if user != "" {
		c.UserID = "gateway:" + p.KeyID + ":" + user
		c.Level, c.Roles, c.Permissions = access.Levels[0], nil, nil
	}
	if lv := strings.ToLower(strings.TrimSpace(h.Get(HeaderLevel))); lv != "" {
		if !slices.Contains(access.Levels, lv) {
			return fault.Malformed(HeaderLevel, "must be one of %s, got %q", strings.Join(access.Levels, ", "), lv)
		}
		if access.LevelRank(lv) > access.LevelRank(p.Level) {
			return fmt.Errorf("%s %q is above the gateway key's level %q: %w", HeaderLevel, lv, p.Level, fault.ErrForbidden)
		}
		c.Level = lv
	}
	if _, ok := h[http.CanonicalHeaderKey(HeaderRoles)]; ok {
		roles := splitList(h.Get(HeaderRoles))
		if err := subset(HeaderRoles, roles, p.Roles, false); err != nil {
			return err
		}
		c.Roles = roles
	}
	if _, ok := h[http.CanonicalHeaderKey(HeaderPermissions)]; ok {
		perms := splitList(h.Get(HeaderPermissions))
		if err := subset(HeaderPermissions, perms, p.Permissions, false); err != nil {
			return err
		}
		c.Permissions = perms
	}
	return nil
}

// subset checks that every value of want is allowed; with wildcard, "*" in
// allowed admits anything.
func subset(header string, want, allowed []string, wildcard bool) error {
	if wildcard && slices.Contains(allowed, access.Wildcard) {
		return nil
	}
	var outside []string
	for _, w := range want {
		if !slices.Contains(allowed, w) {
			outside = append(outside, w)
		}
	}
	if len(outside) > 0 {
		return fmt.Errorf("%s asks for %s outside what this credential allows (%s): %w",
			header, strings.Join(outside, ", "), strings.Join(allowed, ", "), fault.ErrForbidden)
	}
	return nil
}

// maxNameLen bounds one group or module name in a narrowing header.
const maxNameLen = 128

// checkNames refuses names that are not printable text: they can match no
// group or module, and they would otherwise travel into logs and metrics.
func checkNames(header string, names []string) error {
	for _, n := range names {
		if len(n) > maxNameLen {
			return fault.Malformed(header, "names must be at most %d bytes, got %d", maxNameLen, len(n))
		}
		if !utf8.ValidString(n) || strings.IndexFunc(n, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return fault.Malformed(header, "names must be printable UTF-8 text, got %q", n)
		}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
