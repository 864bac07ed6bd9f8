// Package metrics holds Toolsmith's Prometheus collectors, registered once
// on one registry and served at GET /metrics in the text format. The edges
// (REST, MCP, console) record requests through HTTP; the domain records what
// it does below them: searches (strategy, cache, embedding latency),
// fulfilments by branch and airlock reviews by state (from workflow code
// through Temporal's replay-safe metrics handler, see TemporalHandler),
// executions by outcome, and the tool-group metrics (requests per
// group, refused group requests, active tools per group).
package metrics
