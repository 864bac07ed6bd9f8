package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// CallRecord is one execution of an onboarded (airlock) tool, as the call
// ledger keeps it.
type CallRecord struct {
	ID         int64     `json:"id"`
	ApprovalID string    `json:"approvalId"`
	Tool       string    `json:"tool"`
	UserID     string    `json:"userId,omitempty"`
	At         time.Time `json:"at"`
	Cost       float64   `json:"cost"`
	Done       bool      `json:"done"`
	Success    bool      `json:"success"`
	Stage      string    `json:"stage,omitempty"`
	LatencyMs  int64     `json:"latencyMs"`
}

// CallTally is what ReserveCall counted of an approval's calls before
// the one it reserves.
type CallTally struct {
	// Calls[i] counts the calls started at or after since[i].
	Calls []int `json:"calls"`
	// Spent is the cost charged for all the approval's calls ever.
	Spent float64 `json:"spent"`
}

// CallLedger is the airlock's execution ledger, shared by every worker
// and API replica over one store, so rate limits, daily quotas and budgets
// of an approval count every call wherever it ran. It is part of Store.
type CallLedger interface {
	// ReserveCall, in one transaction that excludes every other
	// ReserveCall of the same approval from any process, tallies
	// r.ApprovalID's calls since each time of since and the cost spent,
	// calls check with the tally and, when check returns nil, stores r
	// with a new ID (returned). check's error is returned as it is and
	// nothing is stored. r needs an ApprovalID (fault.ErrInvalid).
	ReserveCall(ctx context.Context, r CallRecord, since []time.Time, check func(CallTally) error) (CallRecord, CallTally, error)
	// CompleteCall replaces a stored record, found by ID, once its call is
	// over; the approval's spent total follows its new cost. An unknown ID
	// is fault.ErrNotFound.
	CompleteCall(ctx context.Context, r CallRecord) error
	// CallRecords returns an approval's records, oldest first, at most
	// limit (<= 0: 1000).
	CallRecords(ctx context.Context, approvalID string, limit int) ([]CallRecord, error)
	// ImportCalls stores records kept elsewhere (a process's own ledger
	// file, before ledgers moved into the store), each with a new ID, all
	// or none, once per source: it returns false, storing nothing, when
	// source was imported before.
	ImportCalls(ctx context.Context, source string, recs []CallRecord) (bool, error)
}

// ValidateCall checks what both stores require of a call record: an
// approval id.
func ValidateCall(r CallRecord) error {
	if r.ApprovalID == "" {
		return fmt.Errorf("call record approvalId is required: %w", fault.ErrInvalid)
	}
	return nil
}

// CallLimit is the page size of CallRecords: 1000 when unset, at most 10000.
func CallLimit(n int) int { return Limit(n, 1000, 10000) }
