package review

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// An approval whose generated ids fall in a namespace held by tools the
// spec did not onboard (a module's calendar tools, one of them hidden
// from the approver) is refused on "slug" before it is sent, naming only
// the tools the approver may see and not counting the others; the review
// stays pending. A re-approval of the spec that onboarded the tools is
// sent as before.
func TestApproveRefusesAForeignNamespace(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	put := func(id, perm, origin, spec string) {
		m, _ := json.Marshal(map[string]any{"toolId": id, "source": map[string]string{"origin": origin, "specUrl": spec}})
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO_THING", Name: id, Category: "misc",
			Status: graph.StatusActive, Permissions: []string{perm}}, Description: "A tool.", Manifest: m}); err != nil {
			t.Fatal(err)
		}
	}
	put("calendar.create_event", access.AnyOf([]string{"calendar"}, nil), "module", "")
	put("calendar.list_events", "public", "module", "")
	put("pets.list_pets", "public", "openapi", "https://specs.example/pets.yaml")
	f := &fake{states: map[string]workflows.AirlockState{}, decided: map[string]workflows.Decision{}}
	s := New(f, st, Config{})
	f.states["airlock-cal"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Slug: "calendar", Location: "https://evil.example/calendar.yaml"}}
	f.states["airlock-pets"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Slug: "pets", Location: "https://specs.example/pets.yaml"}}
	f.states["airlock-pets2"] = workflows.AirlockState{Status: workflows.AirlockPending, Review: workflows.SpecReview{Slug: "pets", Location: "https://other.example/pets.yaml"}}
	admin := access.Caller{UserID: "key:adm", Level: "admin"}

	_, err = s.Approve(ctx, "airlock-cal", "adm", admin, airlock.Policy{RequiredLevel: "guest"}, 0)
	fs := fault.Fields(err)
	if !errors.Is(err, fault.ErrInvalid) || len(fs) != 1 || fs[0].Path != "slug" {
		t.Fatalf("approval into the calendar namespace: %v", err)
	}
	if msg := fs[0].Message; !strings.Contains(msg, "calendar.list_events") || strings.Contains(msg, "create_event") || strings.Contains(msg, "may not") {
		t.Fatalf("the refusal names %q", msg)
	}
	if _, err := s.Approve(ctx, "airlock-pets2", "adm", admin, airlock.Policy{}, 0); len(fault.Fields(err)) != 1 || !strings.Contains(err.Error(), "pets.list_pets") {
		t.Fatalf("another spec's namespace: %v", err)
	}
	if len(f.decided) != 0 {
		t.Fatalf("refused approvals were sent: %v", f.decided)
	}
	if _, err := s.Approve(ctx, "airlock-pets", "adm", admin, airlock.Policy{}, 0); err != nil || f.decided["airlock-pets"].Approve == nil {
		t.Fatalf("re-approval of the same spec: %v", err)
	}
}
