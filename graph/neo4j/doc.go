// Package neo4j is the production implementation of graph.Store on Neo4j 5,
// through the official driver (github.com/neo4j/neo4j-go-driver/v5).
//
// Its semantics follow graph/sqlite (validation, defaults, ordering, paging,
// sentinel errors); graph/graphtest checks both. Two differences are
// inherent: vector search uses Neo4j's approximate HNSW index (SQLite scans
// exactly; the cosine index also skips all-zero vectors), and full-text scores
// are Lucene's, not bm25 (both positive, higher is better). Tool
// nodes carry uniqueness constraints on their keys, a cosine vector index on
// Tool.embedding and one on Tool.usageCentroid (dimension recorded by
// EnsureEmbedder on a :ToolsmithMeta node), and a full-text index (english
// analyzer) over name, verb words, description, tags, use cases and entity
// names. Vector scores are converted back from Neo4j's (1+cos)/2 to cosine,
// so they compare with the SQLite store's. A vector search restricted to an
// id list (retrieval's candidates) scores those tools exactly with
// vector.similarity.cosine instead of walking the approximate index, and
// VectorScores (graph.VectorScorer) scores such a list against several
// vectors (the query's phrases) in one statement. MeanVector (graph.MeanVectorer) reads the active embeddings and is cached;
// Refresh (graph.Follower) reports the tools other processes wrote, by
// updatedAt, and marks that cache stale.
//
// All Cypher lives in cypher.go as named constants. Without a server the
// package is proven by golden tests of every statement and its parameters
// (testdata/*.golden, refreshed with go test -update) and by a lint of every
// statement with Neo4j's own grammar (scripts/cypher-lint). The contract suite
// runs against a real server when NEO4J_URI is set or Docker is available.
package neo4j
