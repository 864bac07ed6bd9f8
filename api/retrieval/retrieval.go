// Package retrieval is the HTTP edge of tool retrieval: search with context
// assembly, caller-filtered manifests and related
// tools, the single best match, usage events and cache invalidation. Every
// error goes through httpx.Error; bad parameters are 400s naming the
// parameter; a tool the caller may not see answers 404 like an unknown id.
//
// The caller is the authenticated principal (package identity), narrowed by
// X-Tool-Groups (absent = the credential's groups, empty = no tools),
// X-Allowed-Modules, X-Agent-State and X-Session-ID; the route rules live in
// the server's authorization table (api.Rules).
//
// Routes, under /api/v1:
//
//	GET    /tools/retrieval/search              q (required), strategy, maxTools ≤ 20, includeExamples,
//	                                            category, phase, context, format=json|markdown|openai
//	GET    /tools/retrieval/manifest/:toolId    includeExamples, includeRelationships, includeAnalytics
//	GET    /tools/retrieval/related/:toolId     relationshipType dependencies|pairings|alternatives, maxResults ≤ 10
//	POST   /tools/search                        {"queryText": …} → best match and its distance
//	POST   /sessions/:id/events                 {"events":[{toolId, query, success, latencyMs, at}]}
//	POST   /tools/usage/batch                   {"events":[{toolId, sessionId, userId, query, success, latencyMs, at}]}
//	DELETE /tools/admin/cache/invalidate        (admin) {"scope":"all|user|tool|strategy", userId, toolId, strategy}
//
// A cache invalidation clears this replica's result cache at once and,
// given a Broadcaster (WithBroadcast), every other replica's within the
// broadcaster's bound.
package retrieval

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
)

// Handlers serves the retrieval routes. Build it with New.
type Handlers struct {
	svc       *retrieval.Service
	broadcast Broadcaster
}

// Broadcaster hands a cache invalidation this replica has applied to
// every other replica (through the store).
type Broadcaster interface {
	Broadcast(ctx context.Context, r retrieval.InvalidateRequest) error
}

// WithBroadcast makes cache invalidations reach the other replicas
// through b.
func (h *Handlers) WithBroadcast(b Broadcaster) *Handlers {
	h.broadcast = b
	return h
}

// New returns the retrieval routes as a Mounter.
func New(svc *retrieval.Service) *Handlers {
	if svc == nil {
		panic("api/retrieval: nil service")
	}
	return &Handlers{svc: svc}
}

var _ httpx.Mounter = (*Handlers)(nil)

// Mount adds the routes to the /api/v1 group.
func (h *Handlers) Mount(v1 *gin.RouterGroup) {
	v1.GET("/tools/retrieval/search", h.search)
	v1.GET("/tools/retrieval/manifest/:toolId", h.manifest)
	v1.GET("/tools/retrieval/related/:toolId", h.related)
	v1.POST("/tools/search", h.best)
	v1.POST("/sessions/:id/events", h.sessionEvents)
	v1.POST("/tools/usage/batch", h.usageBatch)
	v1.DELETE("/tools/admin/cache/invalidate", h.invalidate)
}

// SearchResponse is the data of GET /tools/retrieval/search: the
// lightweight index, the detailed tools and the metadata, plus the ranking
// breakdown and the entities found.
type SearchResponse struct {
	LightweightIndex []retrieval.IndexEntry     `json:"lightweightIndex"`
	DetailedTools    []retrieval.DetailedTool   `json:"detailedTools"`
	Ranked           []retrieval.Hit            `json:"ranked"`
	Entities         []retrieval.FoundEntity    `json:"entities"`
	Metadata         retrieval.Metadata         `json:"metadata"`
	Context          string                     `json:"context,omitempty"`
	OpenAI           []retrieval.OpenAIFunction `json:"tools,omitempty"`
	// OpenAINames maps each function name in tools back to its tool id
	// (format=openai).
	OpenAINames map[string]string `json:"toolIds,omitempty"`
}

func (h *Handlers) search(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	q := retrieval.Query{
		Text:     c.Query("q"),
		Context:  c.Query("context"),
		Category: c.Query("category"),
		Caller:   caller,
	}
	if strings.TrimSpace(q.Text) == "" {
		httpx.Error(c, fault.Malformed("q", "is required"))
		return
	}
	if q.Strategy, err = retrieval.ParseStrategy(c.Query("strategy")); err != nil {
		httpx.Error(c, err)
		return
	}
	if q.Phase, err = retrieval.ParsePhase(c.Query("phase")); err != nil {
		httpx.Error(c, err)
		return
	}
	if q.MaxTools, err = httpx.QueryInt(c, "maxTools", 5, 1, retrieval.MaxTools); err != nil {
		httpx.Error(c, err)
		return
	}
	if q.IncludeExamples, err = httpx.QueryBool(c, "includeExamples", true); err != nil {
		httpx.Error(c, err)
		return
	}
	format := strings.ToLower(c.DefaultQuery("format", "json"))
	if format != "json" && format != "markdown" && format != "openai" {
		httpx.Error(c, fault.Malformed("format", "must be json, markdown or openai; got %q", format))
		return
	}
	res, err := h.svc.Search(c.Request.Context(), q)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	resp := SearchResponse{
		LightweightIndex: res.Context.Index,
		DetailedTools:    res.Context.Detailed,
		Ranked:           res.Hits,
		Entities:         res.Entities,
		Metadata:         res.Metadata,
	}
	switch format {
	case "markdown":
		resp.Context = res.Context.Markdown()
	case "openai":
		resp.OpenAI, resp.OpenAINames = res.Context.OpenAI(), res.Context.OpenAINames()
	}
	httpx.OK(c, http.StatusOK, resp)
}

func (h *Handlers) manifest(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var o retrieval.ManifestOptions
	if o.IncludeExamples, err = httpx.QueryBool(c, "includeExamples", true); err != nil {
		httpx.Error(c, err)
		return
	}
	if o.IncludeRelationships, err = httpx.QueryBool(c, "includeRelationships", true); err != nil {
		httpx.Error(c, err)
		return
	}
	if o.IncludeAnalytics, err = httpx.QueryBool(c, "includeAnalytics", false); err != nil {
		httpx.Error(c, err)
		return
	}
	mv, err := h.svc.Manifest(c.Request.Context(), c.Param("toolId"), caller, o)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, mv)
}

// RelatedResponse is the data of GET /tools/retrieval/related/:toolId.
type RelatedResponse struct {
	SourceToolID     string                  `json:"sourceToolId"`
	RelationshipType retrieval.RelationKind  `json:"relationshipType"`
	RelatedTools     []retrieval.RelatedTool `json:"relatedTools"`
}

func (h *Handlers) related(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	kind, err := retrieval.ParseRelationKind(c.Query("relationshipType"))
	if err != nil {
		httpx.Error(c, err)
		return
	}
	n, err := httpx.QueryInt(c, "maxResults", 3, 1, retrieval.MaxRelated)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	rel, err := h.svc.Related(c.Request.Context(), c.Param("toolId"), kind, n, caller)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, RelatedResponse{SourceToolID: c.Param("toolId"), RelationshipType: kind, RelatedTools: rel})
}

// BestRequest is the body of POST /tools/search.
type BestRequest struct {
	QueryText string `json:"queryText"`
}

// BestResponse is the best match in the shape of one of
// the search's ranked hits ({"tool": {…}, "score", "breakdown", …}) plus
// its cosine distance.
type BestResponse struct {
	retrieval.Hit
	Distance float64 `json:"distance"`
}

func (h *Handlers) best(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var req BestRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	hit, dist, err := h.svc.Best(c.Request.Context(), req.QueryText, caller)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusOK, BestResponse{Hit: hit, Distance: dist})
}

// EventsRequest is the body of both event endpoints.
type EventsRequest struct {
	Events []EventIn `json:"events"`
}

// EventIn is one event as sent: a retrieval.Event whose success must be
// said, since a missing one would otherwise read as a failure.
type EventIn struct {
	retrieval.Event
	Success *bool `json:"success"`
}

// events are the request's events, each saying whether it succeeded.
func (r EventsRequest) events() ([]retrieval.Event, error) {
	out := make([]retrieval.Event, len(r.Events))
	for i, e := range r.Events {
		if e.Success == nil {
			return nil, fault.Malformed(fmt.Sprintf("events[%d].success", i), "is required: true when the tool served the query, false when it failed")
		}
		out[i] = e.Event
		out[i].Success = *e.Success
	}
	return out, nil
}

// EventsResponse reports how many events the call accepted (recorded),
// how many the ranking learned from, and how many it did not because no
// observed run backed them, with why (retrieval.Tally).
type EventsResponse = retrieval.Tally

func (h *Handlers) sessionEvents(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var req EventsRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	events, err := req.events()
	if err != nil {
		httpx.Error(c, err)
		return
	}
	sid := c.Param("id")
	for i := range events {
		if s := events[i].SessionID; s != "" && s != sid {
			httpx.Error(c, fault.Malformed(fmt.Sprintf("events[%d].sessionId", i), "names session %q, not the path's %q", s, sid))
			return
		}
		// Session ids are scoped to the caller, so no caller can feed
		// another's session history by naming its id.
		events[i].SessionID = identity.SessionKey(caller.UserID, sid)
	}
	if err := ownEvents(caller, events); err != nil {
		httpx.Error(c, err)
		return
	}
	h.record(c, caller, events)
}

func (h *Handlers) usageBatch(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	var req EventsRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	events, err := req.events()
	if err != nil {
		httpx.Error(c, err)
		return
	}
	if access.LevelRank(caller.Level) < access.LevelRank("admin") {
		// Only an admin imports events as given; anyone else records its own.
		for i := range events {
			events[i].SessionID = identity.SessionKey(caller.UserID, events[i].SessionID)
		}
		if err := ownEvents(caller, events); err != nil {
			httpx.Error(c, err)
			return
		}
	}
	h.record(c, caller, events)
}

// ownEvents makes every event the caller's: an empty userId becomes the
// caller's, another user's is refused naming the event.
func ownEvents(caller access.Caller, events []retrieval.Event) error {
	for i := range events {
		switch events[i].UserID {
		case "", caller.UserID:
			events[i].UserID = caller.UserID
		default:
			return fmt.Errorf("events[%d].userId: %q is not the caller (%s); only an admin may record events for others: %w",
				i, events[i].UserID, caller.UserID, fault.ErrForbidden)
		}
	}
	return nil
}

func (h *Handlers) record(c *gin.Context, caller access.Caller, events []retrieval.Event) {
	tally, err := h.svc.Report(c.Request.Context(), caller, events)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	httpx.OK(c, http.StatusAccepted, tally)
}

// InvalidateResponse reports how many cache entries went on the replica
// that answered (the others clear theirs within the broadcaster's bound).
type InvalidateResponse struct {
	Scope       retrieval.Scope `json:"scope"`
	Invalidated int             `json:"invalidated"`
}

func (h *Handlers) invalidate(c *gin.Context) {
	caller, err := httpx.Caller(c)
	if err != nil {
		httpx.Error(c, err)
		return
	}
	_ = caller // the route's rule (admin) was checked by the security middleware
	var req retrieval.InvalidateRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		httpx.Error(c, err)
		return
	}
	n, err := h.svc.InvalidateCache(req) // also checks the request
	if err != nil {
		httpx.Error(c, err)
		return
	}
	if h.broadcast != nil {
		if err := h.broadcast.Broadcast(c.Request.Context(), req); err != nil {
			httpx.Error(c, fmt.Errorf("cache cleared on this replica only, the others were not told: %w: %w", fault.ErrUnavailable, err))
			return
		}
	}
	httpx.OK(c, http.StatusOK, InvalidateResponse{Scope: req.Scope, Invalidated: n})
}
