package airlock

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/api/httpx/httpxtest"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

type jsonValue struct{ v any }

func (j jsonValue) HasValue() bool { return j.v != nil }
func (j jsonValue) Get(ptr any) error {
	b, _ := json.Marshal(j.v)
	return json.Unmarshal(b, ptr)
}

type fakeRun struct {
	id   string
	scan *workflows.ScanOutput
}

func (r fakeRun) GetID() string                  { return r.id }
func (r fakeRun) GetRunID() string               { return "run-" + r.id }
func (r fakeRun) GetFirstExecutionRunID() string { return "run-" + r.id }
func (r fakeRun) Get(ctx context.Context, ptr any) error {
	if out, ok := ptr.(*workflows.ScanOutput); ok && r.scan != nil {
		*out = *r.scan
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}
func (r fakeRun) GetWithOptions(ctx context.Context, ptr any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, ptr)
}

type fakeTemporal struct {
	started  []string
	signals  []string
	states   map[string]workflows.AirlockState
	lastSent any
	decided  map[string]bool
	// scan is what a scan run returns (nil: it never ends).
	scan *workflows.ScanOutput
}

func (f *fakeTemporal) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	f.started = append(f.started, opts.ID)
	return fakeRun{opts.ID, f.scan}, nil
}
func (f *fakeTemporal) SignalWorkflow(_ context.Context, id, _, name string, arg any) error {
	f.signals = append(f.signals, id+":"+name)
	f.lastSent = arg
	return nil
}

// UpdateWorkflow answers a decision as the review does: the first one is
// recorded, any later one is refused as already decided.
func (f *fakeTemporal) UpdateWorkflow(_ context.Context, opts client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	d := opts.Args[0].(workflows.Decision)
	if f.decided == nil {
		f.decided = map[string]bool{}
	}
	if f.decided[opts.WorkflowID] {
		return nil, temporal.NewApplicationError("airlock: the review is rejected, not pending", workflows.ErrTypeReviewDecided)
	}
	f.decided[opts.WorkflowID] = true
	name := workflows.SignalApprove
	f.lastSent = d.Approve
	if d.Reject != nil {
		name, f.lastSent = workflows.SignalReject, d.Reject
	}
	f.signals = append(f.signals, opts.WorkflowID+":"+name)
	return fakeUpdate{}, nil
}

type fakeUpdate struct{}

func (fakeUpdate) WorkflowID() string             { return "" }
func (fakeUpdate) RunID() string                  { return "" }
func (fakeUpdate) UpdateID() string               { return "" }
func (fakeUpdate) Get(context.Context, any) error { return nil }

func (f *fakeTemporal) QueryWorkflow(_ context.Context, id, _, _ string, _ ...any) (converter.EncodedValue, error) {
	st, ok := f.states[id]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	return jsonValue{st}, nil
}

// ListWorkflow lists every review the fake holds as running.
func (f *fakeTemporal) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	out := &workflowservice.ListWorkflowExecutionsResponse{}
	for id := range f.states {
		out.Executions = append(out.Executions, &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: id}})
	}
	return out, nil
}
func (f *fakeTemporal) GetWorkflow(_ context.Context, id, _ string) client.WorkflowRun {
	return fakeRun{id: id}
}

func setup(t *testing.T) (*gin.Engine, *fakeTemporal, *sqlite.Store) {
	t.Helper()
	gin.SetMode(gin.TestMode)
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ft := &fakeTemporal{states: map[string]workflows.AirlockState{}}
	r := gin.New()
	r.Use(httpxtest.HeaderIdentity())
	New(review.New(ft, s, review.Config{})).Mount(r.Group("/api/v1"))
	return r, ft, s
}

func do(r http.Handler, method, path, body string) (int, map[string]any) {
	return doAs(r, "", method, path, body)
}

// doAs is do by ana at a level ("" for the default, user).
func doAs(r http.Handler, level, method, path, body string) (int, map[string]any) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-User", "ana")
	if level != "" {
		req.Header.Set(httpxtest.HeaderLevel, level)
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out
}

func fieldPath(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	fs, _ := e["fields"].([]any)
	if len(fs) == 0 {
		return ""
	}
	return fs[0].(map[string]any)["path"].(string)
}

func TestSources(t *testing.T) {
	r, ft, s := setup(t)
	// The first scan's outcome comes back with the new source.
	ft.scan = &workflows.ScanOutput{Reports: []workflows.ScanReport{{SourceID: "x", Error: "fetch https://specs.example/pets.yaml: 404 Not Found"}}}
	code, out := do(r, "POST", "/api/v1/tools/sources", `{"type":"openapi","location":"https://specs.example/pets.yaml"}`)
	if code != 201 || len(ft.started) != 1 || !strings.HasPrefix(ft.started[0], "scan-src-") {
		t.Fatalf("add: %d %v started=%v", code, out, ft.started)
	}
	scan, _ := out["data"].(map[string]any)["scan"].(map[string]any)
	if scan["status"] != "completed" || !strings.Contains(fmt.Sprint(scan["report"]), "404 Not Found") {
		t.Fatalf("first scan not reported: %v", out)
	}
	// Without waiting, the scan is reported as running.
	ft.scan = nil
	code, out = do(r, "POST", "/api/v1/tools/sources?wait=0s", `{"type":"openapi","location":"https://specs.example/other.yaml"}`)
	if scan, _ := out["data"].(map[string]any)["scan"].(map[string]any); code != 201 || scan["status"] != "running" {
		t.Fatalf("add without wait: %d %v", code, out)
	}
	if code, out := do(r, "POST", "/api/v1/tools/sources?wait=forever", `{"type":"openapi","location":"https://specs.example/x.yaml"}`); code != 400 || fieldPath(out) != "wait" {
		t.Fatalf("bad wait: %d %v", code, out)
	}
	ft.started = ft.started[:1]
	if code, _ := do(r, "DELETE", "/api/v1/tools/sources/"+sourceIDOf(t, r, "https://specs.example/other.yaml"), ""); code != 200 {
		t.Fatal("delete the second source")
	}
	if code, _ := do(r, "POST", "/api/v1/tools/sources", `{"type":"openapi","location":"https://specs.example/pets.yaml"}`); code != 409 {
		t.Fatalf("duplicate: %d", code)
	}
	if code, out := do(r, "POST", "/api/v1/tools/sources", `{"type":"git","location":"https://x.example"}`); code != 422 || fieldPath(out) != "type" {
		t.Fatalf("bad type: %d %v", code, out)
	}
	if code, out := do(r, "POST", "/api/v1/tools/sources", `{"type":"openapi","where":"x"}`); code != 400 || fieldPath(out) != "where" {
		t.Fatalf("unknown field: %d %v", code, out)
	}
	code, out = do(r, "GET", "/api/v1/tools/sources", "")
	srcs := out["data"].(map[string]any)["sources"].([]any)
	if code != 200 || len(srcs) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	id := srcs[0].(map[string]any)["id"].(string)
	if code, _ := do(r, "DELETE", "/api/v1/tools/sources/"+id, ""); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := do(r, "DELETE", "/api/v1/tools/sources/"+id, ""); code != 404 {
		t.Fatalf("delete again: %d", code)
	}
	if l, _ := s.Sources(context.Background()); len(l) != 0 {
		t.Fatalf("store still has %v", l)
	}
	if code, _ := do(r, "POST", "/api/v1/tools/sources/scan", ""); code != 202 || len(ft.started) != 2 {
		t.Fatalf("scan all: %d", code)
	}
}

// sourceIDOf finds a listed source's id by its location.
func sourceIDOf(t *testing.T, r http.Handler, location string) string {
	t.Helper()
	_, out := do(r, "GET", "/api/v1/tools/sources", "")
	for _, s := range out["data"].(map[string]any)["sources"].([]any) {
		if m := s.(map[string]any); m["location"] == location {
			return m["id"].(string)
		}
	}
	t.Fatalf("no source at %s", location)
	return ""
}

func TestReviewDecisions(t *testing.T) {
	r, ft, _ := setup(t)
	ft.states["airlock-1"] = workflows.AirlockState{Status: workflows.AirlockPending}
	ft.states["airlock-2"] = workflows.AirlockState{Status: workflows.AirlockOnboarded}
	if code, out := do(r, "GET", "/api/v1/tools/pending/airlock-1", ""); code != 200 || out["data"].(map[string]any)["state"] == nil {
		t.Fatalf("details: %d %v", code, out)
	}
	if code, _ := do(r, "GET", "/api/v1/tools/pending/nope", ""); code != 404 {
		t.Fatalf("unknown review: %d", code)
	}
	if code, out := do(r, "POST", "/api/v1/tools/pending/airlock-1/approve", `{"policy":{"rateLimitPerMinute":-5}}`); code != 422 || fieldPath(out) != "policy.rateLimitPerMinute" {
		t.Fatalf("bad policy: %d %v", code, out)
	}
	if code, out := do(r, "POST", "/api/v1/tools/pending/airlock-1/reject", `{"reason":" "}`); code != 422 || fieldPath(out) != "reason" {
		t.Fatalf("reject without reason: %d %v", code, out)
	}
	if len(ft.signals) != 0 {
		t.Fatalf("refused requests must send no signal: %v", ft.signals)
	}
	if code, _ := do(r, "POST", "/api/v1/tools/pending/airlock-2/approve", `{"policy":{}}`); code != 409 {
		t.Fatalf("approving a finished review: %d", code)
	}
	code, _ := do(r, "POST", "/api/v1/tools/pending/airlock-1/approve", `{"policy":{"quotaPerDay":50}}`)
	if code != 202 || len(ft.signals) != 1 || ft.signals[0] != "airlock-1:approve" {
		t.Fatalf("approve: %d %v", code, ft.signals)
	}
	if sig := ft.lastSent.(*workflows.ApproveSignal); sig.Reviewer != "ana" || sig.Policy.QuotaPerDay != 50 {
		t.Fatalf("signal: %+v", sig)
	}
	if code, _ := do(r, "POST", "/api/v1/tools/pending/airlock-1/reject?wait=forever", `{"reason":"no"}`); code != 400 {
		t.Fatalf("bad wait: %d", code)
	}
	if code, _ := do(r, "GET", "/api/v1/tools/pending", ""); code != 200 {
		t.Fatalf("list pending: %d", code)
	}
}

// A second decision on a review the workflow has already decided is a 409
// naming why, not a 202 for a decision that is dropped.
func TestSecondDecisionConflicts(t *testing.T) {
	r, ft, _ := setup(t)
	ft.states["airlock-1"] = workflows.AirlockState{Status: workflows.AirlockPending}
	if code, out := do(r, "POST", "/api/v1/tools/pending/airlock-1/reject", `{"reason":"first"}`); code != 202 {
		t.Fatalf("first reject: %d %v", code, out)
	}
	code, out := do(r, "POST", "/api/v1/tools/pending/airlock-1/reject", `{"reason":"second"}`)
	if code != 409 || !strings.Contains(fmt.Sprint(out), "not pending") {
		t.Fatalf("second reject: %d %v", code, out)
	}
	if code, _ := do(r, "POST", "/api/v1/tools/pending/airlock-1/approve", `{"policy":{}}`); code != 409 {
		t.Fatalf("approve after reject: %d", code)
	}
	if len(ft.signals) != 1 || ft.signals[0] != "airlock-1:reject" {
		t.Fatalf("decisions recorded: %v", ft.signals)
	}
}

type fakeOps struct{ enabled []string }

func (f *fakeOps) List(_ context.Context, limit int) ([]airlock.Notification, error) {
	return []airlock.Notification{{Kind: "disabled", Subject: "pets"}}[:min(limit, 1)], nil
}
func (f *fakeOps) Enable(_ context.Context, slug, _ string) ([]string, error) {
	if slug != "pets" {
		return nil, fmt.Errorf("no approval for %q: %w", slug, fault.ErrNotFound)
	}
	f.enabled = append(f.enabled, slug)
	return []string{"pets.list_pets"}, nil
}

func TestNotificationsAndEnable(t *testing.T) {
	gin.SetMode(gin.TestMode)
	ops := &fakeOps{}
	r := gin.New()
	r.Use(httpxtest.HeaderIdentity())
	New(review.New(&fakeTemporal{}, nil, review.Config{})).WithOperations(ops, ops).Mount(r.Group("/api/v1"))
	if code, out := do(r, "GET", "/api/v1/notifications", ""); code != 200 || out["data"].(map[string]any)["count"] != 1.0 {
		t.Fatalf("notifications: %d %v", code, out)
	}
	// Who may enable (admins) is the server's route rule, tested in package api.
	req := httptest.NewRequest("POST", "/api/v1/tools/pets.list_pets/enable", nil)
	req.Header.Set("X-Test-Level", "admin")
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != 200 || len(ops.enabled) != 1 {
		t.Fatalf("enable as admin: %d %s", w.Code, w.Body)
	}
	req = httptest.NewRequest("POST", "/api/v1/tools/ghost.op/enable", nil)
	req.Header.Set("X-Test-Level", "owner")
	w = httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != 404 {
		t.Fatalf("enable unknown: %d", w.Code)
	}
}

// A source added without a type (the console's form, a folder or a
// list.json) is an openapi source, whose scan finds the location's kind.
func TestSourceWithoutTypeIsOpenAPI(t *testing.T) {
	r, _, s := setup(t)
	code, out := doAs(r, "owner", "POST", "/api/v1/tools/sources?wait=0s", `{"location":"specs/list.json"}`)
	if code != 201 {
		t.Fatalf("add without a type: %d %v", code, out)
	}
	srcs, err := s.Sources(context.Background())
	if err != nil || len(srcs) != 1 || srcs[0].Type != airlock.SourceOpenAPI || srcs[0].Location != "specs/list.json" {
		t.Fatalf("stored: %+v %v", srcs, err)
	}
}

// The pending list shows the name each review's spec gets, and when the
// title's name is held by another pending review, which one.
func TestPendingListShowsEachReviewsName(t *testing.T) {
	r, ft, _ := setup(t)
	ft.states["airlock-a"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Zoo API", Slug: "zoo_api", Location: "https://a.example/zoo.yaml"}}
	ft.states["airlock-b"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Title: "Zoo API", Slug: "zoo_api_zoo",
		Location: "https://b.example/zoo.yaml", NameTakenBy: "https://a.example/zoo.yaml", NamePending: true, Warnings: []string{"reserved"}}}
	code, out := do(r, "GET", "/api/v1/tools/pending", "")
	items, _ := out["data"].(map[string]any)["pending"].([]any)
	if code != 200 || len(items) != 2 {
		t.Fatalf("pending: %d %v", code, out)
	}
	got := map[string]map[string]any{}
	for _, it := range items {
		m := it.(map[string]any)
		got[m["id"].(string)] = m
	}
	if a := got["airlock-a"]; a["slug"] != "zoo_api" || a["nameTakenBy"] != nil {
		t.Fatalf("first: %v", a)
	}
	if b := got["airlock-b"]; b["slug"] != "zoo_api_zoo" || b["nameTakenBy"] != "https://a.example/zoo.yaml" || b["namePending"] != true {
		t.Fatalf("second: %v", b)
	}
}

// A typo in policy.operations is 422 on policy.operations[0], listing the
// valid names, and sends nothing: the review stays pending.
func TestApproveWithAnUnknownOperation(t *testing.T) {
	r, ft, _ := setup(t)
	ft.states["airlock-1"] = workflows.AirlockState{Status: workflows.AirlockPending,
		Review: workflows.SpecReview{Operations: []workflows.ReviewOperation{{Name: "list_pets", OperationID: "listPets"}}}}
	code, out := do(r, "POST", "/api/v1/tools/pending/airlock-1/approve", `{"policy":{"operations":["nope"]}}`)
	if code != 422 || fieldPath(out) != "policy.operations[0]" || !strings.Contains(fmt.Sprint(out), "listPets") {
		t.Fatalf("typo: %d %v", code, out)
	}
	if len(ft.signals) != 0 {
		t.Fatalf("a refused approval was sent: %v", ft.signals)
	}
	if code, _ := do(r, "POST", "/api/v1/tools/pending/airlock-1/approve", `{"policy":{"operations":["listPets"]}}`); code != 202 {
		t.Fatalf("approve after the typo: %d", code)
	}
}

// A role or user the tools' requirement could not carry is refused when
// the approval arrives (422 naming it), not after onboarding fails on it;
// the review stays pending.
func TestApproveWithABadRoleOrUser(t *testing.T) {
	r, ft, _ := setup(t)
	ft.states["airlock-1"] = workflows.AirlockState{Status: workflows.AirlockPending}
	for body, field := range map[string]string{
		`{"policy":{"allowedRoles":["a b\u001b"]}}`:      "policy.allowedRoles[0]",
		`{"policy":{"allowedRoles":["vet",""]}}`:         "policy.allowedRoles[1]",
		`{"policy":{"allowedUsers":["ana|role:admin"]}}`: "policy.allowedUsers[0]",
	} {
		code, out := do(r, "POST", "/api/v1/tools/pending/airlock-1/approve", body)
		if code != 422 && code != 400 || fieldPath(out) != field {
			t.Errorf("%s: %d %v, want 400/422 on %s", body, code, out, field)
		}
	}
	if len(ft.signals) != 0 {
		t.Fatalf("a refused approval was sent: %v", ft.signals)
	}
	if code, _ := do(r, "POST", "/api/v1/tools/pending/airlock-1/approve", `{"policy":{"allowedRoles":["vet"],"allowedUsers":["key:k1"]}}`); code != 202 {
		t.Fatalf("a good approval: %d", code)
	}
}

// An approval whose tools would be named in a namespace held by tools
// the spec did not onboard (a module's units tools) answers 422 on
// "slug" naming them; nothing is sent, and the review stays pending.
func TestApproveIntoAForeignNamespace(t *testing.T) {
	r, ft, s := setup(t)
	for _, id := range []string{"units.calculate", "units.convert"} {
		if _, err := s.UpsertTool(context.Background(), graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "CONVERT_UNIT", Name: id,
			Category: "math", Status: graph.StatusActive, Permissions: []string{"public"}}, Description: "Units.",
			Manifest: json.RawMessage(`{"source":{"origin":"module"}}`)}); err != nil {
			t.Fatal(err)
		}
	}
	ft.states["airlock-units"] = workflows.AirlockState{Status: workflows.AirlockPending,
		Review: workflows.SpecReview{Slug: "units", Location: "https://specs.example/units.yaml"}}
	code, out := do(r, "POST", "/api/v1/tools/pending/airlock-units/approve", `{"policy":{}}`)
	if code != 422 || fieldPath(out) != "slug" || !strings.Contains(fmt.Sprint(out), "units.calculate, units.convert") {
		t.Fatalf("approve into units: %d %v", code, out)
	}
	if len(ft.signals) != 0 || ft.states["airlock-units"].Status != workflows.AirlockPending {
		t.Fatalf("a refused approval was sent: %v", ft.signals)
	}
}

// A local file or folder (a path or a file:// URL) is the owner's to
// register: an admin is refused with 403 naming location, whether the
// path exists or not, and nothing is stored or scanned; an http(s) URL is
// an admin's to add, and the owner may add a local folder.
func TestLocalSourcesAreTheOwners(t *testing.T) {
	r, ft, s := setup(t)
	dir := t.TempDir()
	for _, loc := range []string{dir, "/no/such/folder", "file://" + dir, "specs/list.json"} {
		code, out := doAs(r, "admin", "POST", "/api/v1/tools/sources?wait=0s", `{"location":"`+loc+`"}`)
		if code != 403 || !strings.Contains(fmt.Sprint(out), "location") {
			t.Fatalf("an admin adds %s: %d %v", loc, code, out)
		}
	}
	if srcs, err := s.Sources(context.Background()); err != nil || len(srcs) != 0 || len(ft.started) != 0 {
		t.Fatalf("refused sources were stored or scanned: %v %v %v", srcs, ft.started, err)
	}
	if code, out := doAs(r, "admin", "POST", "/api/v1/tools/sources?wait=0s", `{"location":"https://specs.example/pets.yaml"}`); code != 201 {
		t.Fatalf("an admin adds a URL: %d %v", code, out)
	}
	if code, out := doAs(r, "owner", "POST", "/api/v1/tools/sources?wait=0s", `{"location":"`+dir+`"}`); code != 201 {
		t.Fatalf("the owner adds a folder: %d %v", code, out)
	}
}
