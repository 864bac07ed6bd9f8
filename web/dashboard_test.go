package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
)

// The dashboard's top tools (the console's analytics) name only tools the
// signed-in key may execute: an admin without the developer role does not
// see the developer's tool another key used; an owner does.
func TestDashboardTopToolsAreTheReadersOwn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for id, perms := range map[string][]string{"deployer.deploy_app": {"role:developer"}, "currency.convert": {"public"}} {
		if _, err := e.st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO", Name: id, Category: "c",
			Status: graph.StatusActive, Permissions: perms}, Description: "D.", Embedding: e.emb.Vector(id), Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var ev []graph.UsageEvent
	for i := 0; i < 6; i++ {
		ev = append(ev, graph.UsageEvent{ToolID: "deployer.deploy_app", Query: "ship it", Success: i == 0},
			graph.UsageEvent{ToolID: "currency.convert", Query: "convert eur", Success: true})
	}
	if err := e.st.RecordUsage(ctx, ev); err != nil {
		t.Fatal(err)
	}
	_, owner, err := e.keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "olga", Level: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.console()
	for key, seesAll := range map[string]bool{e.admin: false, owner: true} {
		b := e.browser(c)
		b.signIn(key)
		w := b.do("GET", "/ui/dashboard", nil)
		body := w.Body.String()
		if w.Code != http.StatusOK || !strings.Contains(body, "currency.convert") {
			t.Fatalf("dashboard: %d\n%s", w.Code, body)
		}
		if strings.Contains(body, "deployer.deploy_app") != seesAll {
			t.Errorf("dashboard shows deployer.deploy_app = %v, want %v\n%s", !seesAll, seesAll, body)
		}
	}
}
