package airlock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// openShared opens one SQLite file twice, as two processes (a worker and
// an API replica, or two workers) do.
func openShared(t testing.TB) (*sqlite.Store, *sqlite.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	var out [2]*sqlite.Store
	for i := range out {
		s, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out[0], out[1]
}

func TestLedgerFileImportedOnce(t *testing.T) {
	ctx := context.Background()
	store, _ := openShared(t)
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	// What the old per-process journal wrote: a reservation, its
	// completion (same id), another reservation.
	for _, r := range []CallRecord{
		{ID: 1, ApprovalID: "a", Tool: "t", At: now, Cost: 0.5},
		{ID: 1, ApprovalID: "a", Tool: "t", At: now, Cost: 0.5, Done: true, Success: true},
		{ID: 2, ApprovalID: "a", Tool: "t", At: now, Cost: 0.5},
	} {
		if err := appendLine(path, r); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	n, err := ImportLedgerFile(ctx, path, store)
	if err != nil || n != 2 {
		t.Fatalf("import = %d, %v; want 2 calls", n, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the imported file stays at its path: %v", err)
	}
	recs, _ := store.CallRecords(ctx, "a", 0)
	if len(recs) != 2 || !recs[0].Success || recs[1].Done {
		t.Fatalf("stored calls = %+v", recs)
	}
	// A crash between the import and the rename leaves the file: the
	// next start imports nothing twice.
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := ImportLedgerFile(ctx, path, store); err != nil || n != 0 {
		t.Errorf("second import of the same file = %d, %v; want 0", n, err)
	}
	if n, err := ImportLedgerFile(ctx, path, store); err != nil || n != 0 {
		t.Errorf("import without a file = %d, %v; want 0", n, err)
	}
	if recs, _ := store.CallRecords(ctx, "a", 0); len(recs) != 2 {
		t.Errorf("after re-imports %d calls, want 2", len(recs))
	}
	// Policies count the imported calls.
	ex := &Executor{Ledger: store, Now: func() time.Time { return now }}
	_, _, err = ex.reserve(ctx, Approval{ID: "a", Slug: "pets", Policy: Policy{QuotaPerDay: 2}}, "t", access.Caller{})
	if !errors.Is(err, fault.ErrLimit) || !strings.Contains(err.Error(), "daily quota") {
		t.Errorf("a quota of 2 after 2 imported calls: %v, want the daily quota refusal", err)
	}
}

// TestLedgerCountsAcrossProcesses: two executors over one store file (a
// worker and an API replica) share the approval's quota and budget.
func TestLedgerCountsAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	s1, s2 := openShared(t)
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, b := &Executor{Ledger: s1, Now: clock}, &Executor{Ledger: s2, Now: clock}
	ap := Approval{ID: "ap", Slug: "pets", Policy: Policy{QuotaPerDay: 4, CostPerCall: 1, HardBudget: 10}}
	for i, ex := range []*Executor{a, b, a, b} {
		if _, _, err := ex.reserve(ctx, ap, "get", access.Caller{}); err != nil {
			t.Fatalf("call %d of a quota of 4: %v", i+1, err)
		}
	}
	for _, ex := range []*Executor{a, b} {
		if _, _, err := ex.reserve(ctx, ap, "get", access.Caller{}); !errors.Is(err, fault.ErrLimit) {
			t.Errorf("the 5th call, through either process: %v, want ErrLimit", err)
		}
	}
	ap.Policy.QuotaPerDay = 0
	now = now.Add(25 * time.Hour) // a new day: the budget still counts every call
	for i := 0; i < 6; i++ {
		if _, _, err := []*Executor{a, b}[i%2].reserve(ctx, ap, "get", access.Caller{}); err != nil {
			t.Fatalf("call %d within the budget of 10 (4 spent): %v", i+1, err)
		}
	}
	_, _, err := b.reserve(ctx, ap, "get", access.Caller{})
	if !errors.Is(err, fault.ErrLimit) || !strings.Contains(err.Error(), "hard budget") {
		t.Errorf("11th call against a hard budget of 10: %v", err)
	}
}

// TestNotificationsSharedByReplicas: a notification raised by one process
// (a worker's health check) is listed by another over the same store (an
// API replica), newest first, and only the newest NotificationKeep stay.
func TestNotificationsSharedByReplicas(t *testing.T) {
	ctx := context.Background()
	worker, api := openShared(t)
	w, a := NewNotificationLog(worker), NewNotificationLog(api)
	if err := w.Notify(ctx, Notification{Kind: "soft_budget", Subject: "pets"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Notify(ctx, Notification{Kind: "disabled", Subject: "pets", Message: "3 failed probes"}); err != nil {
		t.Fatal(err)
	}
	got, err := a.List(ctx, 0)
	if err != nil || len(got) != 2 || got[0].Kind != "disabled" || got[0].Message != "3 failed probes" || got[0].At.IsZero() || got[1].Kind != "soft_budget" {
		t.Fatalf("notifications listed by the other process: %+v, %v", got, err)
	}
	if got, _ := a.List(ctx, 1); len(got) != 1 || got[0].Kind != "disabled" {
		t.Fatalf("newest notification: %+v", got)
	}
	for i := 0; i < NotificationKeep; i++ {
		if err := a.Notify(ctx, Notification{Kind: "soft_budget", Subject: fmt.Sprintf("api%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err = w.List(ctx, 10000)
	if err != nil || len(got) != NotificationKeep || got[0].Subject != fmt.Sprintf("api%d", NotificationKeep-1) || got[len(got)-1].Subject != "api0" {
		t.Fatalf("after %d more: %d kept (%v), newest %+v", NotificationKeep, len(got), err, got[:min(1, len(got))])
	}
}

// TestNotificationFileImportedOnce: the notifications file a process kept
// before they moved into the store is imported once, then listed by every
// process, and the file is renamed.
func TestNotificationFileImportedOnce(t *testing.T) {
	ctx := context.Background()
	store, other := openShared(t)
	path := filepath.Join(t.TempDir(), "notifications.jsonl")
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i, kind := range []string{"soft_budget", "disabled"} {
		if err := appendLine(path, Notification{Kind: kind, Subject: "pets", At: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if n, err := ImportNotificationFile(ctx, path, store); err != nil || n != 2 {
		t.Fatalf("import = %d, %v; want 2", n, err)
	}
	if _, err := os.Stat(path + ".imported"); err != nil {
		t.Errorf("the file is not renamed: %v", err)
	}
	// A crash between the import and the rename leaves the file: the next
	// start imports nothing twice.
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := ImportNotificationFile(ctx, path, other); err != nil || n != 0 {
		t.Errorf("second import = %d, %v; want 0", n, err)
	}
	if n, err := ImportNotificationFile(ctx, path, other); err != nil || n != 0 {
		t.Errorf("import without a file = %d, %v; want 0", n, err)
	}
	got, err := NewNotificationLog(other).List(ctx, 0)
	if err != nil || len(got) != 2 || got[0].Kind != "disabled" || !got[0].At.Equal(t0.Add(time.Hour)) || got[1].Kind != "soft_budget" {
		t.Fatalf("imported notifications = %+v, %v", got, err)
	}
}

// BenchmarkReserve is what the shared ledger adds to each call of an
// onboarded tool: one reservation (tally and record) and its completion,
// in a SQLite store shared by two processes, with none or 10,000 calls of
// the day recorded.
func BenchmarkReserve(b *testing.B) {
	for _, prior := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("recorded-%d", prior), func(b *testing.B) { benchmarkReserve(b, prior) })
	}
}

func benchmarkReserve(b *testing.B, prior int) {
	ctx := context.Background()
	s, _ := openShared(b)
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	ex := &Executor{Ledger: s, Now: func() time.Time { return now }}
	ap := Approval{ID: "ap", Slug: "pets", Policy: Policy{RateLimitPerMinute: 1 << 30, QuotaPerDay: 1 << 30, CostPerCall: 0.01, HardBudget: 1e9}}
	for i := 0; i < prior; i++ {
		now = now.Add(time.Second)
		if _, _, err := ex.reserve(ctx, ap, "get", access.Caller{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec, _, err := ex.reserve(ctx, ap, "get", access.Caller{})
		if err != nil {
			b.Fatal(err)
		}
		rec.Done, rec.Success = true, true
		if err := s.CompleteCall(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
}
