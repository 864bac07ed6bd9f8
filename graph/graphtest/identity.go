package graphtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
)

func testKeys(t *testing.T, open func(*testing.T) graph.Store) {
	var ks graph.Keys = fresh(t, open)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	full := graph.APIKey{
		ID: "k_b", Hash: "ab12", Owner: "ops team", Description: "ci", Level: "admin",
		Roles: []string{"approver"}, Permissions: []string{"tools:write"},
		Groups: []string{"default", "finance"}, Modules: []string{"currency"},
		TrustedGateway: true, Limits: graph.KeyLimits{SearchPerMinute: 10, ExecutePerMinute: -1},
		CreatedBy: "key:k_a", CreatedAt: t0.Add(time.Minute), ExpiresAt: t0.Add(48 * time.Hour),
	}
	minimal := graph.APIKey{ID: "k_a", Hash: "cd34", Owner: "alice", Level: "user", CreatedAt: t0}
	for _, k := range []graph.APIKey{full, minimal} {
		if err := ks.CreateKey(ctx, k); err != nil {
			t.Fatalf("CreateKey(%s): %v", k.ID, err)
		}
	}
	got, err := ks.GetKey(ctx, "k_b")
	if err != nil {
		t.Fatalf("GetKey: %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint(full) {
		t.Errorf("GetKey round trip:\n got %+v\nwant %+v", got, full)
	}
	got, _ = ks.GetKey(ctx, "k_a")
	if got.Groups != nil || got.Modules != nil {
		t.Errorf("nil groups/modules must stay nil (the default group, any module), got %v %v", got.Groups, got.Modules)
	}
	if _, err := ks.GetKey(ctx, "nope"); !errors.Is(err, graph.ErrNotFound) {
		t.Errorf("GetKey(unknown) = %v, want ErrNotFound", err)
	}
	if err := ks.CreateKey(ctx, graph.APIKey{ID: "k_a", Hash: "x", Owner: "mallory", Level: "owner", CreatedAt: t0}); !errors.Is(err, graph.ErrConflict) {
		t.Errorf("CreateKey(existing id) = %v, want ErrConflict", err)
	}
	if k, _ := ks.GetKey(ctx, "k_a"); k.Owner != "alice" || k.Hash != "cd34" {
		t.Errorf("a refused create changed the stored key: %+v", k)
	}
	for _, bad := range []graph.APIKey{
		{Hash: "h", Owner: "o", Level: "user"},
		{ID: "k_c", Owner: "o", Level: "user"},
		{ID: "k_c", Hash: "h", Level: "user"},
		{ID: "k_c", Hash: "h", Owner: "o"},
	} {
		if err := ks.CreateKey(ctx, bad); !errors.Is(err, graph.ErrInvalid) {
			t.Errorf("CreateKey(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
	list, err := ks.ListKeys(ctx)
	if err != nil {
		t.Fatalf("ListKeys: %v", err)
	}
	if len(list) != 2 || list[0].ID != "k_a" || list[1].ID != "k_b" {
		t.Fatalf("ListKeys order = %v, want k_a, k_b (by creation)", list)
	}
	if n, err := ks.RevokedKeys(ctx); err != nil || n != 0 {
		t.Fatalf("RevokedKeys before any revocation = %d, %v; want 0", n, err)
	}
	r1 := t0.Add(time.Hour)
	if err := ks.RevokeKey(ctx, "k_b", r1); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	if n, err := ks.RevokedKeys(ctx); err != nil || n != 1 {
		t.Fatalf("RevokedKeys after one revocation = %d, %v; want 1", n, err)
	}
	if err := ks.RevokeKey(ctx, "k_b", r1.Add(time.Hour)); err != nil {
		t.Fatalf("RevokeKey again: %v", err)
	}
	if n, _ := ks.RevokedKeys(ctx); n != 1 {
		t.Errorf("RevokedKeys after revoking the same key twice = %d, want 1", n)
	}
	if k, _ := ks.GetKey(ctx, "k_b"); !k.RevokedAt.Equal(r1) || k.Owner != full.Owner || len(k.Roles) != 1 {
		t.Errorf("revoked key = %+v, want RevokedAt %v (the first) and nothing else changed", k, r1)
	}
	if err := ks.RevokeKey(ctx, "nope", r1); !errors.Is(err, graph.ErrNotFound) {
		t.Errorf("RevokeKey(unknown) = %v, want ErrNotFound", err)
	}
}

func testAudit(t *testing.T, open func(*testing.T) graph.Store) {
	var au graph.Audit = fresh(t, open)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var events []graph.AuditEvent
	for i := 0; i < 7; i++ {
		actor, action := "key:a", "tools.register"
		if i%2 == 1 {
			actor, action = "key:b", "tools.execute"
		}
		events = append(events, graph.AuditEvent{
			ID: fmt.Sprintf("%020d-x", i), At: t0.Add(time.Duration(i) * time.Minute), Actor: actor, ActorName: "n",
			Method: "api_key", Action: action, Tool: fmt.Sprintf("t.%d", i%3), Outcome: graph.AuditSuccess,
			Status: 200, RequestID: "r", Route: "POST /x", Detail: "d",
		})
	}
	if err := au.AppendAudit(ctx, events[:4]); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	if err := au.AppendAudit(ctx, events[4:]); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
	// All or none: one bad event keeps the whole batch out.
	bad := []graph.AuditEvent{{ID: "z1", Action: "a", Outcome: "success", At: t0}, {ID: "z2", Outcome: "success", At: t0}}
	if err := au.AppendAudit(ctx, bad); !errors.Is(err, graph.ErrInvalid) {
		t.Errorf("AppendAudit(missing action) = %v, want ErrInvalid", err)
	}
	if err := au.AppendAudit(ctx, []graph.AuditEvent{{ID: "z3", Action: "a", Outcome: "success", At: t0}, events[0]}); !errors.Is(err, graph.ErrConflict) {
		t.Errorf("AppendAudit(repeated id) = %v, want ErrConflict", err)
	}
	all, err := au.AuditEvents(ctx, graph.AuditQuery{})
	if err != nil {
		t.Fatalf("AuditEvents: %v", err)
	}
	if len(all.Items) != 7 || all.Next != "" {
		t.Fatalf("AuditEvents(all) = %d items next %q, want the 7 appended (no partial batch)", len(all.Items), all.Next)
	}
	if all.Items[0].ID != events[6].ID || all.Items[6].ID != events[0].ID {
		t.Errorf("AuditEvents not newest first: %v … %v", all.Items[0].ID, all.Items[6].ID)
	}
	if got := all.Items[0]; !got.At.Equal(events[6].At) || got.Route != "POST /x" || got.Status != 200 || got.Method != "api_key" {
		t.Errorf("round trip: %+v, want %+v", got, events[6])
	}
	// Paging with the cursor visits every event once.
	var seen []string
	q := graph.AuditQuery{Limit: 3}
	for page := 0; page < 5; page++ {
		p, err := au.AuditEvents(ctx, q)
		if err != nil {
			t.Fatalf("AuditEvents page: %v", err)
		}
		for _, e := range p.Items {
			seen = append(seen, e.ID)
		}
		if p.Next == "" {
			break
		}
		q.Before = p.Next
	}
	if len(seen) != 7 || seen[0] != events[6].ID || seen[6] != events[0].ID {
		t.Errorf("paged ids = %v", seen)
	}
	cases := []struct {
		q    graph.AuditQuery
		want int
	}{
		{graph.AuditQuery{Actor: "key:b"}, 3},
		{graph.AuditQuery{Action: "tools.register"}, 4},
		{graph.AuditQuery{Tool: "t.0"}, 3},
		{graph.AuditQuery{Since: t0.Add(2 * time.Minute)}, 5},
		{graph.AuditQuery{Until: t0.Add(2 * time.Minute)}, 2},
		{graph.AuditQuery{Actor: "key:a", Tool: "t.0", Since: t0.Add(time.Minute)}, 1},
	}
	for _, c := range cases {
		p, err := au.AuditEvents(ctx, c.q)
		if err != nil {
			t.Fatalf("AuditEvents(%+v): %v", c.q, err)
		}
		if len(p.Items) != c.want {
			t.Errorf("AuditEvents(%+v) = %d items, want %d", c.q, len(p.Items), c.want)
		}
	}
}
