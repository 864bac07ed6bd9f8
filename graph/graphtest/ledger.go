package graphtest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func testCallLedger(t *testing.T, open func(*testing.T) graph.Store) {
	var l graph.CallLedger = fresh(t, open)
	CallLedgerContract(t, l)
}

// CallLedgerContract checks a graph.CallLedger: reservations tallied by
// time and cost, refusals that store nothing, completions that move the
// spent total, imports once per source, and concurrent reservations that
// never overrun a limit together.
func CallLedgerContract(t *testing.T, l graph.CallLedger) {
	t.Helper()
	t0 := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	pass := func(graph.CallTally) error { return nil }
	first, tally, err := l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap1", Tool: "get", UserID: "u1", At: t0, Cost: 0.5}, []time.Time{t0}, pass)
	if err != nil || first.ID <= 0 || tally.Spent != 0 || len(tally.Calls) != 1 || tally.Calls[0] != 0 {
		t.Fatalf("first reservation = %+v, tally %+v, %v", first, tally, err)
	}
	second, _, err := l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap1", Tool: "get", At: t0.Add(time.Minute), Cost: 0.5}, nil, pass)
	if err != nil || second.ID <= first.ID {
		t.Fatalf("second reservation = %+v, %v; want a larger id than %d", second, err, first.ID)
	}
	_, tally, err = l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap1", At: t0.Add(2 * time.Minute), Cost: 1},
		[]time.Time{t0.Add(30 * time.Second), t0, t0.Add(time.Hour)}, func(tl graph.CallTally) error {
			if tl.Calls[0] != 1 || tl.Calls[1] != 2 || tl.Calls[2] != 0 || tl.Spent != 1 {
				t.Errorf("tally seen by check = %+v; want calls [1 2 0] since each time, spent 1", tl)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, tl, _ := l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "other", At: t0}, []time.Time{t0}, pass); tl.Calls[0] != 0 || tl.Spent != 0 {
		t.Errorf("another approval's tally = %+v, want its own (empty)", tl)
	}

	refused := errors.New("over quota")
	if _, _, err := l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap1", At: t0}, nil, func(graph.CallTally) error { return refused }); err != refused {
		t.Errorf("a refusing check: err = %v, want its own error as it is", err)
	}
	recs, err := l.CallRecords(ctx, "ap1", 0)
	if err != nil || len(recs) != 3 {
		t.Fatalf("CallRecords = %d records, %v; want 3 (the refused call is not stored)", len(recs), err)
	}
	if recs[0].ID != first.ID || recs[0].Tool != "get" || recs[0].UserID != "u1" || !recs[0].At.Equal(t0) || recs[0].Cost != 0.5 {
		t.Errorf("first record = %+v, want %+v", recs[0], first)
	}

	// Completing a call records its outcome; a cost set to 0 (the API was
	// never reached) leaves the spent total.
	done := first
	done.Done, done.Success, done.Stage, done.LatencyMs, done.Cost = true, false, "request", 12, 0
	if err := l.CompleteCall(ctx, done); err != nil {
		t.Fatal(err)
	}
	if _, tl, _ := l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap1", At: t0}, nil, pass); tl.Spent != 1.5 {
		t.Errorf("spent after a completion refunded 0.5 = %v, want 1.5", tl.Spent)
	}
	recs, _ = l.CallRecords(ctx, "ap1", 1)
	if len(recs) != 1 || !recs[0].Done || recs[0].Stage != "request" || recs[0].LatencyMs != 12 || recs[0].Cost != 0 {
		t.Errorf("completed record = %+v", recs)
	}
	if err := l.CompleteCall(ctx, graph.CallRecord{ID: 1 << 40, ApprovalID: "ap1"}); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("CompleteCall(unknown id) = %v, want ErrNotFound", err)
	}
	if _, _, err := l.ReserveCall(ctx, graph.CallRecord{}, nil, pass); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("ReserveCall without an approval: %v, want ErrInvalid", err)
	}

	// Concurrent reservations against a limit of 12 calls (replicas do the
	// same through one store): exactly 12 pass.
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed := 0
	limit := func(tl graph.CallTally) error {
		if tl.Calls[0] >= 12 {
			return refused
		}
		return nil
	}
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 4; i++ {
				_, _, err := l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "busy", At: t0, Cost: 1}, []time.Time{t0}, limit)
				if err == nil {
					mu.Lock()
					passed++
					mu.Unlock()
				} else if err != refused {
					t.Errorf("concurrent reservation: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if got, _ := l.CallRecords(ctx, "busy", 0); passed != 12 || len(got) != 12 {
		t.Errorf("24 concurrent reservations under a limit of 12: %d passed, %d stored", passed, len(got))
	}

	// Import: once per source, with new ids, counted in the totals.
	old := []graph.CallRecord{{ID: 1, ApprovalID: "ap2", Tool: "x", At: t0, Cost: 2, Done: true, Success: true}, {ID: 2, ApprovalID: "ap2", At: t0, Cost: 3}}
	if ok, err := l.ImportCalls(ctx, "host-a/ledger.jsonl#abc", old); err != nil || !ok {
		t.Fatalf("first import = %v, %v; want true", ok, err)
	}
	if ok, err := l.ImportCalls(ctx, "host-a/ledger.jsonl#abc", old); err != nil || ok {
		t.Errorf("second import of the same source = %v, %v; want false", ok, err)
	}
	got, _ := l.CallRecords(ctx, "ap2", 0)
	if len(got) != 2 || !got[0].Success || got[0].Tool != "x" || got[0].ID == got[1].ID {
		t.Errorf("imported records = %+v", got)
	}
	if _, tl, _ := l.ReserveCall(ctx, graph.CallRecord{ApprovalID: "ap2", At: t0}, []time.Time{t0}, pass); tl.Spent != 5 || tl.Calls[0] != 2 {
		t.Errorf("tally after import = %+v, want 2 calls and 5 spent", tl)
	}
	if _, err := l.ImportCalls(ctx, "", old); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("import without a source: %v, want ErrInvalid", err)
	}
}
