package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/ratelimit"
)

// Limits bound the server's requests; the per-caller rate limits are
// Options.Limiter's.
type Limits struct {
	// MaxBodyBytes bounds request bodies (413 above it); 0 means httpx.MaxBodyBytes.
	MaxBodyBytes int64
}

// HeaderRequestID carries the request id, echoed in the response and audit.
const HeaderRequestID = "X-Request-ID"

var requestIDRe = regexp.MustCompile(`^[A-Za-z0-9._\-]{1,64}$`)

// secure is the security middleware: request id, the route's rule from the
// authorization table, body size, authentication, the rule check,
// narrowing, rate limits, then the handler, then the audit record.
func (s *Server) secure(c *gin.Context) {
	rid := c.GetHeader(HeaderRequestID)
	if !requestIDRe.MatchString(rid) {
		rid = newRequestID()
	}
	c.Header(HeaderRequestID, rid)
	c.Set("requestID", rid)

	route := c.FullPath()
	if route == "" {
		// No route matched: NoRoute/NoMethod answer as an anonymous guest.
		c.Next()
		return
	}
	row, ok := s.rules[c.Request.Method+" "+route]
	if !ok {
		httpx.Error(c, fmt.Errorf("api: no authorization rule for %s %s (add a row to api.Rules)", c.Request.Method, route))
		return
	}
	maxBody := s.opts.Limits.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = httpx.MaxBodyBytes
	}
	if c.Request.ContentLength > maxBody {
		httpx.Error(c, fmt.Errorf("body: the request body (%d bytes) is over the %d-byte limit: %w", c.Request.ContentLength, maxBody, fault.ErrTooLarge))
		return
	}
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxBody)
	}

	p := identity.Anonymous()
	if s.opts.Auth != nil {
		var err error
		p, err = s.opts.Auth.Authenticate(c.Request.Context(), c.GetHeader("Authorization"))
		if err != nil {
			s.opts.Metrics.AuthFailure("unauthenticated")
			s.record(c, row, identity.Anonymous(), "auth.failed", graph.AuditDenied, http.StatusUnauthorized, err.Error())
			c.Header("WWW-Authenticate", identity.Challenge(s.opts.BaseURL+identity.ResourceMetadataPath, err))
			httpx.Error(c, err)
			return
		}
	}
	if err := row.Rule.Check(p); err != nil {
		s.refuse(c, row, p, err)
		return
	}
	caller, err := identity.Narrow(p, c.Request.Header)
	if err != nil {
		if errors.Is(err, fault.ErrForbidden) {
			s.opts.Metrics.GroupDenied()
		}
		s.refuse(c, row, p, err)
		return
	}
	// A trusted gateway acting for an end user is authorized as that user:
	// the rule is checked again after narrowing.
	if err := row.Rule.Check(p.Acting(caller)); err != nil {
		s.refuse(c, row, p, err)
		return
	}
	if row.Limit != "" {
		s.opts.Metrics.GroupRequest(caller.EffectiveGroups())
		if err := s.limiter.Take(row.Limit, p, c.ClientIP()); err != nil {
			var lim *ratelimit.Error
			if errors.As(err, &lim) {
				c.Header("Retry-After", strconv.Itoa(int(math.Ceil(lim.RetryAfter.Seconds()))))
			}
			s.refuse(c, row, p, err)
			return
		}
	}
	c.Request = c.Request.WithContext(audit.WithRequestID(identity.NewContext(c.Request.Context(), p, caller), rid))
	c.Next()
	if row.Audit {
		status := c.Writer.Status()
		outcome := outcomeOf(status)
		detail := ""
		if len(c.Errors) > 0 {
			detail = c.Errors.Last().Error()
		}
		if caller.UserID != p.Subject {
			detail = "on behalf of " + caller.UserID + "; " + detail
		}
		s.record(c, row, p, audit.Action(row.Method, row.Path), outcome, status, detail)
	}
}

// refuse answers a refused request (401, 403, 429, 400) and audits it when
// the route is audited.
func (s *Server) refuse(c *gin.Context, row RouteRule, p identity.Principal, err error) {
	status, _ := httpx.Status(err)
	switch status {
	case http.StatusUnauthorized:
		s.opts.Metrics.AuthFailure("unauthenticated")
		// No credential was sent (a bad one is answered in secure): a
		// challenge without an error code (RFC 6750 §3.1).
		c.Header("WWW-Authenticate", identity.Challenge(s.opts.BaseURL+identity.ResourceMetadataPath, nil))
	case http.StatusForbidden:
		s.opts.Metrics.AuthFailure("forbidden")
	}
	if row.Audit {
		s.record(c, row, p, audit.Action(row.Method, row.Path), graph.AuditDenied, status, err.Error())
	}
	httpx.Error(c, err)
}

// auditTimeout bounds writing a call's audit record once the call is done.
const auditTimeout = 10 * time.Second

// record writes the call's audit event, one per tool when the handler
// named the tools it wrote (httpx.AuditTools); a failure to audit is
// logged, and the response the caller gets is not changed by it. The
// write does not use the request's context: a client that hangs up (say
// during ?wait=) has still had its call made, and the record must be
// written all the same.
func (s *Server) record(c *gin.Context, row RouteRule, p identity.Principal, action, outcome string, status int, detail string) {
	if s.opts.Audit == nil {
		return
	}
	tools := httpx.AuditedTools(c)
	if len(tools) == 0 {
		tool := c.Param("toolId")
		if tool == "" {
			tool = c.Param("id")
		}
		tools = []string{tool}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), auditTimeout)
	defer cancel()
	for _, tool := range tools {
		e := graph.AuditEvent{
			Actor: p.Subject, ActorName: p.Name, Method: p.Method, Action: action, Tool: tool,
			Outcome: outcome, Status: status, RequestID: c.GetString("requestID"),
			Route: row.Method + " " + row.Path, Detail: detail,
		}
		if err := s.opts.Audit.Record(ctx, e); err != nil {
			s.log.ErrorContext(ctx, "audit record failed", "action", action, "tool", tool, "err", err)
		}
	}
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
