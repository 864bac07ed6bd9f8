package web

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/workflows"
)

type noNotes struct{}

func (noNotes) List(context.Context, int) ([]airlock.Notification, error) { return nil, nil }

var navLinks = regexp.MustCompile(`<a href="(/ui/[^"]*)"`)

// menuOf lists the links of a page's menu.
func menuOf(t *testing.T, body string) []string {
	t.Helper()
	i, j := strings.Index(body, `<nav aria-label="Sections">`), strings.Index(body, "</nav>")
	if i < 0 || j < i {
		t.Fatalf("no menu in\n%s", body)
	}
	var out []string
	for _, m := range navLinks.FindAllStringSubmatch(body[i:j], -1) {
		out = append(out, m[1])
	}
	return out
}

// For each level the console sends a key, after signing in, to a page it
// may open and offers only sections that answer it 200 (the menu is the
// authorization table's rows); what a level may do is offered.
func TestEveryMenuLinkOpens(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.tc.states["airlock-x"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Pets", Slug: "pets"}}
	c := e.console()
	c.d.Notes = noNotes{} // every part runs: a part not running is a 503, not the menu's business
	key := func(level string, roles ...string) string {
		_, secret, err := e.keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "k-" + level, Level: level, Roles: roles})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	for _, tc := range []struct {
		name, secret, home string
		want               []string
	}{
		{"guest", key("guest"), "/ui/tools", []string{"/ui/tools"}},
		{"user", e.user, "/ui/tools", []string{"/ui/tools"}},
		{"approver", key("user", "approver"), "/ui/reviews", []string{"/ui/reviews", "/ui/decided", "/ui/tools", "/ui/notifications", "/ui/gaps"}},
		{"admin", e.admin, "/ui/dashboard", []string{"/ui/dashboard", "/ui/reviews", "/ui/decided", "/ui/tools", "/ui/sources", "/ui/notifications", "/ui/gaps", "/ui/keys", "/ui/audit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.browser(c)
			w := b.signIn(tc.secret)
			if w.Code != http.StatusSeeOther || w.Header().Get("Location") != tc.home {
				t.Fatalf("sign-in sends to %d %q, want %s", w.Code, w.Header().Get("Location"), tc.home)
			}
			if w := b.do("GET", "/ui/", nil); w.Header().Get("Location") != tc.home {
				t.Fatalf("/ui/ sends to %q, want %s", w.Header().Get("Location"), tc.home)
			}
			page := b.do("GET", tc.home, nil)
			if page.Code != http.StatusOK {
				t.Fatalf("first page %s: %d\n%s", tc.home, page.Code, page.Body)
			}
			links := menuOf(t, page.Body.String())
			if strings.Join(links, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("menu %v, want %v", links, tc.want)
			}
			for _, l := range links {
				w := b.do("GET", l, nil)
				if w.Code != http.StatusOK {
					t.Errorf("menu link %s: %d\n%s", l, w.Code, w.Body)
					continue
				}
				if got := menuOf(t, w.Body.String()); strings.Join(got, " ") != strings.Join(links, " ") {
					t.Errorf("menu on %s: %v", l, got)
				}
			}
		})
	}
	signedOut := e.browser(c)
	if w := signedOut.do("GET", "/ui/", nil); w.Header().Get("Location") != "/ui/signin" {
		t.Fatalf("signed out, /ui/ sends to %q", w.Header().Get("Location"))
	}
	for _, l := range menuOf(t, signedOut.do("GET", "/ui/signin", nil).Body.String()) {
		if w := signedOut.do("GET", l, nil); w.Code != http.StatusOK {
			t.Errorf("signed out, menu link %s: %d", l, w.Code)
		}
	}
}
