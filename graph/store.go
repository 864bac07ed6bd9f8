package graph

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Errors a Store returns. The kinds a caller branches on (not found,
// invalid record, conflict) are internal/fault's sentinels, so every layer
// tests one value: implementations wrap fault.ErrNotFound, fault.ErrInvalid
// and fault.ErrConflict with context ("graph: get tool %q: %w"). The two
// below are the store's own.
var (
	// ErrEmbedderMismatch is returned by EnsureEmbedder when the store was
	// built with a different embedding model or dimension.
	ErrEmbedderMismatch = errors.New("embedder mismatch")
	// ErrDimension is returned when a vector's length differs from the
	// dimension recorded in the store.
	ErrDimension = errors.New("embedding dimension mismatch")
)

// Tool statuses.
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusDisabled   = "disabled"
)

// RelKind names a tool-to-tool relationship.
type RelKind string

// Relationship kinds, one per edge type of the graph model.
const (
	RelDependsOn   RelKind = "DEPENDS_ON"
	RelAlternative RelKind = "ALTERNATIVE_TO"
	RelPairsWith   RelKind = "PAIRS_WITH"
)

// EmbedderInfo identifies the embedding model a store's vectors come from.
type EmbedderInfo struct {
	Model     string `json:"model"`
	Dimension int    `json:"dimension"`
}

// EntityRef is an entity a tool is ABOUT, as written in a manifest: a name and
// the entity's type (e.g. "Southwest", "Airline"). The store creates an Entity
// node for the name, one for the type, and (name)-[:IS_A]->(type).
type EntityRef struct {
	Name    string   `json:"name"`
	Type    string   `json:"type,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

// Relation is an outgoing tool-to-tool edge. Target may name a tool that is
// not registered yet; such edges are kept but never returned by Related until
// the target exists.
type Relation struct {
	Kind     RelKind `json:"kind"`
	Target   string  `json:"target"`
	Score    float64 `json:"score,omitempty"`    // PAIRS_WITH only: co-occurrence score in [0,1]
	Sequence string  `json:"sequence,omitempty"` // PAIRS_WITH only: before|after|parallel
}

// ToolSummary is the lightweight projection of a tool: everything needed to
// filter, rank and list it, without the full manifest or the embedding.
type ToolSummary struct {
	ID                string    `json:"toolId"`
	Verb              string    `json:"verb"`
	Name              string    `json:"name"`
	ShortDescription  string    `json:"shortDescription"`
	Category          string    `json:"category"`
	Tags              []string  `json:"tags"`
	Groups            []string  `json:"groups"`
	State             string    `json:"state,omitempty"`
	AvailableInStates []string  `json:"availableInStates,omitempty"`
	Permissions       []string  `json:"permissionsRequired"`
	RequiredLevel     string    `json:"requiredPermission,omitempty"`
	Module            string    `json:"module,omitempty"`
	Complexity        string    `json:"complexity,omitempty"`
	Version           string    `json:"version,omitempty"`
	Status            string    `json:"status"`
	RequiredParams    []string  `json:"requiredParams"`
	OptionalParams    []string  `json:"optionalParams"`
	UpdatedAt         time.Time `json:"updatedAt"`
}

// Tool is a full tool record: its summary, the text the full-text index sees,
// its graph edges, its embedding and the complete manifest JSON.
type Tool struct {
	ToolSummary
	// Description is the tool's full description (full-text field).
	Description string `json:"description"`
	// UseCases are extra searchable phrases (full-text field).
	UseCases []string `json:"useCases,omitempty"`
	// ParamsText is what the tool's inputs are (names and short
	// descriptions), indexed with the tags (full-text field).
	ParamsText string `json:"paramsText,omitempty"`
	// Entities become (Tool)-[:ABOUT]->(Entity) edges.
	Entities []EntityRef `json:"entities,omitempty"`
	// Relations become DEPENDS_ON / ALTERNATIVE_TO / PAIRS_WITH edges.
	Relations []Relation `json:"relations,omitempty"`
	// Embedding is the tool's unit-length vector (dimension = EmbedderInfo).
	Embedding []float32 `json:"-"`
	// Manifest is the complete manifest as registered.
	Manifest json.RawMessage `json:"manifest"`
	// CreatedAt is set by the store on first insert.
	CreatedAt time.Time `json:"createdAt"`
}

// UpsertResult reports what UpsertTool did.
type UpsertResult struct {
	Created  bool `json:"created"`  // false: an existing tool was replaced
	Revision int  `json:"revision"` // 1 for a new tool, +1 on every change
}

// Revision is one entry of a tool's history: the manifest and status it had.
type Revision struct {
	Revision int             `json:"revision"`
	Status   string          `json:"status"`
	Reason   string          `json:"reason,omitempty"`
	Manifest json.RawMessage `json:"manifest"`
	At       time.Time       `json:"at"`
}

// ListQuery pages through the lightweight index, ordered by tool id.
type ListQuery struct {
	After  string // return ids strictly greater than this (cursor); "" = from the start
	Limit  int    // <= 0 means 100; capped at 1000
	Filter Filter
}

// ToolPage is one page of ListTools.
type ToolPage struct {
	Items []ToolSummary `json:"items"`
	// Next is the cursor for the following page, "" on the last page.
	Next string `json:"next,omitempty"`
	// Total counts every tool that matches the filter's pushed-down fields
	// (statuses, categories, ids, modules); Allow is not applied to Total.
	Total int `json:"total"`
}

// Filter restricts which tools a query may return. The zero Filter returns
// active tools only. Stores push Statuses, Categories, IDs and Modules down
// into their query language and then apply Allow in Go to each candidate,
// fetching more candidates as needed so that k results are returned whenever
// k allowed tools match.
type Filter struct {
	Statuses   []string // empty = [StatusActive]
	Categories []string // empty = any
	IDs        []string // empty = any; otherwise restrict to these ids
	Modules    []string // empty = any
	// Allow, when set, is the caller's visibility check (permissions, groups,
	// states, levels). It must be cheap and safe for concurrent use.
	Allow func(*ToolSummary) bool
}

// Hit is a scored search result.
type Hit struct {
	Tool ToolSummary `json:"tool"`
	// Score: for VectorSearch and UsageSearch the cosine similarity in [-1,1];
	// for TextSearch a positive relevance score (bm25 or Lucene), higher is better.
	Score float64 `json:"score"`
}

// Entity is a node of the graph's entity vocabulary.
type Entity struct {
	Key     string   `json:"key"`  // lower-cased name, unique
	Name    string   `json:"name"` // as first written
	Type    string   `json:"type,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

// EntityHit is a tool reached from an entity by graph traversal.
type EntityHit struct {
	ToolID    string `json:"toolId"`
	EntityKey string `json:"entityKey"`
	// Depth is 1 when the tool is directly ABOUT the entity, 2 when it is ABOUT
	// an entity that IS_A the start entity or the start IS_A it, and so on.
	Depth int `json:"depth"`
}

// Node and Edge describe a neighbourhood subgraph.
type Node struct {
	Label string `json:"label"` // Tool, Verb, Entity, Category, Tag, Group, Module
	Key   string `json:"key"`
}

// Edge is a typed edge between two nodes of a Subgraph.
type Edge struct {
	From Node   `json:"from"`
	Type string `json:"type"`
	To   Node   `json:"to"`
}

// Subgraph is what Neighbourhood returns.
type Subgraph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Stats counts what a store holds.
type Stats struct {
	Tools       int            `json:"tools"`
	ByStatus    map[string]int `json:"byStatus"`
	Verbs       int            `json:"verbs"`
	Entities    int            `json:"entities"`
	Categories  int            `json:"categories"`
	Tags        int            `json:"tags"`
	Groups      int            `json:"groups"`
	Edges       int            `json:"edges"`
	UsageEvents int            `json:"usageEvents"`
	Embedder    EmbedderInfo   `json:"embedder"`
}

// UsageEvent records one use of a tool: a query (or verb text) it served,
// from a session, and whether it succeeded. QueryEmbedding, when set, feeds
// the tool's usage centroid and is kept with a successful event. Origin is
// OriginObserved or OriginReported (see RunClaims); stores keep it.
type UsageEvent struct {
	ToolID         string    `json:"toolId"`
	SessionID      string    `json:"sessionId,omitempty"`
	UserID         string    `json:"userId,omitempty"`
	Query          string    `json:"query,omitempty"`
	QueryEmbedding []float32 `json:"-"`
	Success        bool      `json:"success"`
	LatencyMs      int64     `json:"latencyMs,omitempty"`
	At             time.Time `json:"at"`
	Origin         string    `json:"origin,omitempty"`
	// Level is the access level of the caller the use was recorded for
	// (guest, user, admin, owner; empty for a guest). Stores do not keep
	// it: it is read as the event is recorded, to decide whether the use
	// teaches pairings (retrieval).
	Level string `json:"-"`
}

// Usage is the evidence a tool has accumulated from UsageEvents.
type Usage struct {
	ToolID    string    `json:"toolId"`
	Uses      int       `json:"uses"`
	Successes int       `json:"successes"`
	LastUsed  time.Time `json:"lastUsed"`
	// Centroid is the unit-length mean of the embeddings of the queries the
	// tool served successfully (nil when none had an embedding).
	Centroid []float32 `json:"-"`
	// CentroidN counts the embeddings in Centroid.
	CentroidN int `json:"centroidN"`
}

// SessionEvent is one entry of a session's tool history, newest first.
type SessionEvent struct {
	ToolID string `json:"toolId"`
	// UserID is the user the event was recorded for ("" for an anonymous
	// caller's).
	UserID  string    `json:"userId,omitempty"`
	Success bool      `json:"success"`
	At      time.Time `json:"at"`
}

// ServedQuery is a query text a tool served successfully, with the
// query's embedding when the event carried one.
type ServedQuery struct {
	ToolID    string    `json:"toolId"`
	Query     string    `json:"query"`
	Embedding []float32 `json:"-"`
	At        time.Time `json:"at"`
	// Seq is the event's place in the store's order of writes (from 1,
	// increasing): ServedQueriesAfter continues from it.
	Seq int64 `json:"seq"`
}

// MeanVectorer is the Store capability of the mean of the normalised
// embeddings of active tools (nil when there are none). Retrieval uses it to
// centre cosine scores, which removes the direction every tool vector
// shares. The Neo4j store caches it for up to a minute.
type MeanVectorer interface {
	MeanVector(ctx context.Context) ([]float32, error)
}

// VectorScorer is the Store capability of the cosine similarity of each of
// several vectors with each tool that f allows and that has an embedding,
// in one call. f.IDs must list the tools (an empty list scores none).
// scores[id][i] is the cosine with vecs[i], as VectorSearch scores it.
// Retrieval's phrase signal scores its candidates with it instead of one
// VectorSearch per phrase.
type VectorScorer interface {
	VectorScores(ctx context.Context, vecs [][]float32, f Filter) (map[string][]float64, error)
}

// Follower is the Store capability of following the writes other
// processes make to the same store: API replicas and workers opened on one
// SQLite file, or on one Neo4j database. Refresh applies to what this
// instance holds in memory (the SQLite store's vector and text indexes,
// usage evidence and caches; the Neo4j store's mean-vector cache) every
// tool write another instance committed since the last Refresh, and
// returns those tools' ids (registered, re-described, retired, re-enabled),
// each once, so that the caller can invalidate caches of its own. The
// instance's own writes are applied when they commit and are not
// returned. Called every FollowEvery (graph.Follow), it bounds how long
// another replica's write stays invisible here: FollowEvery plus the
// time one Refresh takes.
type Follower interface {
	Refresh(ctx context.Context) ([]string, error)
}

// Store is Toolsmith's property graph of tools. Every method is safe for
// concurrent use. Implementations: graph/sqlite (embedded default) and
// graph/neo4j (production); graph/graphtest holds their shared contract suite.
//
// Store includes every capability interface (Keys, Audit, Definitions, Gaps,
// Pairings, Series, Snapshots, ModelVersions, Sessions, MeanVectorer,
// VectorScorer, Follower, RateCounts, CallLedger, WrapperApprovals,
// Notices, RunClaims):
// both stores implement them all, and each asserts so at compile time, so
// no consumer discovers a capability at run time. A consumer that needs
// only one takes that narrow interface.
type Store interface {
	Keys
	Audit
	Definitions
	Gaps
	Pairings
	Series
	Snapshots
	ModelVersions
	Sessions
	MeanVectorer
	VectorScorer
	Follower
	RateCounts
	CallLedger
	WrapperApprovals
	Notices
	RunClaims

	// EnsureEmbedder records info on first call; later calls return
	// ErrEmbedderMismatch (wrapped, naming both) when model or dimension differ.
	EnsureEmbedder(ctx context.Context, info EmbedderInfo) error
	// Embedder returns the recorded embedder, or fault.ErrNotFound.
	Embedder(ctx context.Context) (EmbedderInfo, error)

	// UpsertTool writes a tool with its Verb, Category, Tag, Group, Module and
	// Entity nodes, its edges, embedding and full-text row atomically: all or
	// nothing. Replacing a tool replaces its outgoing edges and appends a
	// Revision. The embedding length must match the recorded dimension.
	UpsertTool(ctx context.Context, t Tool) (UpsertResult, error)
	// GetTool returns a tool whatever its status, or fault.ErrNotFound.
	GetTool(ctx context.Context, id string) (Tool, error)
	// ListTools pages through tool summaries ordered by id.
	ListTools(ctx context.Context, q ListQuery) (ToolPage, error)
	// ManifestRunes returns, for every tool whatever its status, the
	// number of runes of its manifest as GetTool returns it (0 when it
	// has none), in one read of the store: what sizing every manifest
	// costs without reading each tool.
	ManifestRunes(ctx context.Context) (map[string]int, error)
	// SetStatus changes a tool's status (deprecate, disable, re-enable) and
	// appends a Revision with the reason; the tool and its history are kept.
	SetStatus(ctx context.Context, id, status, reason string) error
	// History returns a tool's revisions, oldest first.
	History(ctx context.Context, id string) ([]Revision, error)

	// Related returns tools linked from id by kind, best first (PAIRS_WITH by
	// score), limited and filtered. ALTERNATIVE_TO is symmetric: edges in
	// either direction count. Unknown id: fault.ErrNotFound.
	Related(ctx context.Context, id string, kind RelKind, limit int, f Filter) ([]Hit, error)
	// VectorSearch returns the k tools whose embeddings are most similar to vec.
	VectorSearch(ctx context.Context, vec []float32, k int, f Filter) ([]Hit, error)
	// TextSearch runs a full-text query over name, verb, description, tags,
	// use cases and entity names (weighted in that spirit) and returns up to k
	// hits. The query is plain user text: the store escapes it.
	TextSearch(ctx context.Context, query string, k int, f Filter) ([]Hit, error)

	// Entities lists the whole entity vocabulary, ordered by key.
	Entities(ctx context.Context) ([]Entity, error)
	// FindEntities returns the entities whose name or an alias equals one of
	// names, case-insensitively.
	FindEntities(ctx context.Context, names []string) ([]Entity, error)
	// ToolsNearEntities traverses from the given entity keys over IS_A (both
	// directions) and ABOUT edges up to maxDepth and returns each reachable,
	// allowed tool once with its smallest depth.
	ToolsNearEntities(ctx context.Context, keys []string, maxDepth int, f Filter) ([]EntityHit, error)
	// Neighbourhood returns the nodes and edges within depth hops of a tool.
	Neighbourhood(ctx context.Context, toolID string, depth int) (Subgraph, error)

	// RecordUsage applies usage events atomically (all or none): counts,
	// session history and the usage centroid of each tool.
	RecordUsage(ctx context.Context, events []UsageEvent) error
	// Usage returns the usage evidence of the given tools (missing = no use).
	Usage(ctx context.Context, ids []string) (map[string]Usage, error)
	// UsageSearch is VectorSearch over usage centroids: tools whose served
	// queries resemble vec. Tools without a centroid never appear.
	UsageSearch(ctx context.Context, vec []float32, k int, f Filter) ([]Hit, error)
	// SessionHistory returns a session's tool events, newest first.
	SessionHistory(ctx context.Context, sessionID string, limit int) ([]SessionEvent, error)
	// ServedQueries returns the latest successful events that carry a query
	// text, newest first, across all sessions (limit <= 0 means 100), with
	// the query embeddings the events carried: what retrieval rebuilds its
	// query-log and neighbours signals from after a restart.
	ServedQueries(ctx context.Context, limit int) ([]ServedQuery, error)
	// ServedQueriesAfter returns the served queries written after the one
	// with Seq after (0: from the first), oldest first, at most limit
	// (limit <= 0 means 100). Events are visible in Seq order: once one is
	// returned, none with a smaller Seq can appear later. Retrieval follows
	// with it the events other processes write (a worker's executions,
	// another API replica).
	ServedQueriesAfter(ctx context.Context, after int64, limit int) ([]ServedQuery, error)

	// Stats counts nodes, edges and usage.
	Stats(ctx context.Context) (Stats, error)
	// Close releases the store.
	Close() error
}
