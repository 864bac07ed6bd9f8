// Package modules routes tool execution to module services and discovers
// their tools.
//
// A module is an HTTP service with two endpoints: GET /manifest describes its
// tools and POST /execute runs one ({tool_name, arguments, user_id} →
// {tool_name, success, result|error}). Tool names are "module.tool"; the
// Router splits them on the first dot, looks the module's URL up in its
// Config, validates the arguments against the tool's inputSchema, posts the
// call with the module's timeout (30 s, or 120 s for slow modules) and
// validates the result against the tool's outputSchema. Every failure becomes
// a failed Result carrying a fixed message and a Kind, never a panic or a
// retry: retries belong to the caller (Temporal's retry policy), which is why
// every call carries an idempotency key sent as the Idempotency-Key header.
package modules
