// Package httpxtest is for handler unit tests that mount a feature's routes
// on a bare gin engine, without the server's security middleware: it puts a
// given identity in each request's context, as the middleware would.
// Production code never imports it.
package httpxtest

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/identity"
)

// Test headers that HeaderIdentity reads. They mean something only in tests.
const (
	HeaderUserID      = "X-Test-User"
	HeaderLevel       = "X-Test-Level"
	HeaderRoles       = "X-Test-Roles"
	HeaderPermissions = "X-Test-Permissions"
)

// HeaderIdentity is a gin middleware for handler tests: it builds the
// principal from the X-Test-* headers (user, level, comma-separated roles
// and permissions; groups: every group) and narrows it with the real
// identity.Narrow, so X-Tool-Groups, X-Agent-State and X-Session-ID behave
// as in production. Without X-Tool-Groups the caller is in the default group.
func HeaderIdentity() gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Request.Header
		p := identity.Anonymous()
		if u := strings.TrimSpace(h.Get(HeaderUserID)); u != "" {
			p = identity.Principal{Subject: u, Method: identity.MethodAPIKey, Level: "user"}
		}
		if lv := strings.TrimSpace(h.Get(HeaderLevel)); lv != "" {
			if p.Subject == "" {
				p.Subject, p.Method = "test-"+lv, identity.MethodAPIKey
			}
			p.Level = lv
		}
		p.Roles = split(h.Get(HeaderRoles))
		p.Permissions = split(h.Get(HeaderPermissions))
		if (len(p.Roles) > 0 || len(p.Permissions) > 0) && p.Subject == "" {
			p.Subject, p.Method, p.Level = "test-user", identity.MethodAPIKey, "user"
		}
		p.Groups = []string{access.Wildcard}
		hh := h.Clone()
		if _, ok := hh[http.CanonicalHeaderKey(identity.HeaderGroups)]; !ok {
			hh.Set(identity.HeaderGroups, access.DefaultGroup)
		}
		caller, err := identity.Narrow(p, hh)
		if err != nil {
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
			return
		}
		c.Request = c.Request.WithContext(identity.NewContext(c.Request.Context(), p, caller))
		c.Next()
	}
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
