// Package e2e holds Toolsmith's end-to-end tests: a real in-process
// Temporal server (internal/temporalserver, in-memory SQLite), a real worker
// from worker.New, the real SQLite graph store, the hashing embedder, the
// verbs API (api/verbs) on httptest and the demo modules
// (internal/demomodule) on httptest. Nothing is mocked.
//
// The package has only tests; its first build compiles the Temporal server
// and takes minutes on a small machine. Skip it with -short.
//
//	go test ./e2e/ -v
//	go test ./e2e/ -run '^$' -bench . -benchtime 200x
package e2e
