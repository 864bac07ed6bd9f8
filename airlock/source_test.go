package airlock

import (
	"errors"
	"testing"

	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestSourceSpec(t *testing.T) {
	f := &Files{Root: t.TempDir()}
	spec := []byte(`{"openapi": "3.0.3", "info": {"title": "Pets", "version": "1"}}`)
	hash, err := f.PutSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SaveApproval(Approval{ID: "airlock-" + hash, Slug: "pets", ToolIDs: []string{"pets.list_pets"}}); err != nil {
		t.Fatal(err)
	}
	got, err := f.SourceSpec("pets.list_pets")
	if err != nil || string(got) != string(spec) {
		t.Fatalf("SourceSpec = %q, %v", got, err)
	}
	for _, id := range []string{"nope.list", "noslug"} {
		if _, err := f.SourceSpec(id); !errors.Is(err, fault.ErrNotFound) {
			t.Errorf("SourceSpec(%q) = %v, want not found", id, err)
		}
	}
}
