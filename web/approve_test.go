package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/workflows"
)

// The approve dialog refuses a role the tools' requirement could not
// carry (the review service's check, as REST's), naming the field, and
// sends no decision: the review stays pending.
func TestApproveDialogRefusesABadRole(t *testing.T) {
	b, e := newBrowser(t)
	e.tc.states["airlock-x"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Pets", Slug: "pets",
		Operations: []workflows.ReviewOperation{{Name: "list", Method: "GET", Path: "/pets"}}}}
	b.signIn(e.admin)
	got := b.submit("/ui/reviews/airlock-x/approve", url.Values{"csrf": {b.formToken("/ui/reviews/airlock-x")}, "allowedRoles": {"vet\x1b"},
		"operations": {"list"}, "operationsShown": {"1"}}).Body.String()
	if !strings.Contains(got, "allowedRoles[0]") {
		t.Fatalf("the page does not name the bad role:\n%s", got)
	}
	if called := e.tc.called(); len(called) != 0 {
		t.Fatalf("a refused approval was sent: %v", called)
	}
}
