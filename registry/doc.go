// Package registry is Toolsmith's tool registration service:
// it parses and validates manifests (package tool), embeds them, and writes
// each tool with one graph.Store.UpsertTool call, so that a tool's nodes,
// edges, vector and full-text row are stored together or not at all.
//
// Every error is classified with internal/fault: a request that cannot be
// read is fault.ErrMalformed, a rule violation fault.ErrInvalid (both carry
// field paths, "manifest.inputSchema.properties.amount.type"), an existing id
// on Register fault.ErrConflict, an unknown id fault.ErrNotFound and an
// embedder failure fault.ErrUnavailable. The HTTP layer maps those kinds to
// status codes without looking at messages.
package registry
