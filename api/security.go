package api

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/internal/jsoncheck"
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

// secure is the security middleware: request id, the route's row in the
// authorization table, body size, authentication, then the Gate's decision
// (rule, narrowing, rule for the acting user, rate limit, the refusal's
// audit record), the handler, and the call's audit record.
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
	call := Call{Method: c.Request.Method, Route: route, Principal: identity.Anonymous(), Header: c.Request.Header,
		Addr: s.opts.Proxies.ClientAddr(c.Request), Tool: pathTool(c), RequestID: rid}
	if _, err := s.gate.Row(call.Method, route); err != nil {
		httpx.Error(c, err)
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

	if s.opts.Auth != nil {
		p, err := s.opts.Auth.Authenticate(c.Request.Context(), c.GetHeader("Authorization"))
		if err != nil {
			s.opts.Metrics.AuthFailure("unauthenticated")
			s.gate.AuthFailed(c.Request.Context(), call, err)
			c.Header("WWW-Authenticate", identity.Challenge(s.opts.BaseURL+identity.ResourceMetadataPath, err))
			httpx.Error(c, err)
			return
		}
		call.Principal = p
	}
	d := s.gate.Decide(c.Request.Context(), call)
	var lim *ratelimit.Error
	if d.Row.Limit != "" && (d.Err == nil || d.Refused == RefusedLimit) {
		// Every call that reached the rate limit counts for its groups.
		s.opts.Metrics.GroupRequest(d.Caller.EffectiveGroups())
	}
	if d.Err != nil {
		status, _ := httpx.Status(d.Err)
		switch {
		case status == http.StatusUnauthorized:
			s.opts.Metrics.AuthFailure("unauthenticated")
			// No credential was sent (a bad one is answered above): a
			// challenge without an error code (RFC 6750 §3.1).
			c.Header("WWW-Authenticate", identity.Challenge(s.opts.BaseURL+identity.ResourceMetadataPath, nil))
		case status == http.StatusForbidden:
			if d.Refused == RefusedNarrow && errors.Is(d.Err, fault.ErrForbidden) {
				s.opts.Metrics.GroupDenied()
			}
			s.opts.Metrics.AuthFailure("forbidden")
		case errors.As(d.Err, &lim):
			c.Header("Retry-After", strconv.Itoa(int(math.Ceil(lim.RetryAfter.Seconds()))))
		}
		httpx.Error(c, d.Err)
		return
	}
	if route == mcpPath && c.Request.Method == http.MethodPost && c.Request.Body != nil && c.Request.Body != http.NoBody {
		body, err := bufferBody(c.Request, maxBody)
		if err == nil {
			// The JSON-RPC message as a whole, its envelope included
			// (params.name, params.arguments given twice), is read for a
			// repeated key or a string that is not UTF-8, as REST bodies
			// are: decoded, the last key would win, so what ran would not
			// be what a proxy reading the first one saw.
			err = jsoncheck.Check(body, "")
		}
		if err != nil {
			httpx.Error(c, err)
			return
		}
	}
	p, caller := call.Principal, d.Caller
	c.Request = c.Request.WithContext(audit.WithRequestID(identity.NewContext(c.Request.Context(), p, caller), rid))
	query := c.Request.URL.Query() // parsed once for both checks
	if name, why := badQuery(c.Request.URL.RawQuery); name != "" && !AnyQuery[call.Method+" "+route] {
		httpx.Error(c, fault.Malformed(name, "%s", why))
		c.Abort()
	} else if name := unknownQuery(call.Method, route, query); name != "" {
		known := Queries[call.Method+" "+route]
		takes := "takes no query parameters"
		if len(known) > 0 {
			takes = "takes " + strings.Join(known, ", ")
		}
		httpx.Error(c, fault.Malformed(name, "is not a query parameter of %s %s, which %s", call.Method, route, takes))
		c.Abort()
	} else if name := repeatedQuery(call.Method, route, query); name != "" {
		httpx.Error(c, fault.Malformed(name, "is given more than once; give it once"))
		c.Abort()
	} else {
		c.Next()
	}
	if d.Row.Audit {
		detail := ""
		if len(c.Errors) > 0 {
			detail = c.Errors.Last().Error()
		}
		if caller.UserID != p.Subject {
			detail = "on behalf of " + caller.UserID + "; " + detail
		}
		s.gate.Done(c.Request.Context(), call, d.Row, c.Writer.Status(), detail, httpx.AuditedTools(c))
	}
}

// mcpPath is the MCP endpoint's route (served by the MCP SDK, not gin).
const mcpPath = "/mcp"

// bufferBody reads the body of a route whose handler does not answer the
// API's envelope (MCP's POSTs), so that one over the bound
// (MaxBytesReader, set above; a chunked body's length is not known
// before) is refused here with the envelope every other oversized body
// gets, naming the bound, instead of the MCP SDK's plain-text 413, and so
// that it can be checked as a whole. The SDK reads a whole POST body
// before it parses it, so reading it first takes no memory it would not
// take.
func bufferBody(r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, fmt.Errorf("body: the request body is over the %d-byte limit: %w", limit, fault.ErrTooLarge)
	case err != nil:
		return nil, fault.Malformed("body", "cannot read request body: %v", err)
	}
	_ = r.Body.Close()
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return body, nil
}

// pathTool is what a call is about, as its path names it (a tool, or a
// review, key or source id), for its audit records.
func pathTool(c *gin.Context) string {
	if tool := c.Param("toolId"); tool != "" {
		return tool
	}
	return c.Param("id")
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
