package retrieval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api/httpx/httpxtest"
	apiretrieval "github.com/toolsmith/toolsmith/api/retrieval"
	"github.com/toolsmith/toolsmith/demo"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
	"github.com/toolsmith/toolsmith/tool"
)

var emb = retrievaltest.Words{Dim: 256}

func server(t *testing.T, ms ...tool.Manifest) (*httptest.Server, *retrieval.Service) {
	t.Helper()
	gin.SetMode(gin.TestMode)
	st := retrievaltest.Store(t, emb)
	retrievaltest.Register(t, st, emb, ms...)
	svc := retrieval.New(st, emb, retrieval.Options{})
	e := gin.New()
	e.Use(httpxtest.HeaderIdentity())
	apiretrieval.New(svc).Mount(e.Group("/api/v1"))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv, svc
}

type envelope struct {
	Status string          `json:"status"`
	Data   json.RawMessage `json:"data"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Fields  []struct {
			Path string `json:"path"`
		} `json:"fields"`
	} `json:"error"`
}

func do(t *testing.T, srv *httptest.Server, method, path string, headers map[string]string, body any) (int, envelope) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, srv.URL+path, rd)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("%s %s: decode: %v", method, path, err)
	}
	return resp.StatusCode, env
}

type searchData struct {
	LightweightIndex []struct {
		ToolID string `json:"toolId"`
	} `json:"lightweightIndex"`
	DetailedTools []struct {
		ToolID string `json:"toolId"`
	} `json:"detailedTools"`
	Ranked []struct {
		Tool struct {
			ID string `json:"toolId"`
		} `json:"tool"`
		Breakdown map[string]map[string]float64 `json:"breakdown"`
	} `json:"ranked"`
	Entities []struct {
		Key  string `json:"key"`
		Type string `json:"type"`
	} `json:"entities"`
	Metadata map[string]any             `json:"metadata"`
	Context  string                     `json:"context"`
	Tools    []retrieval.OpenAIFunction `json:"tools"`
}

func (d searchData) all() []string {
	var out []string
	for _, x := range d.LightweightIndex {
		out = append(out, x.ToolID)
	}
	for _, x := range d.DetailedTools {
		out = append(out, x.ToolID)
	}
	for _, x := range d.Ranked {
		out = append(out, x.Tool.ID)
	}
	return out
}

func search(t *testing.T, srv *httptest.Server, params url.Values, headers map[string]string) searchData {
	t.Helper()
	code, env := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/search?"+params.Encode(), headers, nil)
	if code != http.StatusOK {
		t.Fatalf("search %v: %d %+v", params, code, env.Error)
	}
	var d searchData
	if err := json.Unmarshal(env.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The reservation disambiguation (for one verb, the entity in the context
// picks which reservation tool ranks first), through the API.
func TestReservationDisambiguationThroughAPI(t *testing.T) {
	srv, _ := server(t, retrievaltest.Reservation()...)
	tests := []struct{ context, want, entityType string }{
		{"Southwest flight 175 to Denver", "airline.book_seat", "Airline"},
		{"dinner for two at 8pm", "restaurant.reserve_table", "Venue"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			d := search(t, srv, url.Values{"q": {"MAKE_RESERVATION"}, "context": {tc.context}}, nil)
			if len(d.Ranked) == 0 || d.Ranked[0].Tool.ID != tc.want {
				t.Fatalf("ranked %v, want %s first", d.all(), tc.want)
			}
			if len(d.DetailedTools) == 0 || d.DetailedTools[0].ToolID != tc.want {
				t.Fatalf("detailed tools do not lead with %s", tc.want)
			}
			ok := false
			for _, e := range d.Entities {
				ok = ok || e.Type == tc.entityType
			}
			if !ok {
				t.Fatalf("entities %+v lack a %s", d.Entities, tc.entityType)
			}
		})
	}
	// Without context the two tools are indistinguishable by text: the
	// graph signal is what decides above.
	d := search(t, srv, url.Values{"q": {"MAKE_RESERVATION"}}, nil)
	if len(d.Entities) != 0 {
		t.Fatalf("entities found without context: %+v", d.Entities)
	}
}

func TestSearchFormatsAndParams(t *testing.T) {
	srv, _ := server(t, retrievaltest.Reservation()...)
	d := search(t, srv, url.Values{"q": {"book a seat"}, "format": {"markdown"}}, nil)
	if !strings.HasPrefix(d.Context, "# Available Tools (Lightweight Index)") || d.Metadata["cacheHit"] != false {
		t.Fatalf("markdown context %q, metadata %v", d.Context, d.Metadata)
	}
	d = search(t, srv, url.Values{"q": {"book a seat"}, "format": {"openai"}}, nil)
	if len(d.Tools) == 0 || d.Tools[0].Type != "function" {
		t.Fatalf("openai tools %+v", d.Tools)
	}
	d = search(t, srv, url.Values{"q": {"book a seat"}, "format": {"openai"}}, nil)
	if d.Metadata["cacheHit"] != true {
		t.Fatalf("repeat search missed the cache: %v", d.Metadata)
	}
	bad := []struct{ query, field string }{
		{"", "q"},
		{"q=x&maxTools=21", "maxTools"},
		{"q=x&maxTools=abc", "maxTools"},
		{"q=x&strategy=nope", "strategy"},
		{"q=x&phase=nope", "phase"},
		{"q=x&format=xml", "format"},
		{"q=x&includeExamples=maybe", "includeExamples"},
		{"q=x&strategy=category", "category"},
	}
	for _, b := range bad {
		code, env := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/search?"+b.query, nil, nil)
		if code != http.StatusBadRequest || env.Error == nil || len(env.Error.Fields) == 0 || env.Error.Fields[0].Path != b.field {
			t.Fatalf("%q: %d %+v, want 400 naming %s", b.query, code, env.Error, b.field)
		}
	}
	code, env := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/related/airline.book_seat?maxResults=11", nil, nil)
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "maxResults" {
		t.Fatalf("maxResults=11: %d %+v", code, env.Error)
	}
	code, env = do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/related/airline.book_seat?relationshipType=friends", nil, nil)
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "relationshipType" {
		t.Fatalf("relationshipType: %d %+v", code, env.Error)
	}
}

func TestBestEventsAndSessionStrategy(t *testing.T) {
	srv, svc := server(t, retrievaltest.Reservation()...)
	code, env := do(t, srv, http.MethodPost, "/api/v1/tools/search", nil, map[string]string{"queryText": "look up flight status"})
	if code != http.StatusOK {
		t.Fatalf("best: %d %+v", code, env.Error)
	}
	// The shape of one ranked search hit, plus the distance.
	var best struct {
		Tool struct {
			ID string `json:"toolId"`
		} `json:"tool"`
		Score     *float64       `json:"score"`
		Breakdown map[string]any `json:"breakdown"`
		Distance  float64        `json:"distance"`
	}
	_ = json.Unmarshal(env.Data, &best)
	if best.Tool.ID != "airline.flight_status" || best.Score == nil || len(best.Breakdown) == 0 || best.Distance <= 0 || best.Distance >= 1 {
		t.Fatalf("best = %+v", best)
	}
	if code, env := do(t, srv, http.MethodPost, "/api/v1/tools/search", nil, map[string]string{}); code != http.StatusBadRequest || env.Error.Fields[0].Path != "queryText" {
		t.Fatalf("empty queryText: %d", code)
	}
	if code, env := do(t, srv, http.MethodPost, "/api/v1/tools/search", nil, map[string]string{"queryText": strings.Repeat("long ", retrieval.MaxQueryBytes/5+1)}); code != http.StatusBadRequest || env.Error.Fields[0].Path != "queryText" {
		t.Fatalf("a queryText over %d bytes: %d", retrieval.MaxQueryBytes, code)
	}
	if code, env := do(t, srv, http.MethodPost, "/api/v1/tools/search", nil, map[string]string{"queryText": "look up\x00flight"}); code != http.StatusBadRequest || env.Error.Fields[0].Path != "queryText" {
		t.Fatalf("a queryText with NUL: %d", code)
	}
	// Bytes that are not UTF-8 are refused as GET's q=%ff is, not searched
	// as U+FFFD.
	if code, env := do(t, srv, http.MethodPost, "/api/v1/tools/search", nil, json.RawMessage("{\"queryText\":\"flight \xff\xfe status\"}")); code != http.StatusBadRequest || env.Error.Fields[0].Path != "queryText" {
		t.Fatalf("a queryText that is not UTF-8: %d %+v", code, env.Error)
	}
	if code, env := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/search?q=a%00b", nil, nil); code != http.StatusBadRequest || env.Error.Fields[0].Path != "q" {
		t.Fatalf("a q with NUL: %d", code)
	}
	// Tab and newline stay allowed, as in every other text Toolsmith takes.
	if code, env := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/search?q=flight%09status%0Anow", nil, nil); code != http.StatusOK {
		t.Fatalf("a q with tab and newline: %d %+v", code, env.Error)
	}

	// u1 ran the tool through Toolsmith (outside the session), so its
	// report of that use in the session is learned.
	if err := svc.RecordUsage(context.Background(), []graph.UsageEvent{{ToolID: "restaurant.reserve_table", UserID: "u1", Success: true, Origin: graph.OriginObserved}}); err != nil {
		t.Fatal(err)
	}
	h := map[string]string{"X-Session-ID": "s1", "X-Test-User": "u1"}
	code, env = do(t, srv, http.MethodPost, "/api/v1/sessions/s1/events", h, map[string]any{"events": []map[string]any{{"toolId": "restaurant.reserve_table", "query": "make a reservation", "success": true}}})
	if code != http.StatusAccepted {
		t.Fatalf("session events: %d %+v", code, env.Error)
	}
	d := search(t, srv, url.Values{"q": {"make a reservation"}, "strategy": {"session"}}, h)
	if len(d.Ranked) == 0 || d.Ranked[0].Tool.ID != "restaurant.reserve_table" || d.Ranked[0].Breakdown["history"]["norm"] != 1 {
		t.Fatalf("session strategy ranked %v", d.all())
	}
	user := map[string]string{"X-Test-User": "u2", "X-Test-Level": "user"}
	code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", user, map[string]any{"events": []map[string]any{{"toolId": "ghost", "success": true}}})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("unknown tool in batch: %d %+v", code, env.Error)
	}
	code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", user, map[string]any{"events": []map[string]any{{"toolId": "airline.book_seat", "sessionId": "s2", "query": "fly", "success": true, "bogus": 1}}})
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "events[0].bogus" {
		t.Fatalf("unknown field: %d %+v", code, env.Error)
	}
	// A wrong type in a field of the embedded event is named by its JSON
	// path, not "events.Event.latencyMs".
	code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", user, map[string]any{"events": []map[string]any{{"toolId": "airline.book_seat", "success": true, "latencyMs": 1e300}}})
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "events[0].latencyMs" {
		t.Fatalf("latencyMs 1e300: %d %+v", code, env.Error)
	}
	// success must be said: a missing one is not read as a failure.
	code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", user, map[string]any{"events": []map[string]any{{"toolId": "airline.book_seat", "success": true}, {"toolId": "airline.book_seat", "query": "fly"}}})
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "events[1].success" {
		t.Fatalf("no success: %d %+v", code, env.Error)
	}
	code, env = do(t, srv, http.MethodPost, "/api/v1/sessions/s1/events", user, map[string]any{"events": []map[string]any{{"toolId": "airline.book_seat", "success": true, "sessionId": "s9"}}})
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "events[0].sessionId" {
		t.Fatalf("another session: %d %+v", code, env.Error)
	}
	code, _ = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", user, map[string]any{"events": []map[string]any{{"toolId": "airline.book_seat", "sessionId": "s2", "query": "fly", "success": true}}})
	if code != http.StatusAccepted {
		t.Fatalf("batch: %d", code)
	}
}

// TestEventsAreAUsersOwnBoundedUse: a guest's reported uses teach
// nothing (403), a non-admin records at most retrieval.MaxCallerEvents a
// call (an admin imports more), and an event dated more than a minute
// ahead, before the report window (a user's) or before 2000 (an admin's
// import) is refused naming its field.
func TestEventsAreAUsersOwnBoundedUse(t *testing.T) {
	srv, _ := server(t, retrievaltest.Reservation()...)
	ev := map[string]any{"toolId": "airline.book_seat", "query": "fly", "success": true}
	code, env := do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", map[string]string{"X-Test-User": "g", "X-Test-Level": "guest"}, map[string]any{"events": []any{ev}})
	if code != http.StatusForbidden || !strings.Contains(env.Error.Message, "level user") {
		t.Fatalf("a guest's events: %d %+v", code, env.Error)
	}
	many := make([]any, retrieval.MaxCallerEvents+1)
	for i := range many {
		many[i] = ev
	}
	user := map[string]string{"X-Test-User": "u", "X-Test-Level": "user"}
	code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", user, map[string]any{"events": many})
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "events" {
		t.Fatalf("%d events from a user: %d %+v", len(many), code, env.Error)
	}
	code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", map[string]string{"X-Test-User": "a", "X-Test-Level": "admin"}, map[string]any{"events": many})
	if code != http.StatusAccepted {
		t.Fatalf("%d events from an admin: %d %+v", len(many), code, env.Error)
	}
	future := map[string]any{"toolId": "airline.book_seat", "query": "fly", "success": true, "at": time.Now().Add(24 * time.Hour).Format(time.RFC3339)}
	code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", user, map[string]any{"events": []any{ev, future}})
	if code != http.StatusUnprocessableEntity || len(env.Error.Fields) != 1 || env.Error.Fields[0].Path != "events[1].at" {
		t.Fatalf("an event dated tomorrow: %d %+v", code, env.Error)
	}
	// An event's time is within the window a report can have: a user's
	// within the report window (no older run can back it), an admin's
	// import from 2000 on; neither more than a minute ahead.
	admin := map[string]string{"X-Test-User": "a", "X-Test-Level": "admin"}
	at := func(when time.Time) map[string]any {
		return map[string]any{"toolId": "airline.book_seat", "query": "fly", "success": true, "at": when.Format(time.RFC3339)}
	}
	epoch := time.Unix(0, 0).UTC()
	for _, tc := range []struct {
		who  map[string]string
		when time.Time
		ok   bool
	}{
		{user, epoch, false},
		{user, time.Now().Add(-retrieval.ReportWindow - time.Hour), false},
		{user, time.Now().Add(2 * time.Minute), false},
		{user, time.Now().Add(-retrieval.ReportWindow + time.Hour), true},
		{admin, epoch, false},
		{admin, time.Date(1999, 12, 31, 23, 0, 0, 0, time.UTC), false},
		{admin, time.Now().Add(2 * time.Minute), false},
		{admin, time.Date(2001, 3, 1, 0, 0, 0, 0, time.UTC), true},
		{admin, time.Now().Add(-retrieval.ReportWindow - time.Hour), true},
	} {
		code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", tc.who, map[string]any{"events": []any{ev, at(tc.when)}})
		if tc.ok && code != http.StatusAccepted {
			t.Fatalf("an event of %s at %s: %d %+v, want 202", tc.who["X-Test-Level"], tc.when, code, env.Error)
		}
		if !tc.ok && (code != http.StatusUnprocessableEntity || len(env.Error.Fields) != 1 || env.Error.Fields[0].Path != "events[1].at") {
			t.Fatalf("an event of %s at %s: %d %+v, want 422 naming events[1].at", tc.who["X-Test-Level"], tc.when, code, env.Error)
		}
	}
	// Free text is bounded and printable: a query as a search's q, ids to
	// a sane size; the session route applies the same domain check.
	for _, tc := range []struct {
		field string
		value string
		path  string
	}{
		{"query", strings.Repeat("q", retrieval.MaxQueryBytes+1), "events[1].query"},
		{"query", "fly\x1b[2J", "events[1].query"},
		{"sessionId", strings.Repeat("s", 100<<10), "events[1].sessionId"},
		{"sessionId", "s\x00", "events[1].sessionId"},
		{"toolId", strings.Repeat("t", retrieval.MaxEventIDBytes+1), "events[1].toolId"},
	} {
		bad := map[string]any{"toolId": "airline.book_seat", "query": "fly", "success": true}
		bad[tc.field] = tc.value
		for _, who := range []map[string]string{user, {"X-Test-User": "a", "X-Test-Level": "admin"}} {
			code, env = do(t, srv, http.MethodPost, "/api/v1/tools/usage/batch", who, map[string]any{"events": []any{ev, bad}})
			if code != http.StatusBadRequest || len(env.Error.Fields) != 1 || env.Error.Fields[0].Path != tc.path {
				t.Fatalf("%s of %d bytes (%s): %d %+v, want 400 naming %s", tc.field, len(tc.value), who["X-Test-Level"], code, env.Error, tc.path)
			}
		}
	}
	code, env = do(t, srv, http.MethodPost, "/api/v1/sessions/s1/events", user, map[string]any{"events": []any{
		map[string]any{"toolId": "airline.book_seat", "query": strings.Repeat("q", retrieval.MaxQueryBytes+1), "success": true}}})
	if code != http.StatusBadRequest || len(env.Error.Fields) != 1 || env.Error.Fields[0].Path != "events[0].query" {
		t.Fatalf("a session event with a long query: %d %+v", code, env.Error)
	}
}

func TestCacheInvalidateEndpoint(t *testing.T) {
	srv, _ := server(t, retrievaltest.Reservation()...)
	admin := map[string]string{"X-Test-Level": "admin"}
	search(t, srv, url.Values{"q": {"book"}}, nil)
	// Who may invalidate is the authorization table's business (api.Rules,
	// tested in package api); this handler only does the work.
	code, env := do(t, srv, http.MethodDelete, "/api/v1/tools/admin/cache/invalidate", admin, map[string]string{"scope": "tool", "toolId": "airline.book_seat"})
	var r struct{ Invalidated int }
	_ = json.Unmarshal(env.Data, &r)
	if code != http.StatusOK || r.Invalidated != 1 {
		t.Fatalf("invalidate tool: %d %s", code, env.Data)
	}
	if d := search(t, srv, url.Values{"q": {"book"}}, nil); d.Metadata["cacheHit"] != false {
		t.Fatal("entry survived invalidation")
	}
	code, env = do(t, srv, http.MethodDelete, "/api/v1/tools/admin/cache/invalidate", admin, map[string]string{"scope": "user"})
	if code != http.StatusBadRequest || env.Error.Fields[0].Path != "userId" {
		t.Fatalf("user scope without userId: %d %+v", code, env.Error)
	}
}

// visibilityCatalogue has one public tool and one tool hidden by each
// filter dimension; every tool mentions "ledger report" and the public one
// relates to all the others by every relationship kind.
func visibilityCatalogue() []tool.Manifest {
	mk := func(id string) tool.Manifest {
		return retrievaltest.Manifest(id, "PRODUCE_REPORT", "fin", "Produce a ledger report: "+strings.ReplaceAll(id, ".", " ")+".")
	}
	pub := mk("vis.public")
	auth := mk("hid.auth")
	auth.PermissionsRequired = []string{"authenticated"}
	role := mk("hid.role")
	role.PermissionsRequired = []string{"role:auditor"}
	perm := mk("hid.perm")
	perm.PermissionsRequired = []string{"permission:ledger.write"}
	level := mk("hid.level")
	level.RequiredPermission = tool.LevelAdmin
	module := mk("hid.module")
	module.Module = "billing"
	group := mk("hid.group")
	group.Groups = []string{"finance"}
	state := mk("hid.state")
	state.AvailableInStates = []string{"checkout"}
	hidden := []string{"hid.auth", "hid.role", "hid.perm", "hid.level", "hid.module", "hid.group", "hid.state"}
	pub.Relationships = &tool.Relationships{Dependencies: hidden, Alternatives: hidden}
	for _, h := range hidden {
		pub.Relationships.Pairings = append(pub.Relationships.Pairings, tool.Pairing{ToolID: h, Score: 0.9})
	}
	return []tool.Manifest{pub, auth, role, perm, level, module, group, state}
}

func TestInvisibleToolsNeverAppear(t *testing.T) {
	srv, _ := server(t, visibilityCatalogue()...)
	cases := []struct {
		name    string
		hidden  string
		deny    map[string]string // headers of a caller that must not see it
		allow   map[string]string // headers of a caller that must see it (control)
		allGone bool              // the deny caller sees no tool at all
	}{
		{"permission authenticated", "hid.auth", nil, map[string]string{"X-Test-User": "u"}, false},
		{"permission role", "hid.role", map[string]string{"X-Test-Roles": "clerk"}, map[string]string{"X-Test-Roles": "clerk,auditor"}, false},
		{"permission permission", "hid.perm", map[string]string{"X-Test-Permissions": "ledger.read"}, map[string]string{"X-Test-Permissions": "ledger.write"}, false},
		{"level", "hid.level", map[string]string{"X-Test-Level": "user"}, map[string]string{"X-Test-Level": "owner"}, false},
		// vis.public names no module: its namespace (vis) is its module.
		{"allowed modules", "hid.module", map[string]string{"X-Allowed-Modules": "crm,vis"}, map[string]string{"X-Allowed-Modules": "crm,billing,vis"}, false},
		{"group default", "hid.group", nil, map[string]string{"X-Tool-Groups": "finance"}, false},
		{"group named", "hid.group", map[string]string{"X-Tool-Groups": "default,ops"}, map[string]string{"X-Tool-Groups": "*"}, false},
		{"group empty list", "hid.group", map[string]string{"X-Tool-Groups": ""}, map[string]string{"X-Tool-Groups": "default,finance"}, true},
		{"state", "hid.state", map[string]string{"X-Agent-State": "browsing"}, map[string]string{"X-Agent-State": "checkout"}, false},
	}
	strategies := []url.Values{
		{"strategy": {"hybrid"}}, {"strategy": {"semantic"}}, {"strategy": {"keyword"}},
		{"strategy": {"category"}, "category": {"fin"}}, {"strategy": {"session"}},
	}
	phases := []string{"", "initial_planning", "tool_selection", "execution_prep", "error_recovery"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			deny := map[string]string{"X-Session-ID": "vis"}
			for k, v := range tc.deny {
				deny[k] = v
			}
			for _, sv := range strategies {
				for _, ph := range phases {
					p := url.Values{"q": {"ledger report"}, "maxTools": {"20"}, "phase": {ph}}
					for k, v := range sv {
						p[k] = v
					}
					d := search(t, srv, p, deny)
					if slices.Contains(d.all(), tc.hidden) {
						t.Fatalf("%v phase %q: %s visible to the denied caller", sv, ph, tc.hidden)
					}
					if tc.allGone && len(d.all()) != 0 {
						t.Fatalf("empty group list still sees %v", d.all())
					}
					if total := d.Metadata["totalToolsAvailable"].(float64); tc.allGone && total != 0 {
						t.Fatalf("total = %v", total)
					}
				}
			}
			if code, _ := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/manifest/"+tc.hidden, deny, nil); code != http.StatusNotFound {
				t.Fatalf("manifest of hidden tool: %d, want 404", code)
			}
			for _, kind := range []string{"dependencies", "pairings", "alternatives"} {
				code, env := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/related/vis.public?maxResults=10&relationshipType="+kind, deny, nil)
				if tc.allGone {
					if code != http.StatusNotFound {
						t.Fatalf("related for a caller seeing nothing: %d", code)
					}
					continue
				}
				if code != http.StatusOK || strings.Contains(string(env.Data), tc.hidden) {
					t.Fatalf("related %s: %d %s", kind, code, env.Data)
				}
				if code, _ := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/related/"+tc.hidden+"?relationshipType="+kind, deny, nil); code != http.StatusNotFound {
					t.Fatalf("related of hidden tool: %d, want 404", code)
				}
			}
			code, env := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/manifest/vis.public", deny, nil)
			if !tc.allGone && (code != http.StatusOK || strings.Contains(string(env.Data), tc.hidden)) {
				t.Fatalf("public manifest leaks %s: %d %s", tc.hidden, code, env.Data)
			}
			if code, _ := do(t, srv, http.MethodPost, "/api/v1/tools/search", deny, map[string]string{"queryText": "ledger report " + tc.hidden}); code == http.StatusOK && tc.allGone {
				t.Fatal("best match for a caller seeing nothing")
			}

			// Control: a caller allowed by this dimension does see the tool,
			// so the assertions above can fail.
			allow := map[string]string{}
			for k, v := range tc.allow {
				allow[k] = v
			}
			d := search(t, srv, url.Values{"q": {"ledger report"}, "maxTools": {"20"}}, allow)
			if !slices.Contains(d.all(), tc.hidden) {
				t.Fatalf("allowed caller does not see %s: %v", tc.hidden, d.all())
			}
			if code, _ := do(t, srv, http.MethodGet, "/api/v1/tools/retrieval/manifest/"+tc.hidden, allow, nil); code != http.StatusOK {
				t.Fatalf("allowed caller: manifest %d", code)
			}
		})
	}
}

// The same disambiguation over the whole demo catalogue (about a hundred
// tools, several MAKE_RESERVATION ones), through the API.
func TestReservationDisambiguationDemoCatalogue(t *testing.T) {
	ms, err := demo.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := server(t, ms...)
	tests := []struct{ context, want string }{
		{"Southwest flight 175 to Denver", "airline.book_seat"},
		{"dinner for two at 8pm", "restaurant.reserve_table"},
	}
	for _, tc := range tests {
		d := search(t, srv, url.Values{"q": {"MAKE_RESERVATION"}, "context": {tc.context}}, map[string]string{"X-Tool-Groups": "*", "X-Test-User": "u", "X-Test-Level": "owner"})
		if len(d.Ranked) == 0 || d.Ranked[0].Tool.ID != tc.want {
			t.Fatalf("%q: ranked %v, want %s first", tc.context, d.all(), tc.want)
		}
		if len(d.Entities) == 0 {
			t.Fatalf("%q: no entities found", tc.context)
		}
	}
}

// broadcasts records what the route hands to the other replicas.
type broadcasts struct {
	got []retrieval.InvalidateRequest
	err error
}

func (b *broadcasts) Broadcast(_ context.Context, r retrieval.InvalidateRequest) error {
	b.got = append(b.got, r)
	return b.err
}

// TestCacheInvalidateBroadcasts: a valid invalidation is handed to the
// other replicas after it cleared this one's cache; a refused one is not;
// a failed hand-over is a 503 that says the others were not told.
func TestCacheInvalidateBroadcasts(t *testing.T) {
	gin.SetMode(gin.TestMode)
	st := retrievaltest.Store(t, emb)
	retrievaltest.Register(t, st, emb, retrievaltest.Reservation()...)
	svc := retrieval.New(st, emb, retrieval.Options{})
	b := &broadcasts{}
	e := gin.New()
	e.Use(httpxtest.HeaderIdentity())
	apiretrieval.New(svc).WithBroadcast(b).Mount(e.Group("/api/v1"))
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	admin := map[string]string{"X-Test-Level": "admin"}
	const route = "/api/v1/tools/admin/cache/invalidate"
	if code, env := do(t, srv, http.MethodDelete, route, admin, map[string]string{"scope": "tool", "toolId": "airline.book_seat"}); code != http.StatusOK {
		t.Fatalf("invalidate: %d %+v", code, env.Error)
	}
	if len(b.got) != 1 || b.got[0].Scope != retrieval.ScopeTool || b.got[0].ToolID != "airline.book_seat" {
		t.Fatalf("broadcast %+v", b.got)
	}
	if code, _ := do(t, srv, http.MethodDelete, route, admin, map[string]string{"scope": "nope"}); code != http.StatusBadRequest || len(b.got) != 1 {
		t.Fatalf("a bad scope: %d, broadcasts %+v", code, b.got)
	}
	b.err = errors.New("store down")
	code, env := do(t, srv, http.MethodDelete, route, admin, map[string]string{"scope": "all"})
	if code != http.StatusServiceUnavailable || !strings.Contains(env.Error.Message, "this replica only") {
		t.Fatalf("a failed broadcast: %d %+v", code, env.Error)
	}
}
