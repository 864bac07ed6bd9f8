// Package replay records the workflow histories that the replay test in
// package workflows (workflows/testdata/*.json) replays against the current
// workflow code and whose payloads it decodes strictly into today's types:
// runs of NovelVerbWorkflow (each branch), ExecuteToolWorkflow,
// RefreshModulesWorkflow, GapDiscoveryWorkflow, AnalyticsWorkflow,
// ReindexWorkflow (the demo catalogue, in pages), RetrainWorkflow (a
// candidate the gate keeps out for want of served queries),
// ScanSourcesWorkflow (a new spec, its review opened), AirlockWorkflow (a
// review rejected through the decide update), HealthCheckWorkflow and
// BuildToolWorkflow (a program that fails a test, then one that passes,
// approved through the decide update, registered, the gap closed; once
// before and once under the build-gap-progress version, whose notes tell
// the gap the build is under way and awaits review).
// Recording needs the in-process Temporal server, which is
// heavy to compile and which only the binary and the end-to-end tests may
// import in ordinary builds, so the recorder sits behind the "record" build
// tag and only runs on request:
//
//	TOOLSMITH_RECORD_HISTORY=1 go test -tags record ./workflows/replay -run TestRecord -v
//
// It writes the histories that are missing and keeps the others, which
// stand for runs started under older code (TOOLSMITH_RECORD_OVERWRITE=1
// re-records them). After an intentional, versioned change to a workflow,
// add a run that takes the new path; a replay failure without such a change
// means the change breaks running workflows.
//
// BenchmarkSubstituteWorkflow, behind the same tag, measures the substitute
// branch's latency on the in-process server (`make bench` passes the tag):
//
//	go test -tags record -run '^$' -bench SubstituteWorkflow ./workflows/replay
package replay
