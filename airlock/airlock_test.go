package airlock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/templates"
)

const petstore = "../codegen/testdata/petstore/spec.yaml"
const swagger2 = "../codegen/testdata/swagger2/spec.json"

func TestPolicyValidateNamesFields(t *testing.T) {
	cases := []struct {
		p     Policy
		field string
	}{
		{Policy{RateLimitPerMinute: -1}, "rateLimitPerMinute"},
		{Policy{QuotaPerDay: -2}, "quotaPerDay"},
		{Policy{CostPerCall: 0.1, SoftBudget: 5, HardBudget: 2}, "softBudget"},
		{Policy{HardBudget: 2}, "costPerCall"},
		{Policy{BaseURL: "ftp://x"}, "baseUrl"},
		{Policy{Credential: &kit.CredentialRef{Kind: "magic", Env: "X"}}, "credential.kind"},
		{Policy{Credential: &kit.CredentialRef{Kind: "header", Env: "API_KEY"}}, "credential.name"},
		{Policy{Credential: &kit.CredentialRef{Kind: "bearer", Env: "not valid"}}, "credential.env"},
		{Policy{AllowedGroups: []string{" "}}, "allowedGroups[0]"},
		{Policy{RequiredLevel: "root"}, "requiredLevel"},
	}
	for _, c := range cases {
		err := c.p.Validate()
		if !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("%+v: err = %v", c.p, err)
			continue
		}
		found := false
		for _, f := range fault.Fields(err) {
			found = found || f.Path == c.field
		}
		if !found {
			t.Errorf("%+v: no problem on %s in %v", c.p, c.field, err)
		}
	}
	ok := Policy{RateLimitPerMinute: 10, QuotaPerDay: 100, CostPerCall: 0.01, SoftBudget: 1, HardBudget: 2,
		Credential: &kit.CredentialRef{Kind: "header", Name: "X-Key", Env: "PETS_KEY"}, RequiredLevel: "admin"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestManifestsFromASpec(t *testing.T) {
	data, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	n, err := codegen.Normalise(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := codegen.New(templates.FS)
	w, err := g.Generate(n, codegen.Options{Name: "pet_clinic", BaseURL: "https://pets.example.com/v1", Requires: []codegen.Require{{Path: codegen.KinOpenAPI, Version: "v0"}}})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Manifests(n, w, SpecInfo{Slug: "pet_clinic", URL: "https://specs.example.com/pets.yaml"}, Policy{AllowedRoles: []string{"vet"}, AllowedGroups: []string{"clinic"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 4 {
		t.Fatalf("%d manifests", len(ms))
	}
	byID := map[string]int{}
	for i, m := range ms {
		byID[m.ToolID] = i
	}
	i, ok := byID["pet_clinic.create_pet"]
	if !ok {
		t.Fatalf("ids: %v", byID)
	}
	m := ms[i]
	if m.Verb != "CREATE_PET" || m.Source.Origin != "openapi" || m.Source.License != "Apache-2.0" || m.Version != "2.1.0" {
		t.Errorf("manifest: %+v", m)
	}
	if m.Groups[0] != "clinic" || m.PermissionsRequired[0] != "any:role:vet" || m.RequiredPermission != "user" {
		t.Errorf("access fields: groups=%v perms=%v level=%q", m.Groups, m.PermissionsRequired, m.RequiredPermission)
	}
	var in map[string]any
	if err := json.Unmarshal(m.InputSchema, &in); err != nil || !strings.Contains(string(m.InputSchema), `"body"`) {
		t.Errorf("input schema: %s", m.InputSchema)
	}
	names := []string{}
	for _, e := range m.Entities {
		names = append(names, e.Type+":"+e.Name)
	}
	if got := strings.Join(names, ","); got != "API:Pet Clinic,Topic:pets,Resource:pet" {
		t.Errorf("entities = %s", got)
	}
	if Slug(n.Doc, "x") != "pet_clinic" || Slug(nil, "9lives") != "api_9lives" {
		t.Errorf("slugs: %q %q", Slug(n.Doc, "x"), Slug(nil, "9lives"))
	}
}

// fakeWrapper writes a script that behaves like a wrapper: it reads the
// request and prints a result showing the environment it was given.
func fakeWrapper(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wrapper")
	script := `#!/bin/sh
read -r line
printf '{"tool":"get_pet","success":true,"status":200,"result":{"env":"%s"}}\n' "$(env | sort | tr '\n' ' ')"
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecutorEnforcesPolicies(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var notes []Notification
	var mu sync.Mutex
	ledger := &MemoryLedger{}
	e := &Executor{Ledger: ledger, Now: func() time.Time { return now },
		Getenv: func(k string) string {
			return map[string]string{"PATH": os.Getenv("PATH"), "PETS_KEY": "s3cret", "HOME": "/root"}[k]
		},
		Notifier: notifierFunc(func(n Notification) { mu.Lock(); notes = append(notes, n); mu.Unlock() })}
	a := Approval{ID: "ap1", Slug: "pets", Binary: fakeWrapper(t), Policy: Policy{
		RateLimitPerMinute: 3, QuotaPerDay: 5, CostPerCall: 1, SoftBudget: 2, HardBudget: 4,
		AllowedUsers: []string{"ana"}, Credential: &kit.CredentialRef{Kind: "bearer", Env: "PETS_KEY"}}}
	ana := access.Caller{UserID: "ana"}

	if _, err := e.Execute(ctx, a, "get_pet", nil, access.Caller{UserID: "bob"}); !errors.Is(err, fault.ErrForbidden) {
		t.Fatalf("bob: err = %v, want forbidden", err)
	}
	res, err := e.Execute(ctx, a, "get_pet", map[string]any{"id": 1}, ana)
	if err != nil || !res.Success {
		t.Fatalf("first call: %+v %v", res, err)
	}
	env := string(res.Result)
	if !strings.Contains(env, "PETS_KEY=s3cret") || strings.Contains(env, "HOME=") {
		t.Errorf("wrapper environment must be PATH and the credential only: %s", env)
	}
	for i := 0; i < 2; i++ {
		if _, err := e.Execute(ctx, a, "get_pet", nil, ana); err != nil {
			t.Fatalf("call %d: %v", i+2, err)
		}
	}
	if _, err := e.Execute(ctx, a, "get_pet", nil, ana); !errors.Is(err, fault.ErrLimit) || !strings.Contains(err.Error(), "rate limit") {
		t.Fatalf("4th call in a minute: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := e.Execute(ctx, a, "get_pet", nil, ana); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
	if _, err := e.Execute(ctx, a, "get_pet", nil, ana); !errors.Is(err, fault.ErrLimit) || !strings.Contains(err.Error(), "hard budget") {
		t.Fatalf("5th paid call: %v", err)
	}
	if len(notes) != 1 || notes[0].Kind != "soft_budget" {
		t.Fatalf("notifications: %+v", notes)
	}
	// Quota: a new approval without budget, 5 calls a day.
	b := a
	b.ID, b.Policy.HardBudget, b.Policy.SoftBudget, b.Policy.CostPerCall, b.Policy.RateLimitPerMinute = "ap2", 0, 0, 0, 0
	for i := 0; i < 5; i++ {
		if _, err := e.Execute(ctx, b, "get_pet", nil, ana); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Execute(ctx, b, "get_pet", nil, ana); !errors.Is(err, fault.ErrLimit) || !strings.Contains(err.Error(), "daily quota") {
		t.Fatalf("6th call of the day: %v", err)
	}
	now = now.Add(24 * time.Hour)
	if _, err := e.Execute(ctx, b, "get_pet", nil, ana); err != nil {
		t.Fatalf("next day: %v", err)
	}
	if got := len(ledger.Records()); got != 10 {
		t.Fatalf("ledger has %d records, want 10 (refused calls are not recorded)", got)
	}
}

type notifierFunc func(Notification)

func (f notifierFunc) Notify(_ context.Context, n Notification) error { f(n); return nil }

func TestCheckOnboardsACorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs; skipped with -short")
	}
	dir := t.TempDir()
	for name, src := range map[string]string{"a/pets.yaml": petstore, "b/rates.json": swagger2} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		_ = os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	_ = os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths: {}\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a spec"), 0o644)
	ctx := context.Background()
	ob := testOnboarder(t, ctx)
	var out, progress bytes.Buffer
	rep, err := Check(ctx, ob, dir, CheckOptions{JSON: true}, &out, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Specs != 3 || rep.Onboarded != 2 || rep.Failures[StageLoad] != 1 || rep.Tools != 6 {
		t.Fatalf("report %+v\n%s", rep, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["specs"] != 3.0 {
		t.Fatalf("last line must be the JSON summary: %q (%v)", lines[len(lines)-1], err)
	}
	if !strings.Contains(progress.String(), "[3/3]") {
		t.Errorf("progress: %q", progress.String())
	}
	t.Logf("\n%s", out.String())
}

func TestSemverFromSpecVersions(t *testing.T) {
	for in, want := range map[string]string{"2015-08-24": "2015.8.24", "1.2.3-beta": "1.2.3", "v2": "2.0.0", "": "0.0.0", "2.1": "2.1.0",
		"2.2.01": "2.2.1", "19.02.1": "19.2.1", "00.1": "0.1.0", "2024.001.0099": "2024.1.99"} {
		if got := semver(in); got != want {
			t.Errorf("semver(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckRepeatListsChangedOutcomes(t *testing.T) {
	row := func(spec string, passed bool, failed ...string) CheckRow {
		return CheckRow{Spec: spec, Loaded: true, Built: true, TestPassed: passed, Onboarded: passed, Failed: failed, Seconds: float64(len(failed))}
	}
	runs := [][]CheckRow{
		{row("a.yaml", true), row("b.yaml", true), row("c.yaml", false, "TestX")},
		{row("a.yaml", true), row("b.yaml", false, "TestY"), row("c.yaml", false, "TestX")},
		{row("a.yaml", true), row("b.yaml", true), row("c.yaml", false, "TestZ")},
	}
	got := changedOutcomes(runs)
	if len(got) != 2 || got[0].Spec != "b.yaml" || got[1].Spec != "c.yaml" || len(got[0].Outcomes) != 3 ||
		got[0].Outcomes[0] != got[0].Outcomes[2] || got[0].Outcomes[0] == got[0].Outcomes[1] || !strings.Contains(got[1].Outcomes[2], "TestZ") {
		t.Fatalf("changed: %+v", got)
	}
	if c := changedOutcomes(runs[:1]); len(c) != 0 {
		t.Fatalf("one run changes nothing: %+v", c)
	}

	// The command's wiring: every run is reported, and the JSON summary
	// says how many runs and what changed (a spec that fails to load is
	// checked without building anything).
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths: {}\n"), 0o644)
	var out, progress bytes.Buffer
	rep, err := Check(context.Background(), &Onboarder{}, dir, CheckOptions{JSON: true, Repeat: 3}, &out, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 3 || len(rep.RunsOnboarded) != 3 || len(rep.Changed) != 0 || strings.Count(out.String(), "SPEC ") != 3 ||
		!strings.Contains(out.String(), "3 runs: onboarded 0, 0, 0 of 1 specs; 0 spec(s) changed outcome between runs") {
		t.Fatalf("report %+v\n%s", rep, out.String())
	}
	if !strings.Contains(progress.String(), "run 3/3 [1/1]") {
		t.Errorf("progress: %q", progress.String())
	}
}
