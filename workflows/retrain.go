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
	Options RetrainOptions `json:"options"`
	Gate    RetrainGate    `json:"gate"`
}

// RetrainOptions tune training (retrain.Options; zero fields take the
// defaults).
type RetrainOptions struct {
	// HeldOut is the share of the most recent served queries kept out of
	// training for the replay.
	HeldOut float64 `json:"heldOut,omitempty"`
	// Tune is the share of the rest on which the weights are chosen.
	Tune float64 `json:"tune,omitempty"`
	// MaxEvents bounds how many recent served queries are read.
	MaxEvents int `json:"maxEvents,omitempty"`
	// Epochs of adapter training.
	Epochs int `json:"epochs,omitempty"`
	// Scales are the factors tried on the learned signals' weights.
	Scales []float64 `json:"scales,omitempty"`
}

// RetrainGate is the promotion rule (retrain.Gate).
type RetrainGate struct {
	Margin     float64 `json:"margin"`
	MinHeldOut int     `json:"minHeldOut"`
	MinTools   int     `json:"minTools"`
}

// RetrainFigures are a model's results on the held-out replay
// (retrain.Figures).
type RetrainFigures struct {
	R1    float64 `json:"r1"`
	R5    float64 `json:"r5"`
	MRR   float64 `json:"mrr"`
	N     int     `json:"n"`
	Tools int     `json:"tools"`
	// Substituted and Wrong are the shares of the held-out queries the
	// fulfilment decision substitutes, and substitutes a wrong tool.
	Substituted float64 `json:"substituted"`
	Wrong       float64 `json:"wrong"`
	// Fresh counts the held-out queries served after everything a version
	// an operator rolled back from had seen (N when none was).
	Fresh int `json:"fresh"`
	// Catalogue are the figures of the catalogue's own texts replayed as
	// queries (retrain.CatalogueFigures); nil when not measured.
	Catalogue *RetrainCatalogueFigures `json:"catalogue,omitempty"`
}

// RetrainCatalogueFigures are R@1, R@5 and MRR over N of the catalogue's
// own texts (retrain.CatalogueFigures).
type RetrainCatalogueFigures struct {
	R1  float64 `json:"r1"`
	R5  float64 `json:"r5"`
	MRR float64 `json:"mrr"`
	N   int     `json:"n"`
}

// Retrain is f as package retrain reads it (retrain.Gate.Decide).
func (f RetrainFigures) Retrain() retrain.Figures {
	out := retrain.Figures{R1: f.R1, R5: f.R5, MRR: f.MRR, N: f.N, Tools: f.Tools, Substituted: f.Substituted, Wrong: f.Wrong, Fresh: f.Fresh}
	if c := f.Catalogue; c != nil {
		out.Catalogue = &retrain.CatalogueFigures{R1: c.R1, R5: c.R5, MRR: c.MRR, N: c.N}
	}
	return out
}

// retrainFigures is f as this package carries it.
func retrainFigures(f retrain.Figures) RetrainFigures {
	out := RetrainFigures{R1: f.R1, R5: f.R5, MRR: f.MRR, N: f.N, Tools: f.Tools, Substituted: f.Substituted, Wrong: f.Wrong, Fresh: f.Fresh}
	if c := f.Catalogue; c != nil {
		out.Catalogue = &RetrainCatalogueFigures{R1: c.R1, R5: c.R5, MRR: c.MRR, N: c.N}
	}
	return out
}

// RetrainCounts say what a candidate was trained on (retrain.Counts).
type RetrainCounts struct {
	Tools          int `json:"tools"`
	CataloguePairs int `json:"cataloguePairs"`
	UsagePairs     int `json:"usagePairs"`
	// Recorded are the tools with a record as a first candidate (read by
	// the fulfilment decision once the version is promoted).
	Recorded int `json:"recorded"`
	Events   int `json:"events"`
	HeldOut  int `json:"heldOut"`
	Tune     int `json:"tune"`
}

// RetrainResult is a retrain's outcome (and, while it runs, its progress).
type RetrainResult struct {
	Stage string `json:"stage"`
	// Version is the candidate's id, once trained.
	Version string `json:"version,omitempty"`
	// Compared is the version the candidate was measured against (""
	// for the baseline).
	Compared  string          `json:"compared,omitempty"`
	Counts    RetrainCounts   `json:"counts"`
	Current   *RetrainFigures `json:"current,omitempty"`
	Candidate *RetrainFigures `json:"candidate,omitempty"`
	Gate      RetrainGate     `json:"gate"`
	Promoted  bool            `json:"promoted"`
	Status    string          `json:"status,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// RetrainWorkflow trains a candidate ranking model (adapter + weights)
// from the catalogue and the served queries, evaluates it against the
// current model on the most recent served queries it never saw, and
// promotes it only when the gate (retrain.Gate.Decide) says it is better.
// The candidate travels as a version id; its matrix stays in the store.
func RetrainWorkflow(ctx workflow.Context, in RetrainInput) (RetrainResult, error) {
	// The payloads are this package's; the rule is retrain's. The types
	// have the same fields, so each converts as is.
	gate := retrain.Gate(in.Gate).WithDefaults()
	r := RetrainResult{Stage: RetrainTraining, Gate: RetrainGate(gate)}
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
	if err := workflow.ExecuteActivity(train, a.TrainCandidate, activities.TrainCandidateInput{Options: retrain.Options(in.Options)}).Get(ctx, &tc); err != nil {
		return r, err
	}
	r.Version, r.Counts, r.Stage = tc.ID, RetrainCounts(tc.Counts), RetrainEvaluating
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
	current, candidate := retrainFigures(ev.Current), retrainFigures(ev.Candidate)
	r.Compared, r.Current, r.Candidate, r.Stage = ev.CurrentVersion, &current, &candidate, RetrainDeciding
	// The gate weighs the decision's wrong runs from version
	// "retrain-gate-wrong-runs" 1 on; runs started before judge the
	// ranking alone, as they did.
	judged := ev
	if workflow.GetVersion(ctx, "retrain-gate-wrong-runs", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		judged.Current.Wrong, judged.Candidate.Wrong = 0, 0
	}
	// From version "retrain-gate-rollback" 1 on, a rollback holds until
	// new use speaks for a change (retrain.Figures.Fresh); runs started
	// before count every held-out query as new, as they did.
	if workflow.GetVersion(ctx, "retrain-gate-rollback", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		judged.Current.Fresh, judged.Candidate.Fresh = judged.Current.N, judged.Candidate.N
	}
	// From version "retrain-gate-catalogue" 1 on, the catalogue's own
	// texts must rank no worse (retrain.Figures.Catalogue); runs started
	// before judge without them, as they did.
	if workflow.GetVersion(ctx, "retrain-gate-catalogue", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		judged.Current.Catalogue, judged.Candidate.Catalogue = nil, nil
	}
	r.Promoted, r.Reason = gate.Decide(judged.Current, judged.Candidate)
	// Concluding is idempotent (it sets the same status again).
	conclude := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrTypeInvalidInput}},
	})
	if err := workflow.ExecuteActivity(conclude, a.ConcludeCandidate, activities.ConcludeInput{
		ID: tc.ID, Promote: r.Promoted, Reason: r.Reason, Gate: gate,
	}).Get(ctx, &r.Status); err != nil {
		return r, err
	}
	r.Stage = RetrainDone
	return r, nil
}
