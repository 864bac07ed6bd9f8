package graphtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// testModelVersions: versions are stored whole, listed newest first
// without their blobs, a put without a blob keeps it, and promotion keeps
// exactly one version promoted (or none), giving the one before it the
// status asked for.
func testModelVersions(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var mv graph.ModelVersions = s
	ctx := context.Background()
	if _, err := mv.PromotedModelVersion(ctx); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("promoted on a fresh store: %v", err)
	}
	if _, err := mv.GetModelVersion(ctx, "v1"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("missing version: %v", err)
	}
	for _, bad := range []graph.ModelVersion{
		{ID: "", Status: "candidate", Record: json.RawMessage(`{}`)},
		{ID: "x", Status: "", Record: json.RawMessage(`{}`)},
		{ID: "x", Status: graph.ModelPromoted, Record: json.RawMessage(`{}`)},
		{ID: "x", Status: "candidate", Record: json.RawMessage(`[1]`)},
	} {
		if err := mv.PutModelVersion(ctx, bad); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("bad version %+v: %v", bad, err)
		}
	}
	t0 := time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC)
	blob1, blob2 := []byte{0, 1, 2, 255}, bytes.Repeat([]byte{7}, 1<<16)
	put := func(v graph.ModelVersion) {
		t.Helper()
		if err := mv.PutModelVersion(ctx, v); err != nil {
			t.Fatalf("put %s: %v", v.ID, err)
		}
	}
	put(graph.ModelVersion{ID: "v1", CreatedAt: t0, Status: "candidate", Record: json.RawMessage(`{"mrr":0.5}`), Blob: blob1})
	put(graph.ModelVersion{ID: "v2", CreatedAt: t0.Add(time.Hour), Status: "candidate", Record: json.RawMessage(`{"mrr":0.6}`), Blob: blob2})
	put(graph.ModelVersion{ID: "v3", CreatedAt: t0.Add(2 * time.Hour), Status: "candidate", Record: json.RawMessage(`{}`)})
	// An update without a blob keeps the blob.
	put(graph.ModelVersion{ID: "v1", CreatedAt: t0, Status: "rejected", Record: json.RawMessage(`{"mrr":0.5,"reason":"no better"}`)})
	got, err := mv.GetModelVersion(ctx, "v1")
	if err != nil || got.Status != "rejected" || !bytes.Equal(got.Blob, blob1) || !got.CreatedAt.Equal(t0) || !jsonEqual(got.Record, []byte(`{"mrr":0.5,"reason":"no better"}`)) {
		t.Fatalf("v1 after update: %+v %s %v", got, got.Record, err)
	}
	list, err := mv.ListModelVersions(ctx, 0)
	if err != nil || len(list) != 3 || list[0].ID != "v3" || list[1].ID != "v2" || list[2].ID != "v1" {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, v := range list {
		if v.Blob != nil {
			t.Fatalf("list carries %s's blob", v.ID)
		}
	}
	if list, err := mv.ListModelVersions(ctx, 2); err != nil || len(list) != 2 || list[0].ID != "v3" {
		t.Fatalf("list limit 2: %+v %v", list, err)
	}

	if err := mv.PromoteModelVersion(ctx, "nope", "superseded"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("promote unknown: %v", err)
	}
	if err := mv.PromoteModelVersion(ctx, "v2", ""); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("promote without a previous status: %v", err)
	}
	if err := mv.PromoteModelVersion(ctx, "v2", "superseded"); err != nil {
		t.Fatal(err)
	}
	p, err := mv.PromotedModelVersion(ctx)
	if err != nil || p.ID != "v2" || !bytes.Equal(p.Blob, blob2) || p.Status != graph.ModelPromoted {
		t.Fatalf("promoted: %s %s %d bytes %v", p.ID, p.Status, len(p.Blob), err)
	}
	// Promoting it again changes nothing.
	if err := mv.PromoteModelVersion(ctx, "v2", "superseded"); err != nil {
		t.Fatal(err)
	}
	if p, err := mv.PromotedModelVersion(ctx); err != nil || p.ID != "v2" {
		t.Fatalf("promoted again: %s %v", p.ID, err)
	}
	if err := mv.PromoteModelVersion(ctx, "v1", "rolled-back"); err != nil {
		t.Fatal(err)
	}
	status := func(id string) string {
		t.Helper()
		v, err := mv.GetModelVersion(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return v.Status
	}
	if status("v1") != graph.ModelPromoted || status("v2") != "rolled-back" || status("v3") != "candidate" {
		t.Fatalf("after promoting v1: v1 %s, v2 %s, v3 %s", status("v1"), status("v2"), status("v3"))
	}
	// The failed promotion left v1 promoted.
	if err := mv.PromoteModelVersion(ctx, "nope", "superseded"); !errors.Is(err, fault.ErrNotFound) || status("v1") != graph.ModelPromoted {
		t.Fatalf("unknown id changed the promoted version: %v", err)
	}
	// None: the baseline.
	if err := mv.PromoteModelVersion(ctx, "", "rolled-back"); err != nil {
		t.Fatal(err)
	}
	if _, err := mv.PromotedModelVersion(ctx); !errors.Is(err, fault.ErrNotFound) || status("v1") != "rolled-back" {
		t.Fatalf("after promoting none: %v, v1 %s", err, status("v1"))
	}
}
