package airlock

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestFileLedgerAndNotificationsSurviveRestarts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := OpenFileLedger(filepath.Join(dir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	r, _ := l.Add(ctx, CallRecord{ApprovalID: "a", Tool: "t", At: now, Cost: 0.5})
	r.Done, r.Success = true, true
	if err := l.Complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	_, _ = l.Add(ctx, CallRecord{ApprovalID: "a", Tool: "t", At: now, Cost: 0.5})
	again, err := OpenFileLedger(filepath.Join(dir, "ledger.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	n, spent, _ := again.Count(ctx, "a", now.Add(-time.Hour))
	if n != 2 || spent != 1 || !again.Records()[0].Success {
		t.Fatalf("after reopen: n=%d spent=%v records=%+v", n, spent, again.Records())
	}
	if r3, _ := again.Add(ctx, CallRecord{ApprovalID: "a"}); r3.ID != 3 {
		t.Fatalf("ids continue after reopen: %d", r3.ID)
	}
	nl, _ := OpenNotificationLog(filepath.Join(dir, "n.jsonl"))
	_ = nl.Notify(ctx, Notification{Kind: "soft_budget", Subject: "pets"})
	_ = nl.Notify(ctx, Notification{Kind: "disabled", Subject: "pets"})
	nl2, _ := OpenNotificationLog(filepath.Join(dir, "n.jsonl"))
	if got := nl2.List(1); len(got) != 1 || got[0].Kind != "disabled" || got[0].At.IsZero() {
		t.Fatalf("notifications after reopen: %+v", got)
	}
}
