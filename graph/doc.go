// Package graph defines Toolsmith's knowledge graph of tools: the Store
// interface every backend implements, its record types and its sentinel
// errors.
//
// The graph model has Tool, Verb, Entity, Category, Tag, Group and Module
// nodes joined by PROVIDES, ABOUT, IN, TAGGED, MEMBER_OF, OFFERS, IS_A,
// DEPENDS_ON, ALTERNATIVE_TO and PAIRS_WITH edges. Two backends implement it:
// graph/sqlite (embedded, the default) and graph/neo4j (production). Both are
// checked by the backend-neutral contract suite in graph/graphtest.
//
// Store includes every capability (keys, audit log, definitions, gaps,
// learned pairings, time series, snapshots, model versions, the mean tool
// vector, batched vector scores): each backend asserts at compile time
// that it implements Store, so no caller looks for a capability at run
// time. What both backends compute alike (sort orders, keys, limits, time
// encoding, validation) is written once here (helpers.go) and used by both.
package graph
