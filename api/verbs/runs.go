package verbs

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/fulfil"
	"github.com/toolsmith/toolsmith/workflows"
)

// Lister lists workflow executions (client.Client satisfies it).
type Lister interface {
	ListWorkflow(ctx context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
}

// Runs lists novel-verb runs from Temporal's visibility for analytics: the
// verb and branch come from the ToolsmithVerb and ToolsmithBranch search
// attributes the workflow upserts.
type Runs struct {
	Temporal  Lister
	Namespace string
}

var _ analytics.RunLister = Runs{}

// NovelVerbRuns implements analytics.RunLister.
func (r Runs) NovelVerbRuns(ctx context.Context, since time.Time, limit int) ([]analytics.Run, error) {
	ns := r.Namespace
	if ns == "" {
		ns = "default"
	}
	q := fmt.Sprintf("WorkflowType = 'NovelVerbWorkflow' AND StartTime >= '%s'", since.UTC().Format(time.RFC3339))
	dc := converter.GetDefaultDataConverter()
	var out []analytics.Run
	var token []byte
	for len(out) < limit {
		resp, err := r.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: ns, Query: q, PageSize: int32(min(1000, limit-len(out))), NextPageToken: token,
		})
		if err != nil {
			return out, fulfil.TemporalError("list novel-verb runs", err)
		}
		for _, ex := range resp.GetExecutions() {
			run := analytics.Run{WorkflowID: ex.GetExecution().GetWorkflowId(), RunID: ex.GetExecution().GetRunId(),
				Status: fulfil.StatusName(ex.GetStatus()), Start: ex.GetStartTime().AsTime()}
			if ex.GetCloseTime() != nil {
				run.Close = ex.GetCloseTime().AsTime()
			}
			fields := ex.GetSearchAttributes().GetIndexedFields()
			if p, ok := fields[workflows.SAVerbName]; ok {
				_ = dc.FromPayload(p, &run.Verb)
			}
			if p, ok := fields[workflows.SABranchName]; ok {
				_ = dc.FromPayload(p, &run.Branch)
			}
			if run.Branch == "" {
				run.Branch = workflows.BranchSearch
			}
			out = append(out, run)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	return out, nil
}
