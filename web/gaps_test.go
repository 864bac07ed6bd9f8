package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
)

// The gaps page answers approvers 200 with the gaps (the recent runs are
// the admins' analytics, left out), and names as closest only tools the
// signed-in key may execute.
func TestGapsPageForApprovers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for id, perm := range map[string]string{"vet.pet_check": access.AnyOf([]string{"vet"}, nil), "pets.find": "public"} {
		if _, err := e.st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "FIND_PET", Name: id, Category: "pets",
			Status: graph.StatusActive, Permissions: []string{perm}}, Description: "Pets.", Embedding: e.emb.Vector(id), Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.st.RecordGap(ctx, graph.GapEvent{Verb: "CHECK_PET", At: time.Now(),
		Closest: []graph.GapCandidate{{ToolID: "vet.pet_check", Score: 0.7}}}); err != nil {
		t.Fatal(err)
	}
	c := e.console()
	_, approver, err := e.keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "vic", Level: "user", Roles: []string{"approver"}})
	if err != nil {
		t.Fatal(err)
	}
	b := e.browser(c)
	b.signIn(approver)
	w := b.do("GET", "/ui/gaps", nil)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "CHECK_PET") || strings.Contains(body, "may not do this") || strings.Contains(body, "Recent runs") {
		t.Fatalf("approver: %d\n%s", w.Code, body)
	}
	if strings.Contains(body, "vet.pet_check") {
		t.Fatalf("approver without the vet role sees the vet tool:\n%s", body)
	}
	admin := e.browser(c)
	admin.signIn(e.admin)
	if w := admin.do("GET", "/ui/gaps", nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "Recent runs") {
		t.Fatalf("admin: %d\n%s", w.Code, w.Body)
	}
	user := e.browser(c)
	user.signIn(e.user)
	if w := user.do("GET", "/ui/gaps", nil); w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "CHECK_PET") {
		t.Fatalf("user: %d\n%s", w.Code, w.Body)
	}
}
