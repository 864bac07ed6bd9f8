package graphtest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func testWrapperApprovals(t *testing.T, open func(*testing.T) graph.Store) {
	var w graph.WrapperApprovals = fresh(t, open)
	if _, err := w.GetWrapperApproval(ctx, "pets"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("GetWrapperApproval on a fresh store: %v, want ErrNotFound", err)
	}
	at := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	spec := "openapi: 3.0.0\ninfo: {title: Pets, version: '1'}\n# ünïcode and a NUL-free body\n"
	a := graph.WrapperApproval{Slug: "pets", ApprovalID: "ap1", SpecHash: "ab12", Spec: spec, Record: json.RawMessage(`{"id":"ap1","policy":{"quotaPerDay":3}}`), UpdatedAt: at}
	if err := w.PutWrapperApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := w.GetWrapperApproval(ctx, "pets")
	if err != nil || got.ApprovalID != "ap1" || got.SpecHash != "ab12" || got.Spec != spec || string(got.Record) != string(a.Record) || !got.UpdatedAt.Equal(at) {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, a)
	}
	a.ApprovalID, a.SpecHash, a.Record = "ap2", "cd34", json.RawMessage(`{"id":"ap2"}`)
	if err := w.PutWrapperApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.GetWrapperApproval(ctx, "pets"); got.ApprovalID != "ap2" || got.SpecHash != "cd34" {
		t.Errorf("a re-approval replaces the wrapper's approval: %+v", got)
	}
	b := a
	b.Slug, b.ApprovalID = "birds", "ap3"
	if err := w.PutWrapperApproval(ctx, b); err != nil {
		t.Fatal(err)
	}
	list, err := w.ListWrapperApprovals(ctx)
	if err != nil || len(list) != 2 || list[0].Slug != "birds" || list[1].Slug != "pets" || list[1].ApprovalID != "ap2" || list[1].Spec != "" || string(list[1].Record) != `{"id":"ap2"}` {
		t.Errorf("ListWrapperApprovals = %+v, %v; want birds then pets (ap2), without specs", list, err)
	}
	for _, bad := range []graph.WrapperApproval{{ApprovalID: "x", SpecHash: "h", Spec: "s", Record: []byte("{}")}, {Slug: "x", SpecHash: "h", Spec: "s", Record: []byte("{}")}, {Slug: "x", ApprovalID: "a", SpecHash: "h", Record: []byte("{}")}} {
		if err := w.PutWrapperApproval(ctx, bad); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("PutWrapperApproval(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
}
