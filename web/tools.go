package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
)

// The API routes the tools pages stand for (api.Rules decides).
const (
	routeSearch   = "/api/v1/tools/retrieval/search"
	routeTools    = "/api/v1/tools"
	routeTool     = "/api/v1/tools/:toolId"
	routeHistory  = "/api/v1/tools/:toolId/history"
	routeManifest = "/api/v1/tools/retrieval/manifest/:toolId"
)

// signalBar is one score component of a search hit, as a bar.
type signalBar struct {
	Name  string
	Value float64
	Width float64 // 0..1 of the largest component on the page
}

type toolHit struct {
	ID, Name, Verb, Category, Description string
	Score                                 float64
	Bars                                  []signalBar
}

// viaJSON copies v into out through its JSON form: the pages show the
// services' records by their JSON names, as the API answers them.
func viaJSON(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode %T: %w", v, err)
	}
	return nil
}

func (c *Console) tools(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	data := map[string]any{"Q": q.Get("q"), "Context": q.Get("context"), "Strategy": q.Get("strategy"), "Category": q.Get("category")}
	if strings.TrimSpace(q.Get("q")) == "" {
		c.browse(w, r, s, data)
		return
	}
	if len(q.Get("q")) > 500 {
		data["Error"] = "The search text is too long (at most 500 characters)."
		c.page(w, r, s, http.StatusBadRequest, "tools", data)
		return
	}
	hits, err := c.search(r, s)
	if err != nil {
		code, msg := c.problem(r, err)
		data["Error"] = msg
		c.page(w, r, s, code, "tools", data)
		return
	}
	data["Hits"] = hits
	data["Searched"] = true
	c.page(w, r, s, http.StatusOK, "tools", data)
}

// search runs the page's query as the signed-in identity (or the guest)
// and lays each hit's score components out as bars.
func (c *Console) search(r *http.Request, s *session) ([]toolHit, error) {
	q := r.URL.Query()
	if err := c.allow(r, s, http.MethodGet, routeSearch); err != nil {
		return nil, err
	}
	query := retrieval.Query{Text: q.Get("q"), Context: q.Get("context"), Category: q.Get("category"), Caller: s.principal().Caller(), MaxTools: 10}
	var err error
	if query.Strategy, err = retrieval.ParseStrategy(q.Get("strategy")); err != nil {
		return nil, err
	}
	res, err := c.d.Retrieval.Search(r.Context(), query)
	if err != nil {
		return nil, err
	}
	type weighted = map[string]struct{ Weighted float64 }
	breakdowns := make([]weighted, len(res.Hits))
	maxV := 1e-9
	for i, h := range res.Hits {
		if err := viaJSON(h.Breakdown, &breakdowns[i]); err != nil {
			return nil, err
		}
		for _, b := range breakdowns[i] {
			maxV = math.Max(maxV, math.Abs(b.Weighted))
		}
	}
	hits := make([]toolHit, 0, len(res.Hits))
	for i, t := range res.Hits {
		h := toolHit{ID: t.Tool.ID, Name: t.Tool.Name, Verb: t.Tool.Verb, Category: t.Tool.Category, Description: t.Tool.ShortDescription, Score: t.Score}
		for name, b := range breakdowns[i] {
			if b.Weighted != 0 {
				h.Bars = append(h.Bars, signalBar{Name: name, Value: b.Weighted, Width: math.Abs(b.Weighted) / maxV})
			}
		}
		sort.Slice(h.Bars, func(i, j int) bool { return math.Abs(h.Bars[i].Value) > math.Abs(h.Bars[j].Value) })
		hits = append(hits, h)
	}
	return hits, nil
}

// browseSize is how many tools a page of the catalogue shows.
const browseSize = 25

// browseRow is one tool of the catalogue page.
type browseRow struct {
	ID, Name, Verb, Category, Status, Module string
	Tags                                     []string
	ShortDescription                         string
	Uses                                     int
}

func rowOf(t graph.ToolSummary, uses int) browseRow {
	return browseRow{ID: t.ID, Name: t.Name, Verb: t.Verb, Category: t.Category, Status: t.Status, Module: t.Module, Tags: t.Tags,
		ShortDescription: t.ShortDescription, Uses: uses}
}

var browseStatuses = []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled}

// splitValues reads a filter given comma-separated.
func splitValues(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// browse pages through the catalogue the caller may see (no search text):
// filtered by category, status and module, most used first or by id.
func (c *Console) browse(w http.ResponseWriter, r *http.Request, s *session, data map[string]any) {
	q := r.URL.Query()
	sortBy := q.Get("sort")
	if sortBy == "" {
		sortBy = "uses"
	}
	data["Browse"] = true
	data["Sort"], data["Status"], data["Module"], data["Cursor"] = sortBy, q.Get("status"), q.Get("module"), q.Get("cursor")
	rows, next, matched, err := c.catalogue(r, s, sortBy)
	if err != nil {
		code, msg := c.problem(r, err)
		data["Error"] = msg
		c.page(w, r, s, code, "tools", data)
		return
	}
	data["Items"], data["Matched"] = rows, matched
	data["First"], data["Next"] = pageLinks("/ui/tools", q, []string{"category", "status", "module", "sort"}, "cursor", next)
	c.page(w, r, s, http.StatusOK, "tools", data)
}

// catalogue reads one page of the tools the page's identity may see.
func (c *Console) catalogue(r *http.Request, s *session, sortBy string) ([]browseRow, string, int, error) {
	q := r.URL.Query()
	if err := c.allow(r, s, http.MethodGet, routeTools); err != nil {
		return nil, "", 0, err
	}
	f := s.principal().Caller().Filter()
	f.Categories, f.Statuses, f.Modules = splitValues(q.Get("category")), splitValues(q.Get("status")), splitValues(q.Get("module"))
	for _, st := range f.Statuses {
		if !slices.Contains(browseStatuses, st) {
			return nil, "", 0, fault.Malformed("status", "must be %s (comma-separated for several), got %q", strings.Join(browseStatuses, ", "), st)
		}
	}
	cursor := strings.TrimSpace(q.Get("cursor"))
	switch sortBy {
	case "uses":
		offset := 0
		if cursor != "" {
			var err error
			if offset, err = strconv.Atoi(cursor); err != nil || offset < 0 {
				return nil, "", 0, fault.Malformed("cursor", "must be the next page's cursor, got %q", cursor)
			}
		}
		page, err := c.d.Registry.ListByUse(r.Context(), f, offset, browseSize)
		if err != nil {
			return nil, "", 0, err
		}
		rows := make([]browseRow, 0, len(page.Items))
		for _, t := range page.Items {
			rows = append(rows, rowOf(t.ToolSummary, t.Uses))
		}
		next := ""
		if page.Next > 0 {
			next = strconv.Itoa(page.Next)
		}
		return rows, next, page.Matched, nil
	case "id":
		page, err := c.d.Registry.Page(r.Context(), f, browseSize, cursor)
		if err != nil {
			return nil, "", 0, err
		}
		rows := make([]browseRow, 0, len(page.Items))
		for _, t := range page.Items {
			rows = append(rows, rowOf(t, 0))
		}
		return rows, page.Next, 0, nil
	}
	return nil, "", 0, fault.Malformed("sort", "must be id or uses, got %q", sortBy)
}

// notFoundTool gives every not-found outcome the same message, so a
// hidden tool is indistinguishable from an unknown one. The id is echoed
// cut to fault.MaxEcho characters: the path can hold thousands.
func notFoundTool(id string, err error) error {
	if errors.Is(err, fault.ErrNotFound) {
		return fmt.Errorf("tools: tool %q: %w", fault.Echo(id), fault.ErrNotFound)
	}
	return err
}

func (c *Console) tool(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	caller := s.principal().Caller()
	ctx := r.Context()
	t, err := func() (graph.Tool, error) {
		if err := c.allow(r, s, http.MethodGet, routeTool); err != nil {
			return graph.Tool{}, err
		}
		t, err := c.d.Registry.GetVisible(ctx, id, caller.Allows)
		return t, notFoundTool(id, err)
	}()
	if err != nil {
		code, msg := c.problem(r, err)
		next := "Search or browse the tools you may see."
		if s == nil {
			next = "Tools that need a key are hidden from guests: sign in, or search the public tools."
		}
		c.page(w, r, s, code, "error", map[string]any{"Title": "No such tool", "Message": msg, "Next": next, "Back": "/ui/tools", "BackLabel": "Tools"})
		return
	}
	var errs []string
	note := func(err error) {
		if err != nil {
			errs = append(errs, c.errorText(r, err))
		}
	}
	var view map[string]any
	note(viaJSON(t, &view))
	var manifest bytes.Buffer
	if len(t.Manifest) > 0 {
		note(json.Indent(&manifest, t.Manifest, "", "  "))
	}
	var hist []graph.Revision
	if err := c.allow(r, s, http.MethodGet, routeHistory); err != nil {
		note(err)
	} else {
		hist, err = c.d.Registry.HistoryVisible(ctx, id, caller.Allows)
		note(notFoundTool(id, err))
	}
	var mv struct {
		Relationships map[string]any `json:"relationships"`
		Analytics     map[string]any `json:"analytics"`
	}
	if err := c.allow(r, s, http.MethodGet, routeManifest); err != nil {
		note(err)
	} else if v, err := c.d.Retrieval.Manifest(ctx, id, caller, retrieval.ManifestOptions{IncludeExamples: true, IncludeRelationships: true, IncludeAnalytics: true}); err != nil {
		note(err)
	} else {
		note(viaJSON(v, &mv))
	}
	c.page(w, r, s, http.StatusOK, "tool", map[string]any{"ID": id, "Tool": view, "Manifest": manifest.String(), "History": hist,
		"Relationships": mv.Relationships, "Analytics": mv.Analytics, "Error": strings.Join(errs, "; ")})
}
