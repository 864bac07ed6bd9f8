package graph

import (
	"context"
	"time"
)

// Origin says where a usage event came from.
const (
	// OriginObserved is a run Toolsmith made itself and saw end: an
	// execution, a verb's substitution or plan step, an MCP call_tool.
	OriginObserved = "observed"
	// OriginReported is a caller's report of a use (the session events
	// and usage batch routes), stored only when it was backed by an
	// observed run or imported by an admin.
	OriginReported = "reported"
)

// RunClaim asks for observed runs to back a caller's reports: up to N of
// UserID's observed runs of ToolID at or after Since, that back no report
// yet, successful ones only when Successful.
type RunClaim struct {
	UserID     string
	ToolID     string
	Since      time.Time
	N          int
	Successful bool
}

// RunClaims lets each observed run back at most one report. It is part of
// Store.
type RunClaims interface {
	// ClaimRuns marks up to c.N matching runs (oldest first) as backing a
	// report and returns how many it marked; a run once marked is never
	// marked again, even by concurrent calls. An empty UserID or ToolID, or
	// N <= 0, claims nothing. Events with an origin other than
	// OriginObserved (reports, events written before origins were kept)
	// are never claimed.
	ClaimRuns(ctx context.Context, c RunClaim) (int, error)
}
