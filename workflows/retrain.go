package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
)

// RetrainWorkflowID is the id of an on-demand retrain (POST
// /api/v1/admin/ranking/retrain); one runs at a time. Scheduled runs are
// started by the retrain schedule with ids of their own.
const RetrainWorkflowID = "ranking-retrain"

// RetrainQuery is the query that returns a retrain's RetrainResult so far.
const RetrainQuery = "progress"

// Retrain stages, in order (RetrainResult.Stage).
const (
	RetrainTraining   = "training"
	RetrainEvaluating = "evaluating"
	RetrainDeciding   = "deciding"
	RetrainDone       = "done"
)

// RetrainInput configures a retrain; zero fields take the defaults of
// retrain.Options and retrain.Gate.
type RetrainInput struct {
	Options retrain.Options `json:"options"`
	Gate    retrain.Gate    `json:"gate"`
}

// RetrainResult is a retrain's outcome (and, while it runs, its progress).
type RetrainResult struct {
	Stage string `json:"stage"`
	// Version is the candidate's id, once trained.
	Version string `json:"version,omitempty"`
	// Compared is the version the candidate was measured against (""
	// for the baseline).
	Compared  string           `json:"compared,omitempty"`
	Counts    retrain.Counts   `json:"counts"`
	Current   *retrain.Figures `json:"current,omitempty"`
	Candidate *retrain.Figures `json:"candidate,omitempty"`
	Gate      retrain.Gate     `json:"gate"`
	Promoted  bool             `json:"promoted"`
	Status    string           `json:"status,omitempty"`
	Reason    string           `json:"reason,omitempty"`
}

// RetrainWorkflow trains a candidate ranking model (adapter + weights)
// from the catalogue and the served queries, evaluates it against the
// current model on the most recent served queries it never saw, and
// promotes it only when the gate (retrain.Gate.Decide) says it is better.
// The candidate travels as a version id; its matrix stays in the store.
func RetrainWorkflow(ctx workflow.Context, in RetrainInput) (RetrainResult, error) {
	in.Gate = in.Gate.WithDefaults()
	r := RetrainResult{Stage: RetrainTraining, Gate: in.Gate}
	if err := workflow.SetQueryHandler(ctx, RetrainQuery, func() (RetrainResult, error) { return r, nil }); err != nil {
		return r, err
	}
	var a *activities.Retrain
	// Training reads the catalogue and the events and fits the adapter
	// (seconds to minutes); a retry starts it again, so few.
	train := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 2, NonRetryableErrorTypes: []string{activities.ErrTypeInvalidInput}},
	})
	var tc activities.TrainedCandidate
	if err := workflow.ExecuteActivity(train, a.TrainCandidate, activities.TrainCandidateInput{Options: in.Options}).Get(ctx, &tc); err != nil {
		return r, err
	}
	r.Version, r.Counts, r.Stage = tc.ID, tc.Counts, RetrainEvaluating
	// Evaluation replays the held-out queries twice; it writes only the
	// figures, so retrying it is safe.
	eval := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 15 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrTypeInvalidInput}},
	})
	var ev retrain.Evaluation
	if err := workflow.ExecuteActivity(eval, a.EvaluateCandidate, tc.ID).Get(ctx, &ev); err != nil {
		return r, err
	}
	r.Compared, r.Current, r.Candidate, r.Stage = ev.CurrentVersion, &ev.Current, &ev.Candidate, RetrainDeciding
	r.Promoted, r.Reason = in.Gate.Decide(ev.Current, ev.Candidate)
	// Concluding is idempotent (it sets the same status again).
	conclude := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrTypeInvalidInput}},
	})
	if err := workflow.ExecuteActivity(conclude, a.ConcludeCandidate, activities.ConcludeInput{
		ID: tc.ID, Promote: r.Promoted, Reason: r.Reason, Gate: in.Gate,
	}).Get(ctx, &r.Status); err != nil {
		return r, err
	}
	r.Stage = RetrainDone
	return r, nil
}
