// Package mcp is Toolsmith's Model Context Protocol edge, built
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk). It sits
// beside api/ and calls the same domain services: retrieval for search,
// the registry and store for documents and collections, and fulfil for
// executing tools and fulfilling novel verbs through Temporal.
//
// Tools (see Rules for who may call each):
//
//	find_tools           the few best tools for an intent, with their schemas
//	call_tool            execute a registered tool (ExecuteToolWorkflow)
//	fulfil_verb          run the novel-verb workflow
//	kb.hybrid_search     ranked tools with their score breakdown
//	kb.get_document      a tool's manifest (optionally a line range)
//	kb.stats             counts by kind, embedder, usage
//	kb.list_collections  categories, groups and modules with counts
//	kb.resolve_citations where tools came from (spec URL, version, licence, module)
//	kb.answer            an answer from retrieved tool documents, via the configured LLM
//
// Every call is authenticated from its HTTP request's Authorization header
// (the same authenticator and narrowing headers as REST), checked against
// Rules, audited and counted in /metrics. Streamable HTTP is served at /mcp
// by Handler; `toolsmith mcp --url` bridges stdio to it.
package mcp
