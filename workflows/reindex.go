package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/registry"
)

// ReindexQuery is the query that returns a reindex's ReindexProgress.
const ReindexQuery = "progress"

// ReindexInput configures a reindex.
type ReindexInput struct {
	// BatchSize is how many tools one activity re-embeds; 0 means 100.
	BatchSize int `json:"batchSize,omitempty"`
}

// ReindexProgress is what a reindex has done so far (its query answer and
// its result).
type ReindexProgress struct {
	Status    string    `json:"status"` // running, completed or failed
	Total     int       `json:"total"`
	Done      int       `json:"done"`
	Failed    []string  `json:"failed"`
	StartedAt time.Time `json:"startedAt"`
	EndedAt   time.Time `json:"endedAt,omitzero"`
	Error     string    `json:"error,omitempty"`
}

// ReindexWorkflow re-embeds and reindexes every tool, a page per activity,
// so it survives restarts and reports progress through ReindexQuery.
// Searches keep working throughout: each tool is rewritten in its own
// transaction.
func ReindexWorkflow(ctx workflow.Context, in ReindexInput) (ReindexProgress, error) {
	if in.BatchSize <= 0 {
		in.BatchSize = 100
	}
	p := ReindexProgress{Status: StatusRunning, Failed: []string{}, StartedAt: workflow.Now(ctx).UTC()}
	if err := workflow.SetQueryHandler(ctx, ReindexQuery, func() (ReindexProgress, error) { return p, nil }); err != nil {
		return p, err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var a *activities.Reindex
	fail := func(err error) (ReindexProgress, error) {
		p.Status, p.Error, p.EndedAt = StatusFailed, activities.Message(err), workflow.Now(ctx).UTC()
		return p, err
	}
	if err := workflow.ExecuteActivity(actx, a.CountTools).Get(ctx, &p.Total); err != nil {
		return fail(err)
	}
	after := ""
	for {
		var page registry.ReindexPage
		if err := workflow.ExecuteActivity(actx, a.ReindexTools, activities.ReindexPageInput{After: after, Limit: in.BatchSize}).Get(ctx, &page); err != nil {
			return fail(err)
		}
		p.Done += len(page.Done)
		p.Failed = append(p.Failed, page.Failed...)
		if p.Done+len(p.Failed) > p.Total {
			p.Total = p.Done + len(p.Failed) // tools registered meanwhile
		}
		if page.Next == "" {
			break
		}
		after = page.Next
	}
	p.Status, p.EndedAt = StatusCompleted, workflow.Now(ctx).UTC()
	return p, nil
}
