// Package admin is the HTTP edge of identity and operations administration:
// API keys and the audit log. Who may call each route (admins) is the
// server's authorization table (api.Rules).
//
// Routes, under /api/v1:
//
//	POST   /admin/keys        {"owner", "level", "roles", "permissions", "groups", "modules", "trustedGateway", "limits", "expiresAt"} → the key and its secret (shown once)
//	GET    /admin/keys        every key, without secrets or hashes
//	DELETE /admin/keys/:id    revoke
//	GET    /admin/audit       actor, action, tool, since, until (RFC 3339), before (cursor), limit ≤ 1000
package admin

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Handlers serves the admin routes.
type Handlers struct {
	keys  *identity.KeyService
	audit *audit.Log
}

// New returns the admin handlers.
func New(keys *identity.KeyService, log *audit.Log) *Handlers {
	return &Handlers{keys: keys, audit: log}
}

// Mount implements httpx.Mounter.
func (h *Handlers) Mount(v1 *gin.RouterGroup) {
	v1.POST("/admin/keys", h.createKey)
	v1.GET("/admin/keys", h.listKeys)
	v1.DELETE("/admin/keys/:id", h.revokeKey)
	v1.GET("/admin/audit", h.listAudit)
}

// CreatedKey is the answer to a key creation: the record and the secret,
// which is shown this once.
type CreatedKey struct {
	Key    graph.APIKey `json:"key"`
	Secret string       `json:"secret"`
}

func (h *Handlers) createKey(c *gin.Context) {
	var req identity.NewKey
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	k, secret, err := h.keys.Create(c.Request.Context(), httpx.Acting(c), req)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	k.Hash = ""
	httpx.OK(c, http.StatusCreated, CreatedKey{Key: k, Secret: secret})
}

func (h *Handlers) listKeys(c *gin.Context) {
	keys, err := h.keys.List(c.Request.Context())
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"keys": keys, "count": len(keys)})
}

func (h *Handlers) revokeKey(c *gin.Context) {
	id := c.Param("id")
	p := httpx.Acting(c)
	if p.KeyID == id {
		httpx.Error(c, fault.Invalid("id", "a key cannot revoke itself; use another admin key"))
		return
	}
	if err := h.keys.Revoke(c.Request.Context(), p, id); err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, gin.H{"id": id, "revoked": true})
}

func (h *Handlers) listAudit(c *gin.Context) {
	limit, err := httpx.QueryInt(c, "limit", 100, 1, 1000)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	q := graph.AuditQuery{Actor: c.Query("actor"), Action: c.Query("action"), Tool: c.Query("tool"), Before: c.Query("before"), Limit: limit}
	if q.Since, err = queryTime(c, "since"); err != nil {
		httpx.Error(c, err)
		return
	}
	// A since in the future is refused as analytics' and series' is: the
	// empty page would read as "nothing happened". A future until is only
	// "up to now", and stays allowed.
	if !q.Since.IsZero() {
		if err := analytics.CheckSince(q.Since, time.Now()); err != nil {
			httpx.Error(c, err)
			return
		}
	}
	if q.Until, err = queryTime(c, "until"); err != nil {
		httpx.Error(c, err)
		return
	}
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	page, err := h.audit.QueryAs(c.Request.Context(), caller, q)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, page)
}

func queryTime(c *gin.Context, name string) (time.Time, error) {
	raw := c.Query(name)
	if raw == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}, fault.Malformed(name, "must be an RFC 3339 time such as 2026-11-24T10:00:00Z, got %q", raw)
	}
	return t, nil
}
