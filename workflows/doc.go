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
package workflows
