package graphtest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// testSnapshots: a snapshot is stored whole, replaced by name, absent ones
// are ErrNotFound, and bad ones are refused.
func testSnapshots(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	var ss graph.Snapshots = s
	ctx := context.Background()
	if _, err := ss.GetSnapshot(ctx, "analytics"); !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("missing snapshot: %v", err)
	}
	for _, bad := range []graph.Snapshot{{Name: "", Data: json.RawMessage(`{}`)}, {Name: "x", Data: json.RawMessage(`{`)}} {
		if err := ss.PutSnapshot(ctx, bad); !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("bad snapshot %+v: %v", bad, err)
		}
	}
	t0 := time.Date(2026, 7, 1, 6, 0, 0, 0, time.UTC)
	if err := ss.PutSnapshot(ctx, graph.Snapshot{Name: "analytics", At: t0, Data: json.RawMessage(`{"tools":{"active":3}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := ss.PutSnapshot(ctx, graph.Snapshot{Name: "ranking", At: t0, Data: json.RawMessage(`{"popularity":{"a":1}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := ss.PutSnapshot(ctx, graph.Snapshot{Name: "analytics", At: t0.Add(24 * time.Hour), Data: json.RawMessage(`{"tools":{"active":4}}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := ss.GetSnapshot(ctx, "analytics")
	if err != nil || !got.At.Equal(t0.Add(24*time.Hour)) || !jsonEqual(got.Data, []byte(`{"tools":{"active":4}}`)) {
		t.Fatalf("analytics snapshot: %+v %s %v", got, got.Data, err)
	}
	if got, err := ss.GetSnapshot(ctx, "ranking"); err != nil || !jsonEqual(got.Data, []byte(`{"popularity":{"a":1}}`)) {
		t.Fatalf("ranking snapshot: %s %v", got.Data, err)
	}
}
