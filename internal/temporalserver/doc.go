// Package temporalserver runs a Temporal server, and optionally its Web UI,
// inside the Toolsmith process for `toolsmith dev` and the end-to-end tests.
//
// The server persists to SQLite (<data-dir>/temporal.db) so workflow history
// survives a restart, or keeps everything in memory when no data directory
// is given. Custom search attributes are registered idempotently through the
// operator service once the frontend is up, so an existing database gains
// attributes added in later releases.
//
// This package imports go.temporal.io/server, which is slow to compile: only
// the binary and the end-to-end tests should import it.
package temporalserver
