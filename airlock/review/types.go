package review

import (
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/workflows"
)

// Review statuses, as State.Status and Outcome.Status report them.
const (
	StatusPreparing = workflows.AirlockPreparing
	StatusPending   = workflows.AirlockPending
	StatusOnboarded = workflows.AirlockOnboarded
)

// Decision names, as DecisionResult.Decision reports them.
const (
	DecisionApprove = workflows.SignalApprove
	DecisionReject  = workflows.SignalReject
)

// Pending is one running review, as the pending list shows it.
type Pending struct {
	ID         string `json:"id"`
	SpecHash   string `json:"specHash"`
	Title      string `json:"title"`
	Location   string `json:"location"`
	Operations int    `json:"operations"`
	Warnings   int    `json:"warnings"`
	// Slug is the wrapper name an approval gives the spec (reserved when
	// the review was prepared): its tools are named <slug>.<operation>.
	Slug string `json:"slug,omitempty"`
	// NameTakenBy is set when the name the spec's title gives is already
	// another spec's (the review's slug is then the name it gets);
	// NamePending when that spec is itself a pending review.
	NameTakenBy string `json:"nameTakenBy,omitempty"`
	NamePending bool   `json:"namePending,omitempty"`
	Status      string `json:"status"`
	StartedAt   string `json:"startedAt"`
}

// Outcome is how a review ended (or is ending): onboarded with its tools,
// rejected with the reviewer's reason, failed at a stage.
type Outcome struct {
	SpecHash string   `json:"specHash"`
	Status   string   `json:"status"`
	Reviewer string   `json:"reviewer,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	ToolIDs  []string `json:"toolIds,omitempty"`
	// ToolCount is how many tools the review registered, counted before
	// ToolIDs is narrowed to the tools a caller may execute: the count is
	// not secret, the ids are.
	ToolCount int `json:"toolCount,omitempty"`
	// Stage is the onboarding stage that failed (status failed).
	Stage    string   `json:"failedStage,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// ClosedGaps are the gaps the onboarded tools closed.
	ClosedGaps []string `json:"closedGaps,omitempty"`
}

// Narrowed reports whether the outcome registered tools it does not name
// (View and Decided left out those the caller may not execute): a page
// showing the review must then not spell an operation's tool id either,
// since it may be one of them.
func (o *Outcome) Narrowed() bool { return o != nil && len(o.ToolIDs) < o.ToolCount }

// State is a review's present state: the prepared review of the spec, the
// policy it was approved with, and its outcome once decided.
type State struct {
	Status  string          `json:"status"`
	Review  airlock.Review  `json:"review"`
	Policy  *airlock.Policy `json:"policy,omitempty"`
	Outcome *Outcome        `json:"outcome,omitempty"`
	Ignored []string        `json:"ignoredSignals,omitempty"`
	// Gaps are the verbs nothing fulfilled that this review was proposed
	// for; onboarding closes them.
	Gaps []string `json:"gaps,omitempty"`
	// Build is set for a tool built from scratch: its program, rounds
	// with their test results, hosts, model and prompt version.
	Build *workflows.BuildState `json:"build,omitempty"`
}

// Decidable is whether a decision may still be sent. A spec's review
// takes one while it is being prepared (it waits for the review); a
// build takes one only once a program has passed (status pending).
func (s State) Decidable() bool {
	if s.Build != nil {
		return s.Status == StatusPending
	}
	return s.Status == StatusPending || s.Status == StatusPreparing
}

// notPending says why a review takes no decision, in words.
func (s State) notPending(id string) string {
	if b := s.Build; b != nil && b.Status == workflows.BuildWriting {
		return fmt.Sprintf("%s is still writing and testing its program (round %d), not pending: decide once a program has passed (GET /api/v1/builds/%s)",
			id, len(b.Rounds)+1, id)
	}
	if b := s.Build; b != nil {
		return fmt.Sprintf("%s is %s, not pending", id, b.Status)
	}
	return fmt.Sprintf("review %s is %s, not pending", id, s.Status)
}

// DecisionResult is what sending a decision did: the decision, and the
// review's outcome when it ended within the wait.
type DecisionResult struct {
	ID       string   `json:"id"`
	Decision string   `json:"decision"`
	Outcome  *Outcome `json:"outcome,omitempty"`
}

// Decided is one review that ended, with its decision.
type Decided struct {
	ID       string `json:"id"`
	Title    string `json:"title,omitempty"`
	Location string `json:"location,omitempty"`
	// Status is the review's last state (onboarded, rejected, failed,
	// expired…), or Temporal's execution status when it cannot be read.
	Status   string    `json:"status"`
	Reviewer string    `json:"reviewer,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	ToolIDs  []string  `json:"toolIds,omitempty"`
	ClosedAt time.Time `json:"closedAt"`
}

// DecidedPage is a page of ended reviews, newest first; Next is the
// cursor of the next page ("" on the last).
type DecidedPage struct {
	Reviews []Decided
	Next    string
}

// TimelineEntry is one step of a review: opened, its preflight scan, a
// decision, the wrapper's build and tests, the end.
type TimelineEntry struct {
	At   time.Time `json:"at"`
	Kind string    `json:"kind"` // opened, scan, decision, build, step, ended
	// What says what happened, for people; Outcome is completed, failed,
	// timed out or "" for a point in time; Who is a decision's reviewer.
	What    string `json:"what"`
	Outcome string `json:"outcome,omitempty"`
	Who     string `json:"who,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Ms is how long a step ran.
	Ms int64 `json:"ms,omitempty"`
}

// ScanOutcome is the first scan of a new source.
type ScanOutcome struct {
	// Status is completed, running (the wait ended first) or failed.
	Status string `json:"status"`
	// Report is the source's scan report; its error says why a fetch failed.
	Report *ScanReport `json:"report,omitempty"`
	Error  string      `json:"error,omitempty"`
}

// ScanReport is what the scan of one source found: how many specs, which
// are new (each opens a review), how many were known, the definitions
// indexed, the specs that could not be read, and the fetch's error.
type ScanReport struct {
	SourceID    string      `json:"sourceId"`
	Specs       int         `json:"specs"`
	NewSpecs    []FoundSpec `json:"newSpecs"`
	Known       int         `json:"known"`
	Definitions int         `json:"definitions"`
	Errors      []string    `json:"errors,omitempty"`
	Error       string      `json:"error,omitempty"`
}

// FoundSpec is a spec a scan saw for the first time.
type FoundSpec struct {
	Hash     string `json:"hash"`
	Location string `json:"location"`
}

// Scan statuses, as ScanOutcome.Status reports them.
const (
	ScanRunning   = workflows.StatusRunning
	ScanCompleted = workflows.StatusCompleted
	ScanFailed    = workflows.StatusFailed
)

func outcomeOf(o *workflows.AirlockOutcome) *Outcome {
	if o == nil {
		return nil
	}
	return &Outcome{SpecHash: o.SpecHash, Status: o.Status, Reviewer: o.Reviewer, Reason: o.Reason, ToolIDs: o.ToolIDs, ToolCount: len(o.ToolIDs),
		Stage: o.Stage, Warnings: o.Warnings, ClosedGaps: o.ClosedGaps}
}

func stateOf(st workflows.AirlockState) State {
	out := State{Status: st.Status, Review: st.Review.Airlock(), Outcome: outcomeOf(st.Outcome), Ignored: st.Ignored, Gaps: st.Gaps, Build: st.Build}
	if st.Policy != nil {
		p := st.Policy.Airlock()
		out.Policy = &p
	}
	return out
}

func scanReportOf(r workflows.ScanReport) *ScanReport {
	out := &ScanReport{SourceID: r.SourceID, Specs: r.Specs, Known: r.Known, Definitions: r.Definitions, Errors: r.Errors, Error: r.Error}
	if r.NewSpecs != nil {
		out.NewSpecs = make([]FoundSpec, len(r.NewSpecs))
		for i, s := range r.NewSpecs {
			out.NewSpecs[i] = FoundSpec{Hash: s.Hash, Location: s.Location}
		}
	}
	return out
}
