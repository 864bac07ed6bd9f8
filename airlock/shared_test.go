package airlock

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/embed/hashing"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/tool"
)

// TestApproveOnOneWorkerRunOnAnother: airlock services with their own
// data dirs over one store file (workers). A spec fetched by one is
// approved through another, and runs through a third, which rebuilds the wrapper from the
// approved spec and policy and checks that its sources reproduce; the
// call counts in the shared ledger. A third worker whose build would not
// reproduce the approved sources refuses to run it.
func TestApproveOnOneWorkerRunOnAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	ctx := context.Background()
	s1, s2 := openShared(t)
	emb := hashing.New(64)
	if err := s1.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: emb.Name(), Dimension: emb.Dimension()}); err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	api := petsAPI(t)
	ob := testOnboarder(t, ctx)
	ob.Validate = func(m *tool.Manifest) error { tool.Normalize(m); return tool.Validate(m) }

	// A third worker fetched the spec (the source scan); worker A, whose
	// data dir never saw it, approves it.
	scanner := &Files{Root: t.TempDir(), Shared: s2}
	hash, err := scanner.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	filesA := &Files{Root: t.TempDir(), Shared: s1}
	onbA := &Onboarding{Onboarder: ob, Files: filesA, Definitions: s1, Registrar: RegistryRegistrar{Registry: registry.New(s1, emb)}}
	res, err := onbA.Approve(ctx, "airlock-1", hash, "https://specs.example/petstore.yaml", Policy{BaseURL: api.URL, QuotaPerDay: 2})
	if err != nil || !res.Outcome.OK() {
		t.Fatalf("approve on worker A: %+v %v", res, err)
	}
	approvedA, _ := filesA.Approval("pet_clinic")
	if approvedA.SourceHash == "" {
		t.Fatal("the approval records no source hash")
	}

	// Worker B has never seen the spec: it rebuilds the wrapper and runs it.
	filesB := &Files{Root: t.TempDir(), Shared: s2}
	rtB := &Runtime{Files: filesB, Executor: &Executor{Ledger: s2}, Builder: ob}
	out, err := rtB.RunWrapped(ctx, "pet_clinic.list_pets", map[string]any{"limit": 5}, access.Caller{})
	if err != nil || !out.Success {
		t.Fatalf("run on worker B: %+v %v", out, err)
	}
	builtB, err := filesB.Approval("pet_clinic")
	if err != nil || builtB.ID != "airlock-1" || builtB.SourceHash != approvedA.SourceHash || !strings.HasPrefix(builtB.Binary, filesB.Root) {
		t.Fatalf("worker B's approval = %+v, %v; want approval airlock-1 built under its own data dir", builtB, err)
	}
	// The second call runs the binary built by the first (no rebuild)...
	if _, err := rtB.RunWrapped(ctx, "pet_clinic.list_pets", map[string]any{"limit": 5}, access.Caller{}); err != nil {
		t.Fatal(err)
	}
	if again, _ := filesB.Approval("pet_clinic"); again.Binary != builtB.Binary {
		t.Errorf("a second call rebuilt the wrapper: %s, then %s", builtB.Binary, again.Binary)
	}
	// ...and the quota of 2 counted both in the shared ledger: worker A
	// refuses a third call.
	rtA := &Runtime{Files: filesA, Executor: &Executor{Ledger: s1}, Builder: ob}
	if _, err := rtA.RunWrapped(ctx, "pet_clinic.list_pets", map[string]any{"limit": 5}, access.Caller{}); !errors.Is(err, fault.ErrLimit) {
		t.Errorf("a third call on worker A under a daily quota of 2: %v, want ErrLimit", err)
	}

	// A worker whose generated sources differ from the approved ones
	// refuses to run them.
	sa, _ := s1.GetWrapperApproval(ctx, "pet_clinic")
	var rec Approval
	_ = json.Unmarshal(sa.Record, &rec)
	rec.SourceHash = strings.Repeat("0", 64)
	sa.Record, _ = json.Marshal(rec)
	sa.ApprovalID = "airlock-tampered"
	if err := s1.PutWrapperApproval(ctx, sa); err != nil {
		t.Fatal(err)
	}
	rtC := &Runtime{Files: &Files{Root: t.TempDir(), Shared: s2}, Executor: &Executor{Ledger: &MemoryLedger{}}, Builder: ob}
	_, err = rtC.RunWrapped(ctx, "pet_clinic.list_pets", map[string]any{}, access.Caller{})
	if !errors.Is(err, fault.ErrUnavailable) || !strings.Contains(err.Error(), "does not reproduce") {
		t.Errorf("a build that does not reproduce the approved sources: %v", err)
	}
	if _, err := rtC.Files.Approval("pet_clinic"); err == nil {
		t.Error("a wrapper that does not reproduce is recorded as built")
	}
}

// TestRuntimeFollowsTheSharedApproval: a worker runs the wrapper it built
// while it is the store's current approval, and rebuilds (here: says it
// cannot, having no builder) once the store names a newer approval, as
// after a re-approval through another worker. No Go build is needed: the
// local "wrapper" is a script.
func TestRuntimeFollowsTheSharedApproval(t *testing.T) {
	ctx := context.Background()
	store, _ := openShared(t)
	files := &Files{Root: t.TempDir(), Shared: store}
	bin := filepath.Join(files.WrapperDir("pets"), "build-1", "pets", "wrapper")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '{\"tool\":\"list\",\"success\":true}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := Approval{ID: "ap-old", Slug: "pets", SpecHash: "h1", SourceHash: "s1", Binary: bin, ToolIDs: []string{"pets.list"}}
	if err := files.SaveApproval(old); err != nil {
		t.Fatal(err)
	}
	share := func(a Approval) {
		t.Helper()
		a.Binary = ""
		rec, _ := json.Marshal(a)
		if err := store.PutWrapperApproval(ctx, graph.WrapperApproval{Slug: a.Slug, ApprovalID: a.ID, SpecHash: a.SpecHash, Spec: "openapi: 3.0.0", Record: rec}); err != nil {
			t.Fatal(err)
		}
	}
	rt := &Runtime{Files: files, Executor: &Executor{Ledger: &MemoryLedger{}}}
	// Not in the store (approved before approvals were shared): local.
	if out, err := rt.RunWrapped(ctx, "pets.list", nil, access.Caller{}); err != nil || !out.Success {
		t.Fatalf("an approval only on disk: %+v %v", out, err)
	}
	share(old)
	if out, err := rt.RunWrapped(ctx, "pets.list", nil, access.Caller{}); err != nil || !out.Success {
		t.Fatalf("the store's current approval, built here: %+v %v", out, err)
	}
	share(Approval{ID: "ap-new", Slug: "pets", SpecHash: "h2", SourceHash: "s2", ToolIDs: []string{"pets.list"}})
	_, err := rt.RunWrapped(ctx, "pets.list", nil, access.Caller{})
	if !errors.Is(err, fault.ErrUnavailable) || !strings.Contains(err.Error(), "ap-new") {
		t.Errorf("after a re-approval elsewhere the old wrapper must not run: %v", err)
	}
}

// TestAPIReplicaFindsApprovalsMadeOnAWorker: an API replica's own data dir
// holds no approval; with the store it finds a worker's approval (for
// enabling its tools) and the approved spec (the source document).
func TestAPIReplicaFindsApprovalsMadeOnAWorker(t *testing.T) {
	ctx := context.Background()
	store, _ := openShared(t)
	spec := []byte("openapi: 3.0.0\ninfo: {title: Pets, version: '1'}\npaths: {}\n")
	worker := &Files{Root: t.TempDir(), Shared: store}
	if err := worker.share(ctx, Approval{ID: "ap1", Slug: "pets", SpecHash: "h", Binary: "/elsewhere/wrapper", ToolIDs: []string{"pets.list"}}, spec); err != nil {
		t.Fatal(err)
	}
	api := &Files{Root: t.TempDir(), Shared: store}
	a, err := api.CurrentApproval(ctx, "pets")
	if err != nil || a.ID != "ap1" || len(a.ToolIDs) != 1 || a.Binary != "" {
		t.Fatalf("CurrentApproval on the API replica = %+v, %v; want ap1 without another worker's binary path", a, err)
	}
	got, err := api.SourceSpec(ctx, "pets.list")
	if err != nil || string(got) != string(spec) {
		t.Fatalf("SourceSpec on the API replica = %q, %v", got, err)
	}
	if _, err := (&Files{Root: t.TempDir()}).CurrentApproval(ctx, "pets"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("without the store the replica knows only its own approvals: %v", err)
	}
}

// TestHealthChecksCountAcrossWorkers: the scheduled health check lands on
// whichever worker is free. Two workers with their own data dirs over one
// store probe an approval only the first holds on disk, count its failures
// in a row together, and the API replica's enable resets them.
func TestHealthChecksCountAcrossWorkers(t *testing.T) {
	ctx := context.Background()
	store, other := openShared(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer down.Close()
	a := &Files{Root: t.TempDir(), Shared: store}
	ap := Approval{ID: "a1", Slug: "pets", SpecHash: "h", BaseURL: down.URL, ToolIDs: []string{"pets.list_pets"}}
	if err := a.share(ctx, ap, []byte("openapi: 3.0.0")); err != nil {
		t.Fatal(err)
	}
	if err := a.SaveApproval(ap); err != nil {
		t.Fatal(err)
	}
	b := &Files{Root: t.TempDir(), Shared: other}
	tools := statusLog{}
	hcA := &HealthChecker{Files: a, Prober: &Prober{}, Tools: tools, Threshold: 2}
	hcB := &HealthChecker{Files: b, Prober: &Prober{}, Tools: tools, Threshold: 2}
	rep, err := hcB.CheckAll(ctx)
	if err != nil || rep.Checked != 1 || len(rep.Disabled) != 0 {
		t.Fatalf("worker b, which never built the wrapper, checks it: %+v %v", rep, err)
	}
	rep, err = hcA.CheckAll(ctx)
	if err != nil || len(rep.Disabled) != 1 || tools["pets.list_pets"] != "disabled" {
		t.Fatalf("the second failure in a row, on worker a, disables the tools: %+v %v %v", rep, err, tools)
	}
	api := &HealthChecker{Files: &Files{Root: t.TempDir(), Shared: store}, Prober: &Prober{}, Tools: tools}
	if ids, err := api.Enable(ctx, "pets", "fixed"); err != nil || len(ids) != 1 || tools["pets.list_pets"] != "active" {
		t.Fatalf("enable through a replica without the approval on disk: %v %v", ids, err)
	}
	if h, _ := b.Health(ctx, "pets"); h.Consecutive != 0 || h.Probes != 2 {
		t.Errorf("shared health after enable = %+v; want 2 probes, none failing in a row", h)
	}
}

// TestNameHeldOnAnotherWorkerIsNotTakenOver: a spec from another location
// whose name an approval made on another worker holds is refused, before
// anything is built or registered.
func TestNameHeldOnAnotherWorkerIsNotTakenOver(t *testing.T) {
	ctx := context.Background()
	store, _ := openShared(t)
	spec, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	other := &Files{Root: t.TempDir(), Shared: store}
	if err := other.share(ctx, Approval{ID: "ap-other", Slug: "pet_clinic", SpecHash: "h", Location: "https://elsewhere.example/pets.yaml"}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	files := &Files{Root: t.TempDir(), Shared: store}
	hash, err := files.PutSpec(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	onb := &Onboarding{Onboarder: &Onboarder{}, Files: files}
	_, err = onb.Approve(ctx, "ap-mine", hash, "https://specs.example/petstore.yaml", Policy{})
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "ap-other") {
		t.Fatalf("approving under a name another worker's approval holds: %v, want a conflict naming it", err)
	}
}
