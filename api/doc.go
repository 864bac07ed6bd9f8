// Package api is Toolsmith's HTTP edge: a gin engine in release mode with
// JSON recovery, structured request logging through log/slog, JSON 404 and
// 405 answers, a readiness probe at GET /healthz and a route listing at
// GET /api/v1. Features add their routes through httpx.Mounter values (see
// api/tools for registration); errors become HTTP statuses only in
// httpx.Error.
package api
