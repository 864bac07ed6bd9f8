package web

import (
	"context"
	"net/http"

	"github.com/toolsmith/toolsmith/identity"
)

// menuItem is one section of the console's menu: its page and the API
// route the page stands for. Whether a key is offered the section is that
// route's row of the authorization table (api.Rules), the same row the page
// itself checks, so no section offered answers 403.
type menuItem struct {
	Path, Label string
	// Pages are the page names under this section (the current one is marked).
	Pages         []string
	Method, Route string
}

// menu lists the sections in the order shown. The first a key may open is
// its first page after signing in: the dashboard for admins, the pending
// reviews for approvers, the tools for everyone else.
var menu = []menuItem{
	{"/ui/dashboard", "Dashboard", []string{"dashboard"}, http.MethodGet, routeSeries},
	{"/ui/reviews", "Pending reviews", []string{"reviews", "review"}, http.MethodGet, routePending},
	{"/ui/decided", "Decided", []string{"decided"}, http.MethodGet, routeDecided},
	{"/ui/tools", "Tools", []string{"tools", "tool"}, http.MethodGet, routeTools},
	{"/ui/sources", "Sources", []string{"sources"}, http.MethodGet, routeSources},
	{"/ui/notifications", "Notifications", []string{"notifications"}, http.MethodGet, routeNotes},
	{"/ui/gaps", "Runs & gaps", []string{"gaps"}, http.MethodGet, routeGaps},
	{"/ui/keys", "Keys", []string{"keys"}, http.MethodGet, routeKeys},
	{"/ui/audit", "Audit", []string{"audit"}, http.MethodGet, routeAudit},
}

// navLink is a menu section as the layout renders it.
type navLink struct {
	Path, Label string
	Current     bool
}

// offered lists the sections p may open.
func (c *Console) offered(ctx context.Context, p identity.Principal) []menuItem {
	var out []menuItem
	for _, m := range menu {
		if c.d.Gate.Permits(ctx, m.Method, m.Route, p) == nil {
			out = append(out, m)
		}
	}
	return out
}

// nav is the menu of the signed-in key (or of a guest), with page marked.
func (c *Console) nav(ctx context.Context, s *session, page string) []navLink {
	items := c.offered(ctx, s.principal())
	out := make([]navLink, 0, len(items))
	for _, m := range items {
		cur := false
		for _, p := range m.Pages {
			cur = cur || p == page
		}
		out = append(out, navLink{Path: m.Path, Label: m.Label, Current: cur})
	}
	return out
}

// home is the console's first page: sign-in for a visitor without a
// session, otherwise the first section the key may open.
func (c *Console) home(ctx context.Context, s *session) string {
	if s == nil {
		return "/ui/signin"
	}
	if items := c.offered(ctx, s.principal()); len(items) > 0 {
		return items[0].Path
	}
	return "/ui/tools"
}
