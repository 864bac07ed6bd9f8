package worker

import (
	"github.com/tmc/langchaingo/llms"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"time"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/modules"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/workflows"
)

// Deps are the dependencies of the activities.
type Deps struct {
	// Store is the knowledge graph (tool manifests for execution, usage).
	Store graph.Store
	// Tools, when set, is where ExecuteTool reads manifests instead of Store
	// (tests and tools that run without a store).
	Tools activities.ToolSource
	// Searcher finds candidate tools; retrieval.Service or
	// activities.StoreSearcher.
	Searcher activities.Searcher
	// Usage records each execution and learns from it (retrieval.Service:
	// query embedding, session pairings, query log). Nil: Store records it
	// without learning until retrieval next reads the store.
	Usage activities.UsageRecorder
	// Router routes tool calls to modules and discovers them.
	Router *modules.Router
	// LLM decomposes novel verbs; nil means none configured.
	LLM llms.Model
	// Gaps stores capability gaps; nil logs them only.
	Gaps activities.GapRecorder
	// Wrapped runs tools onboarded through the airlock; nil leaves them
	// unexecutable on this worker.
	Wrapped activities.WrappedRunner
	// Build builds tools from scratch (BuildToolWorkflow); nil registers
	// its activities with LLM as the model and Store's gaps, and nothing
	// to register an approved program in.
	Build *activities.Build
	// Airlock onboards external tools; nil registers the airlock workflows
	// with activities that report "not configured".
	Airlock *activities.Airlock
	// Reindexer re-embeds tools for ReindexWorkflow (registry.Service); nil
	// makes a reindex fail with "no registry".
	Reindexer activities.Reindexer
	// Runs lists novel-verb runs for the scheduled analytics (nil: the
	// stored report has no fulfilment figures).
	Runs analytics.RunLister
	// Retrain trains, evaluates and promotes ranking models for
	// RetrainWorkflow; nil makes a retrain fail with "not configured".
	Retrain *retrain.Service
	// Options tune the worker.
	Options Options
}

// Options tune the worker.
type Options struct {
	// TaskQueue defaults to workflows.TaskQueue.
	TaskQueue string
	// Worker passes SDK worker options through (concurrency limits, …).
	Worker sdkworker.Options
}

// New returns a worker (not yet started) with every workflow and activity
// registered. Call Start/Run and Stop on it.
func New(c client.Client, deps Deps) sdkworker.Worker {
	tq := deps.Options.TaskQueue
	if tq == "" {
		tq = workflows.TaskQueue
	}
	w := sdkworker.New(c, tq, deps.Options.Worker)
	Register(w, deps)
	return w
}

// Registry is where Register puts workflows and activities: a worker or the
// SDK's test environment.
type Registry interface {
	RegisterWorkflow(w any)
	RegisterActivity(a any)
}

// Register registers every workflow and activity on a registry.
func Register(r Registry, deps Deps) {
	for _, w := range workflows.All() {
		r.RegisterWorkflow(w)
	}
	r.RegisterActivity(&activities.Retrain{Service: deps.Retrain})
	r.RegisterActivity(&activities.Reindex{Tools: deps.Reindexer})

	mods := &activities.Modules{Router: deps.Router, Wrapped: deps.Wrapped}
	if deps.Store != nil {
		// Assigned only when non-nil so the interfaces stay nil (not a
		// typed nil) and the activities report "not configured".
		mods.Schemas, mods.Usage, mods.Pairs = deps.Store, deps.Store, deps.Store
	}
	if deps.Usage != nil {
		mods.Usage = deps.Usage
	}
	if deps.Tools != nil {
		mods.Schemas = deps.Tools
	}
	// The search reads the candidates' parameter types where execution
	// reads their schemas.
	g := &activities.Graph{Searcher: deps.Searcher, Gaps: deps.Gaps, Schemas: mods.Schemas}
	if deps.Router != nil {
		// A candidate whose module this deployment does not route could
		// not run: fulfilment never substitutes it.
		g.Routed = deps.Router.Serves
	}
	r.RegisterActivity(g)
	r.RegisterActivity(&activities.Analytics{Store: deps.Store, Runs: deps.Runs})
	r.RegisterActivity(mods)
	r.RegisterActivity(&activities.LLM{Model: deps.LLM})
	bd := deps.Build
	if bd == nil {
		bd = &activities.Build{Model: deps.LLM}
		if deps.Store != nil {
			bd.Gaps = deps.Store
		}
	}
	r.RegisterActivity(bd)
	al := deps.Airlock
	if al == nil {
		al = &activities.Airlock{}
	}
	r.RegisterActivity(al)
}

// Reviews opens airlock reviews (AirlockWorkflow runs) with a client.
func Reviews(c client.Client, taskQueue string, reviewTimeout time.Duration) activities.ReviewStarter {
	if taskQueue == "" {
		taskQueue = workflows.TaskQueue
	}
	return activities.ClientReviews{
		Client: c, TaskQueue: taskQueue, Workflow: workflows.AirlockWorkflow, ID: workflows.AirlockWorkflowID,
		Input: func(in activities.OpenReviewInput) any {
			timeout := in.ReviewTimeout
			if timeout == 0 {
				timeout = reviewTimeout
			}
			return workflows.AirlockInput{SpecHash: in.SpecHash, SourceID: in.SourceID, Location: in.Location, ReviewTimeout: timeout}
		},
		SubscribeSignal: workflows.SignalSubscribe,
		Subscribe:       func(id string) any { return workflows.SubscribeSignal{WorkflowID: id} },
		Propose:         func(verb string) any { return workflows.SubscribeSignal{Gap: verb} },
	}
}
