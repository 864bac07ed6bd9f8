// Package sqlite is the embedded graph.Store: one SQLite file (pure-Go
// modernc.org/sqlite driver, WAL mode) holding the tool graph as tables, an
// FTS5 index with bm25 column weights for full-text search, and recursive
// CTEs for entity and neighbourhood traversal.
//
// Embeddings are stored as little-endian float32 BLOBs and also held in
// memory, normalised, for exact k-nearest-neighbour search with SIMD dot
// products (github.com/viterin/vek/vek32), prefiltered by an int8 copy with
// error bounds (internal/vec8) so that only a few rows are scored in float32.
// The in-memory copy is loaded at
// Open and updated only after the transaction that wrote it has committed.
// Several processes may open one file (API replicas and workers on one
// host): each applies the others' tool writes, in commit order
// (tools.change_seq), when it is asked to Refresh (graph.Follower).
package sqlite
