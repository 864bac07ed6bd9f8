package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/tool"
)

// TestNoReadPathShowsWhatExecuteRefuses is a property test: over random
// tools (permissions incl. approval policies' any:role:…|user:…, levels,
// groups, modules, agent states) and random callers (keys plus narrowing
// headers), no read path returns a tool that the execute path's rule
// (access.Caller.Reason on the narrowed caller) would refuse.
func TestNoReadPathShowsWhatExecuteRefuses(t *testing.T) {
	srv, keys, st := fullServer(t)
	h := srv.Handler()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 2026))
	emb := hashing.New(64)
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	some := func(xs ...string) []string {
		var out []string
		for _, x := range xs {
			if r.IntN(3) == 0 {
				out = append(out, x)
			}
		}
		return out
	}
	const nTools = 60
	tools := map[string]graph.ToolSummary{}
	for i := 0; i < nTools; i++ {
		id := fmt.Sprintf("pt%02d.book_trip", i)
		perms := []string{pick("public", "authenticated", "role:vet", "permission:pay", "any:role:vet|user:ana", "any:role:pilot", "public")}
		sum := graph.ToolSummary{
			ID: id, Verb: "BOOK_TRIP", Name: "Book trip " + id, ShortDescription: "book a trip with flights and hotels",
			Category: "travel", Status: graph.StatusActive, Permissions: perms,
			RequiredLevel: pick("", "guest", "user", "admin"),
			Groups:        []string{pick("default", "default", "travel", "finance")},
			Module:        pick("", "airline", "hotel"),
		}
		if r.IntN(4) == 0 {
			sum.AvailableInStates = []string{pick("planning", "booking")}
		}
		next := fmt.Sprintf("pt%02d.book_trip", (i+1)%nTools)
		manifest, _ := json.Marshal(tool.Manifest{ToolID: id, Relationships: &tool.Relationships{
			Dependencies: []string{next}, Pairings: []tool.Pairing{{ToolID: next, Score: 0.5}}}})
		vec, _ := emb.EmbedQuery(ctx, "book a trip with flights and hotels "+id)
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: sum, Description: "Book a trip: flights and hotels.", Embedding: vec, Manifest: manifest,
			Relations: []graph.Relation{{Kind: graph.RelPairsWith, Target: next, Score: 0.5}, {Kind: graph.RelDependsOn, Target: next}}}); err != nil {
			t.Fatalf("upsert %s: %v", id, err)
		}
		tools[id] = sum
	}

	seen, hidden := 0, 0
	for c := 0; c < 40; c++ {
		nk := identity.NewKey{
			Owner: pick("ana", "bob", "cy"), Level: pick("guest", "user", "user", "admin"),
			Roles: some("vet", "pilot", "approver"), Permissions: some("pay", "tools:write"),
		}
		switch r.IntN(3) {
		case 0:
			nk.Groups = []string{"*"}
		case 1:
			nk.Groups = some("default", "travel", "finance")
			if nk.Groups == nil {
				nk.Groups = []string{"travel"}
			}
		}
		if r.IntN(3) == 0 {
			nk.Modules = some("airline", "hotel")
			if nk.Modules == nil {
				nk.Modules = []string{}
			}
		}
		k, secret, err := keys.Create(ctx, identity.Principal{}, nk)
		if err != nil {
			t.Fatalf("create key %+v: %v", nk, err)
		}
		hdr := http.Header{"Authorization": {"Bearer " + secret}}
		if r.IntN(2) == 0 {
			hdr.Set(identity.HeaderGroups, strings.Join(some("default", "travel", "finance"), ","))
		}
		if r.IntN(2) == 0 {
			hdr.Set("X-Agent-State", pick("planning", "booking"))
		}
		caller, err := identity.Narrow(identity.KeyPrincipal(k), hdr)
		if err != nil {
			continue // a refused narrowing answers 403 everywhere; nothing to compare
		}
		refused := map[string]bool{}
		for id, sum := range tools {
			if caller.Reason(&sum) != "" {
				refused[id] = true
				hidden++
			}
		}
		probe := "pt00.book_trip"
		for id := range tools {
			if !refused[id] {
				probe = id
				break
			}
		}
		paths := []struct{ method, path, body string }{
			{"GET", "/api/v1/tools?limit=1000", ""},
			{"GET", "/api/v1/tools?limit=1000&sort=uses", ""},
			{"GET", "/api/v1/tools/retrieval/search?maxTools=20&q=" + url.QueryEscape("book a trip"), ""},
			{"GET", "/api/v1/tools/retrieval/search?maxTools=20&format=openai&q=" + url.QueryEscape("book a trip"), ""},
			{"GET", "/api/v1/tools/retrieval/search?maxTools=20&format=markdown&q=" + url.QueryEscape("book a trip"), ""},
			{"POST", "/api/v1/tools/search", `{"query":"book a trip","limit":50}`},
			{"GET", "/api/v1/tools/retrieval/related/" + probe + "?relationshipType=pairings", ""},
			{"GET", "/api/v1/tools/retrieval/related/" + probe, ""},
		}
		for id := range tools {
			paths = append(paths,
				struct{ method, path, body string }{"GET", "/api/v1/tools/" + id, ""},
				struct{ method, path, body string }{"GET", "/api/v1/tools/" + id + "/history", ""},
				struct{ method, path, body string }{"GET", "/api/v1/tools/retrieval/manifest/" + id, ""})
		}
		for _, p := range paths {
			req := httptest.NewRequest(p.method, p.path, strings.NewReader(p.body))
			req.Header = hdr.Clone()
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := rec.Body.String()
			for id := range tools {
				shown := strings.Contains(body, `"`+id+`"`) || strings.Contains(body, `"`+tool.FunctionName(id)+`"`)
				if !shown {
					continue
				}
				if refused[id] {
					t.Errorf("caller %+v (%s %s) sees %s, which execute refuses (%s)", caller, p.method, p.path, id, caller.Reason(ptr(tools[id])))
				} else {
					seen++
				}
			}
		}
	}
	if seen == 0 || hidden == 0 {
		t.Fatalf("vacuous run: %d visible sightings, %d hidden pairs", seen, hidden)
	}
	t.Logf("%d visible sightings checked; %d (caller, tool) pairs hidden", seen, hidden)
}

func ptr[T any](v T) *T { return &v }
