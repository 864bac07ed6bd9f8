// Package verbs is the HTTP face of novel-verb fulfilment: it
// starts NovelVerbWorkflow runs on Temporal and reports their status, runs
// known tools through ExecuteToolWorkflow, and triggers module discovery.
//
// Routes (under /api/v1, see Handler.Mount):
//
//	POST /verbs                   start a fulfilment; 202 {workflowId, runId, uiUrl}
//	POST /verbs?wait=30s          … and wait up to 30 s (max 120 s) for the result
//	GET  /verbs/:id               status, progress (while running) and result
//	POST /tools/:toolId/execute   run a known, visible tool (waits, default 30 s)
//	POST /modules/refresh         run module discovery now
//
// The handlers talk to Temporal through the small Starter interface, which
// an SDK client.Client satisfies, so tests use a fake. EnsureRefreshSchedule
// creates the Temporal Schedule that runs module discovery periodically.
package verbs
