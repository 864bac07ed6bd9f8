package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/activities"
)

// AnalyticsInput tunes one analytics run (zero fields: the defaults of
// analytics.Options).
type AnalyticsInput struct {
	StaleAfter  time.Duration `json:"staleAfter,omitempty"`
	TrendWindow time.Duration `json:"trendWindow,omitempty"`
}

// AnalyticsSummary is what an analytics run computed and stored.
type AnalyticsSummary struct {
	GeneratedAt time.Time      `json:"generatedAt"`
	Tools       map[string]int `json:"tools"`
	Popular     int            `json:"popularTools"`
	Stale       int            `json:"staleTools"`
	Trending    int            `json:"trendingQueries"`
	Gaps        map[string]int `json:"gaps,omitempty"`
}

// AnalyticsWorkflow is the scheduled analytics (daily by default,
// --analytics-every): it computes success rates, usage, stale tools,
// trending queries and gap counts, stores them for the admin analytics
// route and gives ranking its popularity priors.
func AnalyticsWorkflow(ctx workflow.Context, in AnalyticsInput) (AnalyticsSummary, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var a *activities.Analytics
	var out activities.AnalyticsSummary
	if err := workflow.ExecuteActivity(actx, a.RunAnalytics, activities.AnalyticsInput{StaleAfter: in.StaleAfter, TrendWindow: in.TrendWindow}).Get(ctx, &out); err != nil {
		return AnalyticsSummary{}, err
	}
	return AnalyticsSummary{GeneratedAt: out.GeneratedAt, Tools: out.Tools, Popular: out.Popular, Stale: out.Stale, Trending: out.Trending, Gaps: out.Gaps}, nil
}
