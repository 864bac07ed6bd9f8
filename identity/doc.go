// Package identity is the one place Toolsmith learns who a caller is and
// what the caller may do. Every edge (REST in api/, MCP in mcp/, the console
// in web/) consumes it the same way:
//
//  1. Authenticator.Authenticate turns the Authorization header (an API key
//     or an OIDC/JWT bearer token; nothing means an anonymous guest) into a
//     Principal. Bad credentials are fault.ErrUnauthenticated (401).
//  2. Narrow applies the request's narrowing headers (X-Tool-Groups,
//     X-Agent-State, X-Session-ID) to the Principal's allowances and returns
//     the access.Caller that every visibility and execution check uses.
//     Headers may only narrow: groups outside the key's are refused, and
//     X-User-* / X-Permission-Level are read only from a key marked
//     as a trusted gateway, within that key's own limits.
//  3. A Rule (data: level, roles, permissions) decides whether the Principal
//     may use a route or an MCP tool at all; tool-level visibility is
//     package access's job.
//
// Keys are random secrets shown once and stored only as SHA-256 hashes in
// the graph store (graph.Keys). Nobody becomes someone by saying so.
package identity
