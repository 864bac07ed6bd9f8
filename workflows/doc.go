// Package workflows holds Toolsmith's Temporal workflows. The code here is
// deterministic: no I/O, no clocks, no goroutines, no map iteration whose
// order could leak into history. Every effect runs in an activity of the
// activities package, which this package names only through method values
// of nil struct pointers.
//
// NovelVerbWorkflow fulfils an action verb the planner may never have seen:
// search the graph → substitute the best tool if it
// clears the similarity threshold → otherwise decompose with the LLM into
// steps (known verbs execute, novel ones become child NovelVerbWorkflows) →
// otherwise record the gap and end with branch no_capability (find-or-build
// is filled in by the airlock). ExecuteToolWorkflow runs one known tool and
// RefreshModulesWorkflow re-discovers modules.
//
// A workflow's payloads (start input, result, signals, updates, query
// answers) are types of this package, converted to and from the
// activities' types at each call, so changing an activity or a store
// record does not change what history holds. The airlock's policy, review
// and scan report, and a build's program and test reports, keep the JSON
// shapes of the airlock, build and activity types they mirror, so
// histories recorded before they were the workflows' own still decode.
// The shapes are version 1
// (testdata/payloads/v1.json): a field may be added; removing, renaming or
// retyping one breaks running workflows, so it takes a new type (FooV2)
// behind a workflow.GetVersion branch and a recorded history of the new
// path.
package workflows
