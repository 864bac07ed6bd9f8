package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
)

// AnalyticsWorkflow is the scheduled analytics (daily by default,
// --analytics-every): it computes success rates, usage, stale tools,
// trending queries and gap counts, stores them for the admin analytics
// route and gives ranking its popularity priors.
func AnalyticsWorkflow(ctx workflow.Context, in activities.AnalyticsInput) (activities.AnalyticsSummary, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var a *activities.Analytics
	var out activities.AnalyticsSummary
	err := workflow.ExecuteActivity(actx, a.RunAnalytics, in).Get(ctx, &out)
	return out, err
}
