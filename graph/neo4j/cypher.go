package neo4j

import (
	"fmt"
	"sort"
	"strings"
)

// Every Cypher statement the store sends lives in this file, as a named
// constant, or as a format string where Cypher allows no parameter: the
// vector dimension in index OPTIONS (%d, a validated positive int) and schema
// names in DROP statements (%s, quoted by quoteName). The golden tests record
// them with their parameters and the Cypher lint test parses each one with
// Neo4j's own grammar (scripts/cypher-lint).
//
// Graph model (see ARCHITECTURE.md):
//
//	(:Tool {id, verb, category, module, status, revision, summary, record,
//	        embedding, createdAt, updatedAt, name, verbText, description,
//	        tagsText, useCasesText, entitiesText,
//	        uses, successes, lastUsed, usageSum, usageCentroid, centroidN})
//	(:Tool)-[:PROVIDES]->(:Verb {name})      (:Tool)-[:IN]->(:Category {name})
//	(:Tool)-[:TAGGED]->(:Tag {name})         (:Tool)-[:MEMBER_OF]->(:Group {name})
//	(:Module {name})-[:OFFERS]->(:Tool)      (:Tool)-[:ABOUT]->(:Entity {key, name, type, aliases})
//	(:Entity)-[:IS_A]->(:Entity)
//	(:Tool)-[:DEPENDS_ON|ALTERNATIVE_TO]->(:Tool)
//	(:Tool)-[:PAIRS_WITH {score, sequence}]->(:Tool)
//	(:Tool)-[:HAS_REVISION]->(:Revision {toolId, revision, status, reason, manifest, at})
//	(:UsageEvent {toolId, sessionId, userId, query, success, latencyMs, at, ordinal, origin, claimed})
//	(:ToolsmithMeta {key: 'embedder', model, dimension})
//
// summary and record hold the JSON ToolSummary and Tool (without embedding),
// exactly as the SQLite store keeps them, so both stores return identical
// records. Times are Unix nanoseconds (INTEGER). A relation may target a tool
// that is not registered yet: the target is then a bare (:Tool {id}) node
// without a record; every query that returns tools requires a status (or a
// record), so such placeholders stay invisible until the tool is upserted.

// Schema statements, run once by EnsureSchema (each in its own transaction:
// Neo4j refuses schema and data writes in one transaction).
const (
	cypherConstraintTool     = `CREATE CONSTRAINT tool_id IF NOT EXISTS FOR (t:Tool) REQUIRE t.id IS UNIQUE`
	cypherConstraintVerb     = `CREATE CONSTRAINT verb_name IF NOT EXISTS FOR (v:Verb) REQUIRE v.name IS UNIQUE`
	cypherConstraintEntity   = `CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE e.key IS UNIQUE`
	cypherConstraintCategory = `CREATE CONSTRAINT category_name IF NOT EXISTS FOR (c:Category) REQUIRE c.name IS UNIQUE`
	cypherConstraintTag      = `CREATE CONSTRAINT tag_name IF NOT EXISTS FOR (g:Tag) REQUIRE g.name IS UNIQUE`
	cypherConstraintGroup    = `CREATE CONSTRAINT group_name IF NOT EXISTS FOR (g:Group) REQUIRE g.name IS UNIQUE`
	cypherConstraintModule   = `CREATE CONSTRAINT module_name IF NOT EXISTS FOR (m:Module) REQUIRE m.name IS UNIQUE`
	cypherConstraintMeta     = `CREATE CONSTRAINT toolsmith_meta_key IF NOT EXISTS FOR (m:ToolsmithMeta) REQUIRE m.key IS UNIQUE`
	cypherIndexToolStatus    = `CREATE INDEX tool_status IF NOT EXISTS FOR (t:Tool) ON (t.status)`
	cypherIndexToolUpdated   = `CREATE INDEX tool_updated IF NOT EXISTS FOR (t:Tool) ON (t.updatedAt)`
	cypherIndexRevision      = `CREATE INDEX revision_tool IF NOT EXISTS FOR (r:Revision) ON (r.toolId, r.revision)`
	cypherIndexUsageSession  = `CREATE INDEX usage_event_session IF NOT EXISTS FOR (e:UsageEvent) ON (e.sessionId)`
	cypherIndexUsageAt       = `CREATE INDEX usage_event_at IF NOT EXISTS FOR (e:UsageEvent) ON (e.at)`
	cypherIndexUsageOrdinal  = `CREATE INDEX usage_event_ordinal IF NOT EXISTS FOR (e:UsageEvent) ON (e.ordinal)`
	cypherIndexUsageUser     = `CREATE INDEX usage_event_user IF NOT EXISTS FOR (e:UsageEvent) ON (e.userId, e.toolId)`
	// The english analyzer stems ("reservations" finds "reservation"), as the
	// SQLite store's porter tokenizer does.
	cypherIndexToolText = `CREATE FULLTEXT INDEX tool_text IF NOT EXISTS
FOR (t:Tool) ON EACH [t.name, t.verbText, t.description, t.tagsText, t.useCasesText, t.entitiesText]
OPTIONS {indexConfig: {` + "`fulltext.analyzer`" + `: 'english'}}`
	// cypherAwaitIndexes waits (up to $seconds) until new indexes are online,
	// so that a search right after EnsureSchema/EnsureEmbedder sees them.
	cypherAwaitIndexes = `CALL db.awaitIndexes($seconds)`
)

// Vector index formats: index OPTIONS cannot take parameters, so the
// dimension (a validated positive int) is formatted in. Cosine similarity: the
// index scores (1+cos)/2, which the store converts back to cos.
const (
	cypherIndexToolVectorFmt = `CREATE VECTOR INDEX tool_embedding IF NOT EXISTS
FOR (t:Tool) ON (t.embedding)
OPTIONS {indexConfig: {` + "`vector.dimensions`" + `: %d, ` + "`vector.similarity_function`" + `: 'cosine'}}`
	cypherIndexUsageVectorFmt = `CREATE VECTOR INDEX tool_usage_centroid IF NOT EXISTS
FOR (t:Tool) ON (t.usageCentroid)
OPTIONS {indexConfig: {` + "`vector.dimensions`" + `: %d, ` + "`vector.similarity_function`" + `: 'cosine'}}`
)

// cypherIndexDefinitionVectorFmt indexes external definitions (see definitions.go).
const cypherIndexDefinitionVectorFmt = `CREATE VECTOR INDEX definition_embedding IF NOT EXISTS
FOR (d:Definition) ON (d.embedding)
OPTIONS {indexConfig: {` + "`vector.dimensions`" + `: %d, ` + "`vector.similarity_function`" + `: 'cosine'}}`

// vectorIndexStatements renders the vector index statements for dim: tool
// embeddings, usage centroids, external definitions.
func vectorIndexStatements(dim int) []string {
	return []string{
		fmt.Sprintf(cypherIndexToolVectorFmt, dim),
		fmt.Sprintf(cypherIndexUsageVectorFmt, dim),
		fmt.Sprintf(cypherIndexDefinitionVectorFmt, dim),
	}
}

// Embedder metadata.
const (
	cypherEnsureEmbedder = `MERGE (m:ToolsmithMeta {key: 'embedder'})
ON CREATE SET m.model = $model, m.dimension = $dimension
RETURN m.model AS model, m.dimension AS dimension`
	cypherGetEmbedder = `MATCH (m:ToolsmithMeta {key: 'embedder'})
RETURN m.model AS model, m.dimension AS dimension`
)

// filterWhere is the pushed-down part of graph.Filter over the tool variable
// t. Empty lists mean "any", so one statement serves every filter. A tool's
// module is graph.ModuleOf's: the stored module or, for a tool that names
// none (an onboarded wrapper), the part of its id before the first "."
// (a module name has no ".", so "the id starts with the name and a dot"
// says it, in functions every Neo4j version has).
const filterWhere = `t.status IN $statuses
  AND (size($categories) = 0 OR t.category IN $categories)
  AND (size($ids) = 0 OR t.id IN $ids)
  AND (size($modules) = 0 OR (coalesce(t.module, '') <> '' AND t.module IN $modules)
    OR (coalesce(t.module, '') = '' AND any(m IN $modules WHERE NOT m CONTAINS '.' AND t.id STARTS WITH m + '.')))`

// Tool writes (UpsertTool runs them in one ExecuteWrite transaction).
const (
	// cypherToolState reads what the upsert needs; the SET takes the node's
	// write lock first, so two concurrent upserts of one id serialise instead
	// of both computing the same revision.
	cypherToolState = `OPTIONAL MATCH (t:Tool {id: $id})
WHERE t.record IS NOT NULL
SET t.revision = t.revision
RETURN t.revision AS revision, t.createdAt AS createdAt`
	cypherMergeTool = `MERGE (t:Tool {id: $id})
SET t += $props`
	cypherDeleteToolEdges = `MATCH (t:Tool {id: $id})
OPTIONAL MATCH (t)-[r:PROVIDES|ABOUT|IN|TAGGED|MEMBER_OF|PAIRS_WITH|DEPENDS_ON|ALTERNATIVE_TO]->()
DELETE r
WITH DISTINCT t
OPTIONAL MATCH (:Module)-[o:OFFERS]->(t)
DELETE o`
	cypherLinkNodes = `MATCH (t:Tool {id: $id})
FOREACH (name IN $verbs | MERGE (v:Verb {name: name}) MERGE (t)-[:PROVIDES]->(v))
FOREACH (name IN $categories | MERGE (c:Category {name: name}) MERGE (t)-[:IN]->(c))
FOREACH (name IN $tags | MERGE (g:Tag {name: name}) MERGE (t)-[:TAGGED]->(g))
FOREACH (name IN $groups | MERGE (g:Group {name: name}) MERGE (t)-[:MEMBER_OF]->(g))
FOREACH (name IN $modules | MERGE (m:Module {name: name}) MERGE (m)-[:OFFERS]->(t))`
	// cypherLinkEntities merges each entity (first-written name kept, a
	// non-empty type overwrites, aliases accumulate), its type entity and the
	// IS_A edge between them, then the ABOUT edge.
	cypherLinkEntities = `MATCH (t:Tool {id: $id})
UNWIND $entities AS ent
MERGE (e:Entity {key: ent.key})
  ON CREATE SET e.name = ent.name, e.type = '', e.aliases = []
SET e.type = CASE WHEN ent.type <> '' THEN ent.type ELSE e.type END,
    e.aliases = e.aliases + [a IN ent.aliases WHERE NOT toLower(a) IN [x IN e.aliases | toLower(x)]]
MERGE (t)-[:ABOUT]->(e)
FOREACH (ty IN ent.types |
  MERGE (x:Entity {key: ty.key})
    ON CREATE SET x.name = ty.name, x.type = '', x.aliases = []
  MERGE (e)-[:IS_A]->(x))`
	// The relation statements take $rels, a list of {target, score,
	// sequence}; score and sequence are meaningful for PAIRS_WITH and kept on
	// every kind, as the SQLite store keeps them. A target not registered yet
	// becomes a bare (:Tool {id}) placeholder.
	cypherLinkDependsOn = `MATCH (t:Tool {id: $id})
UNWIND $rels AS rel
MERGE (o:Tool {id: rel.target})
MERGE (t)-[r:DEPENDS_ON]->(o)
SET r.score = rel.score, r.sequence = rel.sequence`
	cypherLinkAlternatives = `MATCH (t:Tool {id: $id})
UNWIND $rels AS rel
MERGE (o:Tool {id: rel.target})
MERGE (t)-[r:ALTERNATIVE_TO]->(o)
SET r.score = rel.score, r.sequence = rel.sequence`
	cypherLinkPairs = `MATCH (t:Tool {id: $id})
UNWIND $rels AS rel
MERGE (o:Tool {id: rel.target})
MERGE (t)-[r:PAIRS_WITH]->(o)
SET r.score = rel.score, r.sequence = rel.sequence`
	cypherAppendRevision = `MATCH (t:Tool {id: $id})
CREATE (t)-[:HAS_REVISION]->(:Revision {toolId: $id, revision: $revision, status: $status, reason: $reason, manifest: $manifest, at: $at})`
)

// Tool reads and status.
const (
	cypherGetTool = `MATCH (t:Tool {id: $id})
WHERE t.record IS NOT NULL
RETURN t.record AS record, t.embedding AS embedding`
	cypherToolExists = `MATCH (t:Tool {id: $id})
WHERE t.record IS NOT NULL
RETURN t.id AS id`
	cypherCountTools = `MATCH (t:Tool)
WHERE ` + filterWhere + `
RETURN count(t) AS total`
	cypherListTools = `MATCH (t:Tool)
WHERE t.id > $after AND ` + filterWhere + `
RETURN t.id AS id, t.summary AS summary
ORDER BY t.id
LIMIT $limit`
	// cypherManifestRecords pages through every tool's record for
	// ManifestRunes: core Cypher has no JSON parser, so the manifest's
	// size is taken from the record on the client.
	cypherManifestRecords = `MATCH (t:Tool)
WHERE t.id > $after AND t.record IS NOT NULL
RETURN t.id AS id, t.record AS record
ORDER BY t.id
LIMIT $limit`
	// cypherSetStatusRead locks the tool (SET) before reading its record.
	cypherSetStatusRead = `MATCH (t:Tool {id: $id})
WHERE t.record IS NOT NULL
SET t.status = t.status
RETURN t.revision AS revision, t.record AS record`
	cypherSetStatus = `MATCH (t:Tool {id: $id})
SET t.status = $status, t.revision = $revision, t.summary = $summary, t.record = $record, t.updatedAt = $updatedAt`
	// cypherToolsChangedSince lists the tools written at or after $since
	// (Unix nanoseconds of the writers' clocks), for Refresh.
	cypherToolsChangedSince = `MATCH (t:Tool)
WHERE t.updatedAt >= $since AND t.record IS NOT NULL
RETURN t.id AS id, t.updatedAt AS updatedAt
ORDER BY updatedAt`
	cypherHistory = `MATCH (r:Revision {toolId: $id})
RETURN r.revision AS revision, r.status AS status, r.reason AS reason, r.manifest AS manifest, r.at AS at
ORDER BY r.revision`
)

// Search. The index procedures return their top $fetch candidates; the
// filter is applied to them in the same statement, and scanned tells the
// store whether the index had more to give (scanned = $fetch) so that it can
// ask again with a larger $fetch when Allow rejected too many.
const (
	cypherVectorSearch = `CALL db.index.vector.queryNodes('tool_embedding', $fetch, $vector) YIELD node AS t, score
WITH count(*) AS scanned, collect(CASE WHEN ` + filterWhere + ` THEN {summary: t.summary, score: score} END) AS hits
RETURN scanned, hits`
	cypherUsageSearch = `CALL db.index.vector.queryNodes('tool_usage_centroid', $fetch, $vector) YIELD node AS t, score
WITH count(*) AS scanned, collect(CASE WHEN ` + filterWhere + ` THEN {summary: t.summary, score: score} END) AS hits
RETURN scanned, hits`
	// With an id list the search scores exactly those tools (an index seek
	// per id) instead of walking the approximate index until they turn up:
	// retrieval asks for the cosines of its candidates this way.
	// vector.similarity.cosine is on the same [0,1] scale as queryNodes.
	cypherVectorScoreIDs = `UNWIND $ids AS id
MATCH (t:Tool {id: id})
WHERE t.embedding IS NOT NULL AND ` + filterWhere + `
RETURN t.summary AS summary, vector.similarity.cosine(t.embedding, $vector) AS score`
	// cypherVectorScoresIDs scores the listed tools against several vectors
	// in one statement (graph.VectorScorer: the phrase signal's windows),
	// each score as cypherVectorScoreIDs gives it.
	cypherVectorScoresIDs = `UNWIND $ids AS id
MATCH (t:Tool {id: id})
WHERE t.embedding IS NOT NULL AND ` + filterWhere + `
RETURN t.summary AS summary, [v IN $vectors | vector.similarity.cosine(t.embedding, v)] AS scores`
	cypherUsageScoreIDs = `UNWIND $ids AS id
MATCH (t:Tool {id: id})
WHERE t.usageCentroid IS NOT NULL AND ` + filterWhere + `
RETURN t.summary AS summary, vector.similarity.cosine(t.usageCentroid, $vector) AS score`
	// cypherActiveEmbeddings feeds MeanVector.
	cypherActiveEmbeddings = `MATCH (t:Tool)
WHERE t.status = 'active' AND t.embedding IS NOT NULL
RETURN t.embedding AS embedding`
	cypherTextSearch = `CALL db.index.fulltext.queryNodes('tool_text', $query, {limit: $fetch}) YIELD node AS t, score
WITH count(*) AS scanned, collect(CASE WHEN ` + filterWhere + ` THEN {summary: t.summary, score: score} END) AS hits
RETURN scanned, hits`
)

// Related, one statement per kind. Targets that are placeholders (no
// status) fail the filter and so stay hidden.
const (
	cypherRelatedDependsOn = `MATCH (:Tool {id: $id})-[r:DEPENDS_ON]->(t:Tool)
WHERE ` + filterWhere + `
RETURN t.summary AS summary, coalesce(r.score, 0.0) AS score
ORDER BY score DESC, t.id`
	cypherRelatedPairs = `MATCH (:Tool {id: $id})-[r:PAIRS_WITH]->(t:Tool)
WHERE ` + filterWhere + `
RETURN t.summary AS summary, coalesce(r.score, 0.0) AS score
ORDER BY score DESC, t.id`
	// ALTERNATIVE_TO is symmetric: either direction counts, best score per peer.
	cypherRelatedAlternatives = `MATCH (s:Tool {id: $id})-[r:ALTERNATIVE_TO]-(t:Tool)
WHERE t.id <> $id AND ` + filterWhere + `
WITH t, max(coalesce(r.score, 0.0)) AS score
RETURN t.summary AS summary, score
ORDER BY score DESC, t.id`
)

// Entities.
const (
	cypherEntities = `MATCH (e:Entity)
RETURN e.key AS key, e.name AS name, e.type AS type, e.aliases AS aliases
ORDER BY e.key`
	cypherFindEntities = `MATCH (e:Entity)
WHERE e.key IN $keys OR any(a IN e.aliases WHERE toLower(trim(a)) IN $keys)
RETURN e.key AS key, e.name AS name, e.type AS type, e.aliases AS aliases
ORDER BY e.key`
	// cypherEntityStep is one breadth-first step over IS_A edges, in either
	// direction, from the frontier's entity keys.
	cypherEntityStep = `UNWIND $frontier AS k
MATCH (:Entity {key: k})-[:IS_A]-(n:Entity)
RETURN DISTINCT n.key AS key
ORDER BY key`
	// cypherToolsNearEntities returns the tools ABOUT the reached entities
	// ($reached: {key, hops}), depth = IS_A hops + 1. The store keeps, per
	// tool, the first row: the smallest depth, then the smallest entity key.
	cypherToolsNearEntities = `UNWIND $reached AS r
MATCH (t:Tool)-[:ABOUT]->(:Entity {key: r.key})
WHERE ` + filterWhere + `
RETURN t.id AS id, t.summary AS summary, r.key AS entityKey, r.hops + 1 AS depth
ORDER BY depth, id, entityKey`
)

// Neighbourhood: one breadth-first step per hop, from the frontier's element
// ids. Revisions, usage events and placeholders are not part of it.
const (
	cypherNeighbourStart = `MATCH (t:Tool {id: $id})
WHERE t.record IS NOT NULL
RETURN elementId(t) AS eid`
	cypherNeighbourStep = `MATCH (n)
WHERE elementId(n) IN $frontier
MATCH (n)-[r:PROVIDES|ABOUT|IN|TAGGED|MEMBER_OF|PAIRS_WITH|DEPENDS_ON|ALTERNATIVE_TO|OFFERS|IS_A]-(m)
WHERE NOT m:Tool OR m.record IS NOT NULL
RETURN elementId(m) AS eid,
  elementId(startNode(r)) = elementId(n) AS outgoing,
  type(r) AS type,
  [l IN labels(n) WHERE l IN $labels][0] AS fromLabel,
  coalesce(n.id, n.key, n.name) AS fromKey,
  [l IN labels(m) WHERE l IN $labels][0] AS toLabel,
  coalesce(m.id, m.key, m.name) AS toKey`
)

// Usage.
const (
	// cypherUsageLock write-locks the tools (SET) and reads their usage, so
	// the read-modify-write of the centroid sum cannot lose an update.
	cypherUsageLock = `MATCH (t:Tool)
WHERE t.id IN $ids AND t.record IS NOT NULL
SET t.uses = coalesce(t.uses, 0)
RETURN t.id AS id, t.usageSum AS usageSum, coalesce(t.centroidN, 0) AS centroidN`
	cypherUsageUpdate = `UNWIND $tools AS u
MATCH (t:Tool {id: u.id})
SET t.uses = coalesce(t.uses, 0) + u.uses,
    t.successes = coalesce(t.successes, 0) + u.successes,
    t.lastUsed = CASE WHEN coalesce(t.lastUsed, 0) > u.lastUsed THEN t.lastUsed ELSE u.lastUsed END,
    t.usageSum = u.usageSum,
    t.usageCentroid = u.usageCentroid,
    t.centroidN = u.centroidN`
	// cypherUsageSequence reserves $n consecutive event ordinals: usage
	// events of a session are listed newest first, ties on time broken by
	// insertion order, as SQLite's rowid does.
	cypherUsageSequence = `MERGE (m:ToolsmithMeta {key: 'usageSequence'})
SET m.next = coalesce(m.next, 0) + $n
RETURN m.next - $n AS first`
	cypherUsageEvents = `UNWIND $events AS ev
CREATE (:UsageEvent {toolId: ev.toolId, sessionId: ev.sessionId, userId: ev.userId, query: ev.query,
  queryEmbedding: ev.queryEmbedding, success: ev.success, latencyMs: ev.latencyMs, at: ev.at, ordinal: ev.ordinal,
  origin: ev.origin})`
	// cypherClaimRunsLock takes the write lock of the user's claim node, so
	// that concurrent claims of one user run one after the other and each
	// reads what the one before it marked.
	cypherClaimRunsLock = `MERGE (m:ToolsmithMeta {key: $key})
SET m.claims = coalesce(m.claims, 0) + 1`
	cypherClaimRuns = `MATCH (e:UsageEvent {userId: $user, toolId: $tool})
WHERE e.origin = 'observed' AND e.at >= $since AND e.claimed IS NULL AND (e.success OR NOT $successful)
WITH e ORDER BY e.at, e.ordinal LIMIT $n
SET e.claimed = true
RETURN count(e) AS claimed`
	cypherUsage = `MATCH (t:Tool)
WHERE t.id IN $ids AND t.record IS NOT NULL AND coalesce(t.uses, 0) > 0
RETURN t.id AS id, t.uses AS uses, coalesce(t.successes, 0) AS successes, coalesce(t.lastUsed, 0) AS lastUsed,
  t.usageCentroid AS centroid, coalesce(t.centroidN, 0) AS centroidN
ORDER BY id`
	cypherSessionHistory = `MATCH (e:UsageEvent {sessionId: $session})
RETURN e.toolId AS toolId, e.userId AS userId, e.success AS success, e.at AS at
ORDER BY e.at DESC, e.ordinal DESC
LIMIT $limit`
	// A served query's Seq is its ordinal + 1 (ordinals start at 0, Seq at 1).
	cypherServedQueries = `MATCH (e:UsageEvent)
WHERE e.success AND e.query IS NOT NULL AND e.query <> ''
RETURN e.toolId AS toolId, e.query AS query, e.queryEmbedding AS embedding, e.at AS at, e.ordinal + 1 AS seq
ORDER BY e.at DESC, e.ordinal DESC
LIMIT $limit`
	// cypherServedQueriesAfter continues after Seq $after: ordinals are
	// reserved in the transaction that creates the events, under the
	// sequence node's lock, so they become visible in ordinal order.
	cypherServedQueriesAfter = `MATCH (e:UsageEvent)
WHERE e.ordinal >= $after AND e.success AND e.query IS NOT NULL AND e.query <> ''
RETURN e.toolId AS toolId, e.query AS query, e.queryEmbedding AS embedding, e.at AS at, e.ordinal + 1 AS seq
ORDER BY e.ordinal
LIMIT $limit`
)

// Stats. Verb, category, tag and group counts are of nodes some tool points
// to; edges to placeholder tools are not counted (as in the SQLite store).
const (
	cypherStatsStatus = `MATCH (t:Tool)
WHERE t.status IS NOT NULL
RETURN t.status AS status, count(*) AS n
ORDER BY status`
	cypherStatsCounts = `RETURN
  COUNT { MATCH (v:Verb) WHERE EXISTS { (:Tool)-[:PROVIDES]->(v) } } AS verbs,
  COUNT { MATCH (e:Entity) } AS entities,
  COUNT { MATCH (c:Category) WHERE EXISTS { (:Tool)-[:IN]->(c) } } AS categories,
  COUNT { MATCH (g:Tag) WHERE EXISTS { (:Tool)-[:TAGGED]->(g) } } AS tags,
  COUNT { MATCH (g:Group) WHERE EXISTS { (:Tool)-[:MEMBER_OF]->(g) } } AS groups,
  COUNT { MATCH (:Tool)-[:PROVIDES|ABOUT|IN|TAGGED|MEMBER_OF]->() } AS toolEdges,
  COUNT { MATCH (:Module)-[:OFFERS]->() } AS offers,
  COUNT { MATCH (:Entity)-[:IS_A]->(:Entity) } AS isA,
  COUNT { MATCH (:Tool)-[:PAIRS_WITH|DEPENDS_ON|ALTERNATIVE_TO]->(o:Tool) WHERE o.record IS NOT NULL } AS relations,
  COUNT { MATCH (u:UsageEvent) } AS usageEvents`
)

// Statement is one named Cypher statement of this package.
type Statement struct {
	Name   string `json:"name"`
	Cypher string `json:"query"`
}

// Statements lists every statement the store can send, by name, sorted by
// name. The vector index formats are rendered with dimension 384. It exists
// for the Cypher lint and for documentation.
func Statements() []Statement {
	m := map[string]string{
		"constraintTool":         cypherConstraintTool,
		"constraintVerb":         cypherConstraintVerb,
		"constraintEntity":       cypherConstraintEntity,
		"constraintCategory":     cypherConstraintCategory,
		"constraintTag":          cypherConstraintTag,
		"constraintGroup":        cypherConstraintGroup,
		"constraintModule":       cypherConstraintModule,
		"constraintMeta":         cypherConstraintMeta,
		"indexToolStatus":        cypherIndexToolStatus,
		"indexToolUpdated":       cypherIndexToolUpdated,
		"toolsChangedSince":      cypherToolsChangedSince,
		"indexRevision":          cypherIndexRevision,
		"indexUsageSession":      cypherIndexUsageSession,
		"indexUsageAt":           cypherIndexUsageAt,
		"indexUsageOrdinal":      cypherIndexUsageOrdinal,
		"indexUsageUser":         cypherIndexUsageUser,
		"indexToolText":          cypherIndexToolText,
		"awaitIndexes":           cypherAwaitIndexes,
		"indexToolVector":        fmt.Sprintf(cypherIndexToolVectorFmt, 384),
		"indexUsageVector":       fmt.Sprintf(cypherIndexUsageVectorFmt, 384),
		"ensureEmbedder":         cypherEnsureEmbedder,
		"getEmbedder":            cypherGetEmbedder,
		"toolState":              cypherToolState,
		"mergeTool":              cypherMergeTool,
		"deleteToolEdges":        cypherDeleteToolEdges,
		"linkNodes":              cypherLinkNodes,
		"linkEntities":           cypherLinkEntities,
		"linkDependsOn":          cypherLinkDependsOn,
		"linkAlternatives":       cypherLinkAlternatives,
		"linkPairs":              cypherLinkPairs,
		"appendRevision":         cypherAppendRevision,
		"getTool":                cypherGetTool,
		"toolExists":             cypherToolExists,
		"countTools":             cypherCountTools,
		"listTools":              cypherListTools,
		"manifestRecords":        cypherManifestRecords,
		"setStatusRead":          cypherSetStatusRead,
		"setStatus":              cypherSetStatus,
		"history":                cypherHistory,
		"vectorSearch":           cypherVectorSearch,
		"usageSearch":            cypherUsageSearch,
		"textSearch":             cypherTextSearch,
		"vectorScoreIDs":         cypherVectorScoreIDs,
		"vectorScoresIDs":        cypherVectorScoresIDs,
		"usageScoreIDs":          cypherUsageScoreIDs,
		"activeEmbeddings":       cypherActiveEmbeddings,
		"relatedDependsOn":       cypherRelatedDependsOn,
		"relatedPairs":           cypherRelatedPairs,
		"relatedAlternatives":    cypherRelatedAlternatives,
		"entities":               cypherEntities,
		"findEntities":           cypherFindEntities,
		"entityStep":             cypherEntityStep,
		"toolsNearEntities":      cypherToolsNearEntities,
		"neighbourStart":         cypherNeighbourStart,
		"neighbourStep":          cypherNeighbourStep,
		"usageLock":              cypherUsageLock,
		"usageUpdate":            cypherUsageUpdate,
		"usageEvents":            cypherUsageEvents,
		"usageSequence":          cypherUsageSequence,
		"claimRunsLock":          cypherClaimRunsLock,
		"claimRuns":              cypherClaimRuns,
		"usage":                  cypherUsage,
		"sessionHistory":         cypherSessionHistory,
		"servedQueries":          cypherServedQueries,
		"servedQueriesAfter":     cypherServedQueriesAfter,
		"statsStatus":            cypherStatsStatus,
		"statsCounts":            cypherStatsCounts,
		"dropAllNodes":           cypherDropAllNodes,
		"showIndexes":            cypherShowIndexes,
		"showConstraints":        cypherShowConstraints,
		"dropIndex":              fmt.Sprintf(cypherDropIndexFmt, quoteName("tool_text")),
		"dropConstraint":         fmt.Sprintf(cypherDropConstraintFmt, quoteName("tool_id")),
		"indexDefinitionVector":  fmt.Sprintf(cypherIndexDefinitionVectorFmt, 384),
		"constraintSource":       cypherConstraintSource,
		"constraintDefinition":   cypherConstraintDefinition,
		"indexDefinitionSpec":    cypherIndexDefinitionSpec,
		"putSource":              cypherPutSource,
		"getSource":              cypherGetSource,
		"sources":                cypherSources,
		"deleteSource":           cypherDeleteSource,
		"deleteSpecDefinitions":  cypherDeleteSpecDefinitions,
		"putDefinitions":         cypherPutDefinitions,
		"specDefinitions":        cypherSpecDefinitions,
		"setSpecStatus":          cypherSetSpecStatus,
		"searchDefinitions":      cypherSearchDefinitions,
		"constraintApiKey":       cypherConstraintAPIKey,
		"constraintAudit":        cypherConstraintAudit,
		"indexAuditAt":           cypherIndexAuditAt,
		"constraintGap":          cypherConstraintGap,
		"getGap":                 cypherGetGap,
		"putGap":                 cypherPutGap,
		"coverGap":               cypherCoverGap,
		"listGaps":               cypherListGaps,
		"constraintPairSession":  cypherConstraintPairSession,
		"indexPairSessionCaller": cypherIndexPairSessionCaller,
		"pairSessions":           cypherPairSessions,
		"putPairSession":         cypherPutPairSession,
		"getLearnedPair":         cypherGetLearnedPair,
		"putLearnedPair":         cypherPutLearnedPair,
		"learnedPairs":           cypherLearnedPairs,
		"putSnapshot":            cypherPutSnapshot,
		"getSnapshot":            cypherGetSnapshot,
		"constraintModelVersion": cypherConstraintModelVersion,
		"putModelVersion":        cypherPutModelVersion,
		"getModelVersion":        cypherGetModelVersion,
		"listModelVersions":      cypherListModelVersions,
		"modelVersionExists":     cypherModelVersionExists,
		"demoteModelVersion":     cypherDemoteModelVersion,
		"promoteModelVersion":    cypherPromoteModelVersion,
		"promotedModelVersion":   cypherPromotedModelVersion,
		"createKey":              cypherCreateKey,
		"getKey":                 cypherGetKey,
		"listKeys":               cypherListKeys,
		"setKeyRecord":           cypherSetKeyRecord,
		"indexKeyRevoked":        cypherIndexKeyRevoked,
		"revokedKeys":            cypherRevokedKeys,
		"constraintRateCount":    cypherConstraintRateCount,
		"indexRateCountWindow":   cypherIndexRateCountWindow,
		"addRateCount":           cypherAddRateCount,
		"expireRateCounts":       cypherExpireRateCounts,
		"constraintCall":         cypherConstraintCall,
		"constraintCallLedger":   cypherConstraintCallLedger,
		"indexCallApproval":      cypherIndexCallApproval,
		"ledgerLock":             cypherLedgerLock,
		"ledgerTally":            cypherLedgerTally,
		"callSeq":                cypherCallSeq,
		"insertCalls":            cypherInsertCalls,
		"completeCall":           cypherCompleteCall,
		"callRecords":            cypherCallRecords,
		"callImport":             cypherCallImport,
		"indexNoticeTopic":       cypherIndexNoticeTopic,
		"noticeSeq":              cypherNoticeSeq,
		"insertNotices":          cypherInsertNotices,
		"trimNotices":            cypherTrimNotices,
		"latestNotices":          cypherLatestNotices,
		"noticesAfter":           cypherNoticesAfter,
		"noticeImport":           cypherNoticeImport,
		"claimSpan":              cypherClaimSpan,
		"putWrapperApproval":     cypherPutWrapperApproval,
		"getWrapperApproval":     cypherGetWrapperApproval,
		"auditExisting":          cypherAuditExisting,
		"appendAudit":            cypherAppendAudit,
		"auditEvents":            cypherAuditEvents,
		"constraintSeries":       cypherConstraintSeries,
		"seriesGet":              cypherSeriesGet,
		"seriesPut":              cypherSeriesPut,
		"seriesPoints":           cypherSeriesPoints,
		"seriesDelete":           cypherSeriesDelete,
		"constraintSession":      cypherConstraintSession,
		"putSession":             cypherPutSession,
		"getSession":             cypherGetSession,
		"touchSession":           cypherTouchSession,
		"deleteSession":          cypherDeleteSession,
		"deleteExpiredSessions":  cypherDeleteExpiredSessions,
		"setSessionFlash":        cypherSetSessionFlash,
		"constraintWrapper":      cypherConstraintWrapperApproval,
		"listWrapperApprovals":   cypherListWrapperApprovals,
	}
	out := make([]Statement, 0, len(m))
	for name, q := range m {
		out = append(out, Statement{Name: name, Cypher: q})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Maintenance statements used by Reset. Schema names cannot be parameters,
// so the drop formats take a name quoted by quoteName.
const (
	cypherDropAllNodes      = `MATCH (n) DETACH DELETE n`
	cypherShowIndexes       = `SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name ORDER BY name`
	cypherShowConstraints   = `SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name`
	cypherDropIndexFmt      = `DROP INDEX %s IF EXISTS`
	cypherDropConstraintFmt = `DROP CONSTRAINT %s IF EXISTS`
)

// quoteName quotes a schema name as a Cypher identifier (backticks doubled).
func quoteName(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// Sources and external definitions (graph.Definitions):
//
//	(:Source {id, type, location, createdAt, lastScannedAt, lastError, specs})
//	(:Source)-[:DEFINES]->(:Definition {id, sourceId, specHash, status, record, embedding, updatedAt})
const (
	cypherConstraintSource     = `CREATE CONSTRAINT source_id IF NOT EXISTS FOR (s:Source) REQUIRE s.id IS UNIQUE`
	cypherConstraintDefinition = `CREATE CONSTRAINT definition_id IF NOT EXISTS FOR (d:Definition) REQUIRE d.id IS UNIQUE`
	cypherIndexDefinitionSpec  = `CREATE INDEX definition_spec IF NOT EXISTS FOR (d:Definition) ON (d.specHash)`
	cypherPutSource            = `MERGE (s:Source {id: $id})
ON CREATE SET s.createdAt = $createdAt
SET s.type = $type, s.location = $location, s.lastScannedAt = $lastScannedAt, s.lastError = $lastError, s.specs = $specs`
	sourceReturn = `RETURN s.id AS id, s.type AS type, s.location AS location, s.createdAt AS createdAt,
       s.lastScannedAt AS lastScannedAt, s.lastError AS lastError, s.specs AS specs`
	cypherGetSource = `MATCH (s:Source {id: $id})
WHERE s.type IS NOT NULL
` + sourceReturn
	cypherSources = `MATCH (s:Source)
WHERE s.type IS NOT NULL
` + sourceReturn + `
ORDER BY id`
	// cypherDeleteSource removes the source and its still-available
	// definitions; definitions under review or onboarded stay.
	cypherDeleteSource = `MATCH (s:Source {id: $id})
WHERE s.type IS NOT NULL
OPTIONAL MATCH (s)-[:DEFINES]->(d:Definition)
WHERE d.status = 'available'
WITH s, collect(d) AS gone
FOREACH (x IN gone | DETACH DELETE x)
DETACH DELETE s
RETURN count(*) AS deleted`
	cypherDeleteSpecDefinitions = `MATCH (d:Definition {specHash: $specHash, sourceId: $sourceId})
DETACH DELETE d`
	cypherPutDefinitions = `MERGE (s:Source {id: $sourceId})
WITH s
UNWIND $defs AS def
MERGE (d:Definition {id: def.id})
SET d.sourceId = $sourceId, d.specHash = $specHash, d.status = def.status, d.record = def.record,
    d.embedding = def.embedding, d.updatedAt = $now
MERGE (s)-[:DEFINES]->(d)`
	cypherSpecDefinitions = `MATCH (d:Definition {specHash: $specHash})
RETURN d.record AS record, d.status AS status, d.embedding AS embedding
ORDER BY d.id`
	cypherSetSpecStatus = `MATCH (d:Definition {specHash: $specHash})
SET d.status = $status, d.updatedAt = $now
RETURN count(d) AS n`
	cypherSearchDefinitions = `CALL db.index.vector.queryNodes('definition_embedding', $candidates, $vector)
YIELD node, score
WHERE node.status IN $statuses
RETURN node.record AS record, node.status AS status, score
ORDER BY score DESC, node.id
LIMIT $k`
)

// API keys and the audit log (graph.Keys, graph.Audit):
//
//	(:ApiKey {id, hash, createdAt, revokedAt, record})
//	(:AuditEvent {id, at, actor, action, tool, record})
//
// record holds the JSON APIKey / AuditEvent exactly as the SQLite store
// keeps it; the other properties are what lookups and filters use. Only
// hashes of key secrets are ever stored.
const (
	cypherConstraintAPIKey = `CREATE CONSTRAINT api_key_id IF NOT EXISTS FOR (k:ApiKey) REQUIRE k.id IS UNIQUE`
	cypherConstraintAudit  = `CREATE CONSTRAINT audit_event_id IF NOT EXISTS FOR (a:AuditEvent) REQUIRE a.id IS UNIQUE`
	cypherIndexAuditAt     = `CREATE INDEX audit_event_at IF NOT EXISTS FOR (a:AuditEvent) ON (a.at)`
	// cypherCreateKey creates the key only when its id is new: no row back
	// means the id exists.
	cypherCreateKey = `OPTIONAL MATCH (x:ApiKey {id: $id})
WITH x
WHERE x IS NULL
CREATE (k:ApiKey {id: $id, hash: $hash, createdAt: $createdAt, revokedAt: $revokedAt, record: $record})
RETURN k.id AS id`
	cypherGetKey = `MATCH (k:ApiKey {id: $id})
RETURN k.record AS record`
	cypherListKeys = `MATCH (k:ApiKey)
RETURN k.record AS record
ORDER BY k.createdAt, k.id`
	cypherSetKeyRecord = `MATCH (k:ApiKey {id: $id})
SET k.revokedAt = $revokedAt, k.record = $record`
	// cypherRevokedKeys counts revoked keys over the revokedAt index.
	cypherIndexKeyRevoked = `CREATE INDEX api_key_revoked IF NOT EXISTS FOR (k:ApiKey) ON (k.revokedAt)`
	cypherRevokedKeys     = `MATCH (k:ApiKey)
WHERE k.revokedAt > 0
RETURN count(k) AS n`
	cypherAuditExisting = `UNWIND $ids AS id
MATCH (a:AuditEvent {id: id})
RETURN a.id AS id`
	cypherAppendAudit = `UNWIND $events AS e
CREATE (:AuditEvent {id: e.id, at: e.at, actor: e.actor, action: e.action, tool: e.tool, record: e.record})`
	cypherAuditEvents = `MATCH (a:AuditEvent)
WHERE ($actor = '' OR a.actor = $actor) AND ($action = '' OR a.action = $action) AND ($tool = '' OR a.tool = $tool)
  AND ($since = 0 OR a.at >= $since) AND ($until = 0 OR a.at < $until) AND ($before = '' OR a.id < $before)
RETURN a.record AS record
ORDER BY a.id DESC
LIMIT $limit`
)

// Capability gaps (graph.Gaps):
//
//	(:Gap {verb, status, count, lastSeen, record})-[:COVERED_BY]->(:Tool)
//
// record holds the JSON Gap exactly as the SQLite store keeps it; a closed
// gap is COVERED_BY the tool registered for its verb.
const (
	cypherConstraintGap = `CREATE CONSTRAINT gap_verb IF NOT EXISTS FOR (g:Gap) REQUIRE g.verb IS UNIQUE`
	cypherGetGap        = `MATCH (g:Gap {verb: $verb})
RETURN g.record AS record`
	cypherPutGap = `MERGE (g:Gap {verb: $verb})
SET g.status = $status, g.count = $count, g.lastSeen = $lastSeen, g.record = $record`
	// cypherCoverGap replaces the gap's COVERED_BY edge: to the tool
	// $toolId when it exists, to nothing when $toolId is "" (reopened).
	cypherCoverGap = `MATCH (g:Gap {verb: $verb})
OPTIONAL MATCH (g)-[old:COVERED_BY]->()
DELETE old
WITH DISTINCT g
OPTIONAL MATCH (t:Tool {id: $toolId})
FOREACH (_ IN CASE WHEN t IS NULL THEN [] ELSE [1] END | MERGE (g)-[:COVERED_BY]->(t))`
	cypherListGaps = `MATCH (g:Gap)
WHERE $status = '' OR g.status = $status
RETURN g.record AS record
ORDER BY g.count DESC, g.lastSeen DESC, g.verb
LIMIT $limit`
)

// Learned pairings (graph.Pairings): tools used together, one edge per
// pair from the smaller id to the larger; weight is as of updatedAt (Unix
// nanoseconds) and decays with graph.PairHalfLife; callers counts the
// distinct callers whose sessions gave evidence of it (graph.PairQuorum;
// missing on the edges learned before it was kept, read as 0). One
// PairSession node per pair and caller's session that gave evidence, keyed
// by the four, makes a pair count once per session.
//
//	(:Tool)-[:PAIRS_LEARNED {weight, count, callers, updatedAt}]->(:Tool)
//	(:PairSession {key, a, b, caller, session, at})
const (
	cypherConstraintPairSession  = `CREATE CONSTRAINT pair_session_key IF NOT EXISTS FOR (s:PairSession) REQUIRE s.key IS UNIQUE`
	cypherIndexPairSessionCaller = `CREATE INDEX pair_session_caller IF NOT EXISTS FOR (s:PairSession) ON (s.a, s.b, s.caller)`
	cypherPairSessions           = `OPTIONAL MATCH (s:PairSession {a: $a, b: $b, caller: $caller})
RETURN count(s) AS sessions, count(CASE WHEN s.session = $session THEN 1 END) AS seen`
	cypherPutPairSession = `MATCH (:Tool {id: $a})
MATCH (:Tool {id: $b})
MERGE (s:PairSession {key: $key})
SET s.a = $a, s.b = $b, s.caller = $caller, s.session = $session, s.at = $at`
	cypherGetLearnedPair = `MATCH (:Tool {id: $a})-[p:PAIRS_LEARNED]->(:Tool {id: $b})
RETURN p.weight AS weight, p.count AS count, p.callers AS callers, p.updatedAt AS updatedAt`
	cypherPutLearnedPair = `MATCH (a:Tool {id: $a})
MATCH (b:Tool {id: $b})
MERGE (a)-[p:PAIRS_LEARNED]->(b)
SET p.weight = $weight, p.count = $count, p.callers = $callers, p.updatedAt = $updatedAt`
	cypherLearnedPairs = `MATCH (:Tool {id: $id})-[p:PAIRS_LEARNED]-(t:Tool)
WHERE t.id <> $id AND coalesce(p.callers, 0) >= $quorum AND ` + filterWhere + `
RETURN t.summary AS summary, p.weight AS weight, p.updatedAt AS updatedAt`
)

// Snapshots (graph.Snapshots): the latest document of a periodic
// computation, kept on a meta node keyed "snapshot:<name>"; record is the
// JSON graph.Snapshot.
const (
	cypherPutSnapshot = `MERGE (m:ToolsmithMeta {key: $key})
SET m.record = $record`
	cypherGetSnapshot = `MATCH (m:ToolsmithMeta {key: $key})
RETURN m.record AS record`
)

// Model versions (graph.ModelVersions): one node per version of the
// learned ranking model; record is the domain's JSON description, blob its
// parameters in base64 (a put without one keeps the stored blob), createdAt
// Unix nanoseconds. At most one has status 'promoted'.
//
//	(:ModelVersion {id, createdAt, status, record, blob})
const (
	cypherConstraintModelVersion = `CREATE CONSTRAINT model_version_id IF NOT EXISTS FOR (v:ModelVersion) REQUIRE v.id IS UNIQUE`
	cypherPutModelVersion        = `MERGE (v:ModelVersion {id: $id})
SET v.createdAt = $createdAt, v.status = $status, v.record = $record, v.blob = coalesce($blob, v.blob)`
	cypherGetModelVersion = `MATCH (v:ModelVersion {id: $id})
RETURN v.id AS id, v.createdAt AS createdAt, v.status AS status, v.record AS record, v.blob AS blob`
	cypherListModelVersions = `MATCH (v:ModelVersion)
RETURN v.id AS id, v.createdAt AS createdAt, v.status AS status, v.record AS record
ORDER BY v.createdAt DESC, v.id DESC
LIMIT $limit`
	cypherModelVersionExists = `MATCH (v:ModelVersion {id: $id})
RETURN v.id AS id`
	cypherDemoteModelVersion = `MATCH (v:ModelVersion {status: 'promoted'})
WHERE v.id <> $id
SET v.status = $previous`
	cypherPromoteModelVersion = `MATCH (v:ModelVersion {id: $id})
SET v.status = 'promoted'`
	cypherPromotedModelVersion = `MATCH (v:ModelVersion {status: 'promoted'})
RETURN v.id AS id, v.createdAt AS createdAt, v.status AS status, v.record AS record, v.blob AS blob
ORDER BY v.createdAt DESC
LIMIT 1`
)
