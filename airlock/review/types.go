package review

import (
	"time"

	"github.com/toolsmith/toolsmith/activities"
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
	// Stage is the onboarding stage that failed (status failed).
	Stage    string   `json:"failedStage,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// ClosedGaps are the gaps the onboarded tools closed.
	ClosedGaps []string `json:"closedGaps,omitempty"`
}

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
}

// Decidable is whether a decision may still be sent.
func (s State) Decidable() bool {
	return s.Status == StatusPending || s.Status == StatusPreparing
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
	Report *activities.ScanSourceOutput `json:"report,omitempty"`
	Error  string                       `json:"error,omitempty"`
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
	return &Outcome{SpecHash: o.SpecHash, Status: o.Status, Reviewer: o.Reviewer, Reason: o.Reason, ToolIDs: o.ToolIDs,
		Stage: o.Stage, Warnings: o.Warnings, ClosedGaps: o.ClosedGaps}
}

func stateOf(st workflows.AirlockState) State {
	return State{Status: st.Status, Review: st.Review, Policy: st.Policy, Outcome: outcomeOf(st.Outcome), Ignored: st.Ignored, Gaps: st.Gaps}
}
