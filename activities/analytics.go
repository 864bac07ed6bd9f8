package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/graph"
)

// Analytics holds the scheduled analytics activity.
type Analytics struct {
	Store graph.Store
	// Runs lists novel-verb runs (nil: the report has no fulfilment figures).
	Runs analytics.RunLister
}

// AnalyticsInput tunes one run (zero fields: the defaults of
// analytics.Options).
type AnalyticsInput struct {
	StaleAfter  time.Duration `json:"staleAfter,omitempty"`
	TrendWindow time.Duration `json:"trendWindow,omitempty"`
}

// AnalyticsSummary is what a run computed and stored.
type AnalyticsSummary struct {
	GeneratedAt time.Time      `json:"generatedAt"`
	Tools       map[string]int `json:"tools"`
	Popular     int            `json:"popularTools"`
	Stale       int            `json:"staleTools"`
	Trending    int            `json:"trendingQueries"`
	Gaps        map[string]int `json:"gaps,omitempty"`
}

// RunAnalytics computes the operators' report (success rates, usage,
// stale tools, trending queries, gap counts) and stores it with the
// ranking priors it yields (popularity), as the latest snapshots.
func (a *Analytics) RunAnalytics(ctx context.Context, in AnalyticsInput) (AnalyticsSummary, error) {
	if a.Store == nil {
		return AnalyticsSummary{}, Fail(ErrTypeInvalidInput, "activities: analytics needs a store")
	}
	r, err := analytics.Build(ctx, a.Store, a.Runs, analytics.Options{StaleAfter: in.StaleAfter, TrendWindow: in.TrendWindow})
	if err != nil {
		return AnalyticsSummary{}, fmt.Errorf("activities: analytics: %w", err)
	}
	if err := analytics.Publish(ctx, a.Store, r); err != nil {
		return AnalyticsSummary{}, err
	}
	return AnalyticsSummary{GeneratedAt: r.GeneratedAt, Tools: r.Tools, Popular: len(r.Ranking.Popularity), Stale: r.StaleCount,
		Trending: len(r.Trending), Gaps: r.Gaps}, nil
}
