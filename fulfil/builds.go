package fulfil

import (
	"context"
	"fmt"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/workflows"
)

// BuildTemporal is what Builds needs of a Temporal client.
type BuildTemporal interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
}

// Builds starts builds from scratch for open gaps and reports on them:
// the domain side of POST /api/v1/gaps/:id/build and GET
// /api/v1/builds/:id.
type Builds struct {
	Temporal  BuildTemporal
	Gaps      BuildStore
	TaskQueue string
}

// BuildStore is what Builds reads of the store: the open gaps, and the
// tools a build's state names (shown only to callers who may execute them).
type BuildStore interface {
	graph.Gaps
	access.ToolGetter
}

// BuildStarted is a started build.
type BuildStarted struct {
	ID   string `json:"id"`
	Verb string `json:"verb"`
}

// maxOpenGaps bounds the scan for a verb's gap.
const maxOpenGaps = 1000

// Start starts the build of the open gap of verb, one build per verb at a
// time; in carries what the caller adds (the expected output, who asks,
// options), and the gap gives the rest (description, closest tools,
// entities). No open gap is fault.ErrNotFound; a build already running is
// fault.ErrConflict naming where to look.
func (b *Builds) Start(ctx context.Context, verb string, in workflows.BuildInput) (BuildStarted, error) {
	verb = strings.ToUpper(strings.TrimSpace(verb))
	gaps, err := b.Gaps.ListGaps(ctx, graph.GapQuery{Status: graph.GapOpen, Limit: maxOpenGaps})
	if err != nil {
		return BuildStarted{}, fmt.Errorf("fulfil: build %s: %w", verb, err)
	}
	var gap *graph.Gap
	for i := range gaps {
		if gaps[i].Verb == verb {
			gap = &gaps[i]
			break
		}
	}
	if gap == nil {
		return BuildStarted{}, fmt.Errorf("no open gap for verb %q (GET /api/v1/gaps?status=open lists them): %w", verb, fault.ErrNotFound)
	}
	in.Verb, in.Description, in.Entities, in.Closest = gap.Verb, gap.Description, gap.Entities, nil
	for _, c := range gap.Closest {
		in.Closest = append(in.Closest, c.ToolID)
	}
	id := workflows.BuildWorkflowID(gap.Verb)
	if _, err := StartOne(ctx, b.Temporal, id, b.TaskQueue, workflows.BuildToolWorkflow, in,
		"build for "+gap.Verb, "GET /api/v1/builds/"+id); err != nil {
		return BuildStarted{}, err
	}
	return BuildStarted{ID: id, Verb: gap.Verb}, nil
}

// State is the build's present state (its latest run) as caller may see
// it: the closest tools its input names are only those caller may execute.
// The result's tool is the review's outcome, shown to approvers as the
// reviews are.
func (b *Builds) State(ctx context.Context, id string, caller access.Caller) (workflows.BuildState, error) {
	if !strings.HasPrefix(id, "build-") {
		return workflows.BuildState{}, fmt.Errorf("no build %q: %w", id, fault.ErrNotFound)
	}
	var st workflows.BuildState
	if err := QueryProgress(ctx, b.Temporal, id, "", workflows.BuildQuery, &st); err != nil {
		return workflows.BuildState{}, err
	}
	closest, err := access.VisibleIDs(ctx, b.Gaps, st.Input.Closest, caller)
	if err != nil {
		return workflows.BuildState{}, fmt.Errorf("fulfil: build %s: %w", id, err)
	}
	st.Input.Closest = closest
	return st, nil
}
