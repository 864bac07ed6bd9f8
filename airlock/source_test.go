package airlock

import (
	"context"
	"errors"
	"testing"

	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestSourceSpec(t *testing.T) {
	f := &Files{Root: t.TempDir()}
	spec := []byte(`{"openapi": "3.0.3", "info": {"title": "Pets", "version": "1"}}`)
	hash, err := f.PutSpec(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SaveApproval(Approval{ID: "airlock-" + hash, Slug: "pets", ToolIDs: []string{"pets.list_pets"}}); err != nil {
		t.Fatal(err)
	}
	got, err := f.SourceSpec(context.Background(), "pets.list_pets")
	if err != nil || string(got) != string(spec) {
		t.Fatalf("SourceSpec = %q, %v", got, err)
	}
	// What approvals record: the review's workflow id, which carries the
	// hash's first 16 digits, and (since it is kept) the hash itself.
	if err := f.SaveApproval(Approval{ID: "airlock-" + hash[:16], Slug: "pets2", ToolIDs: []string{"pets2.list_pets"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.SaveApproval(Approval{ID: "airlock-x", SpecHash: hash, Slug: "pets3", ToolIDs: []string{"pets3.list_pets"}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"pets2.list_pets", "pets3.list_pets"} {
		if got, err := f.SourceSpec(context.Background(), id); err != nil || string(got) != string(spec) {
			t.Fatalf("SourceSpec(%s) = %q, %v", id, got, err)
		}
	}
	for _, id := range []string{"nope.list", "noslug"} {
		if _, err := f.SourceSpec(context.Background(), id); !errors.Is(err, fault.ErrNotFound) {
			t.Errorf("SourceSpec(%q) = %v, want not found", id, err)
		}
	}
}
