package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// TestRecordLaterLosesNothing queues events from many goroutines, then
// checks that Query (which flushes) and Close see every one, and that
// RecordLater after Close still records (synchronously).
func TestRecordLaterLosesNothing(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	l := audit.New(st)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := l.RecordLater(ctx, graph.AuditEvent{Action: "mcp.find_tools", Actor: fmt.Sprintf("key:%d", g)}); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	if err := l.Record(ctx, graph.AuditEvent{Action: "tools.register"}); err != nil {
		t.Fatal(err)
	}
	page, err := l.Query(ctx, graph.AuditQuery{Action: "mcp.find_tools", Limit: 1000})
	if err != nil || len(page.Items) != 1000 || page.Next == "" {
		t.Fatalf("after a flush: %d events (next %q), want the 1000 newest of 1600: %v", len(page.Items), page.Next, err)
	}
	_ = l.RecordLater(ctx, graph.AuditEvent{Action: "mcp.kb.stats"})
	l.Close()
	_ = l.RecordLater(ctx, graph.AuditEvent{Action: "mcp.kb.stats"}) // after Close: written at once
	all, err := st.AuditEvents(ctx, graph.AuditQuery{Action: "mcp.kb.stats"})
	if err != nil || len(all.Items) != 2 {
		t.Fatalf("events around Close: %d %v", len(all.Items), err)
	}
	n := 0
	for q := (graph.AuditQuery{Action: "mcp.find_tools", Limit: 1000}); ; {
		p, err := st.AuditEvents(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(p.Items)
		if p.Next == "" {
			break
		}
		q.Before = p.Next
	}
	if n != 1600 {
		t.Fatalf("stored %d of 1600 queued events", n)
	}
}

// TestRecordOutlivesTheCaller: a record made as the caller goes away (its
// context cancelled) is written all the same, with the
// request id the context carries.
func TestRecordOutlivesTheCaller(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := audit.New(st)
	ctx, cancel := context.WithCancel(audit.WithRequestID(context.Background(), "req-7"))
	cancel()
	if err := l.Record(ctx, graph.AuditEvent{Action: "tools.execute", Tool: "currency.convert"}); err != nil {
		t.Fatalf("record after the caller left: %v", err)
	}
	page, err := l.Query(context.Background(), graph.AuditQuery{Tool: "currency.convert"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].RequestID != "req-7" {
		t.Fatalf("events = %+v", page.Items)
	}
}

// TestQueryRefusesAMadeUpCursor: a before cursor that is not an event id
// is a 400 naming it, not the first page.
func TestQueryRefusesAMadeUpCursor(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := audit.New(st)
	for _, bad := range []string{"garbage", "1764115200000000000", "1764115200000000000-XYZ"} {
		if _, err := l.Query(context.Background(), graph.AuditQuery{Before: bad}); !errors.Is(err, fault.ErrMalformed) || fault.Fields(err)[0].Path != "before" {
			t.Errorf("before=%q: %v", bad, err)
		}
	}
	if _, err := l.Query(context.Background(), graph.AuditQuery{Before: audit.NewID(time.Now())}); err != nil {
		t.Errorf("a real id as cursor: %v", err)
	}
}

// TestQueryAsNamesOnlyExecutableTools: an admin reading the log sees every
// event, but a tool only the developer role may run is named
// access.HiddenTool (in Tool and in Detail), and filtering on it finds
// nothing; a tool action about an id no tool has reads the same, and a
// filter on that id finds none of them; events about other things (a key,
// a review) are shown and found as they are, and an owner reads the log
// whole.
func TestQueryAsNamesOnlyExecutableTools(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for id, perms := range map[string][]string{"deployer.deploy_app": {"role:developer"}, "currency.convert": {"public"}} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO", Name: id, Category: "c",
			Status: graph.StatusActive, Permissions: perms}, Description: "D.", Manifest: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	l := audit.New(st)
	for _, e := range []graph.AuditEvent{
		{Actor: "key:dev", Action: "tools.execute", Tool: "deployer.deploy_app", Outcome: "success", Detail: "ran deployer.deploy_app"},
		{Actor: "key:ana", Action: "tools.execute", Tool: "currency.convert", Outcome: "success"},
		{Actor: "key:root", Action: "admin.keys.revoke", Tool: "k123", Outcome: "success"},
		{Actor: "key:eve", Action: "tools.execute", Tool: "deployer.no_such_tool", Outcome: "failed", Detail: "tool deployer.no_such_tool: not found",
			Route: "POST /api/v1/tools/:toolId/execute"},
		{Actor: "key:mal", Action: "mcp.call_tool", Tool: "deployer.other", Outcome: "failed", Route: "mcp tools/call call_tool"},
		{Actor: "key:app", Action: "tools.pending.approve", Tool: "airlock-a", Outcome: "success", Route: "POST /api/v1/tools/pending/:id/approve"},
	} {
		if err := l.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	admin := access.Caller{Level: "admin"}
	page, err := l.QueryAs(ctx, admin, graph.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range page.Items {
		got[e.Actor] = e.Tool + "|" + e.Detail
	}
	// An execute of an id no tool has reads like a hidden tool's: their 404s
	// are alike on purpose, so their audit records must not tell them apart.
	want := map[string]string{"key:dev": access.HiddenTool + "|ran " + access.HiddenTool, "key:ana": "currency.convert|", "key:root": "k123|",
		"key:eve": access.HiddenTool + "|tool " + access.HiddenTool + ": not found", "key:mal": access.HiddenTool + "|", "key:app": "airlock-a|"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("admin reads %v, want %v", got, want)
	}
	if page, err := l.QueryAs(ctx, admin, graph.AuditQuery{Tool: "deployer.deploy_app"}); err != nil || len(page.Items) != 0 {
		t.Fatalf("a filter on a hidden tool: %+v %v", page.Items, err)
	}
	// A filter on an id no tool has finds none of the events whose caller
	// named it as a tool, as a hidden tool's finds none of its own; the
	// events about a review, key or source of that id are still found.
	for _, id := range []string{"deployer.no_such_tool", "deployer.other"} {
		if page, err := l.QueryAs(ctx, admin, graph.AuditQuery{Tool: id}); err != nil || len(page.Items) != 0 || page.Next != "" {
			t.Fatalf("a filter on the unknown %s: %+v %v", id, page, err)
		}
	}
	for _, q := range []graph.AuditQuery{{Tool: "airlock-a"}, {Tool: "k123"}} {
		if page, err := l.QueryAs(ctx, admin, q); err != nil || len(page.Items) != 1 || page.Items[0].Tool != q.Tool {
			t.Fatalf("a filter on %s: %+v %v", q.Tool, page.Items, err)
		}
	}
	// Pages over the events of an unknown id that name no tool skip those
	// that do, and their cursor leads on to the rest.
	for i := range 3 {
		for _, e := range []graph.AuditEvent{
			{Actor: "key:eve", Action: "tools.execute", Tool: "airlock-b", Outcome: "failed", Route: "POST /api/v1/tools/:toolId/execute"},
			{Actor: fmt.Sprintf("key:app%d", i), Action: "tools.pending.approve", Tool: "airlock-b", Outcome: "success", Route: "POST /api/v1/tools/pending/:id/approve"},
		} {
			if err := l.Record(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	var actors []string
	for q := (graph.AuditQuery{Tool: "airlock-b", Limit: 2}); ; {
		page, err := l.QueryAs(ctx, admin, q)
		if err != nil || len(page.Items) > 2 {
			t.Fatalf("a page of airlock-b: %+v %v", page, err)
		}
		for _, e := range page.Items {
			actors = append(actors, e.Actor)
		}
		if page.Next == "" {
			break
		}
		q.Before = page.Next
	}
	if fmt.Sprint(actors) != "[key:app2 key:app1 key:app0]" {
		t.Fatalf("the pages of airlock-b read %v", actors)
	}
	if page, err := l.QueryAs(ctx, access.Caller{Level: "owner"}, graph.AuditQuery{Tool: "deployer.no_such_tool"}); err != nil || len(page.Items) != 1 {
		t.Fatalf("the owner's filter on an unknown id: %+v %v", page.Items, err)
	}
	if _, err := l.QueryAs(ctx, admin, graph.AuditQuery{Tool: "deployer.deploy_app", Before: "garbage"}); !errors.Is(err, fault.ErrMalformed) {
		t.Fatalf("a bad cursor beside a hidden tool's filter: %v", err)
	}
	page, err = l.QueryAs(ctx, access.Caller{Level: "owner"}, graph.AuditQuery{Tool: "deployer.deploy_app"})
	if err != nil || len(page.Items) != 1 || page.Items[0].Detail != "ran deployer.deploy_app" {
		t.Fatalf("the owner reads %+v %v", page.Items, err)
	}
}
