package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migrations are applied in order; migrations[i] moves the schema from
// version i to version i+1. Never edit a released migration: append one.
var migrations = []string{
	// v1: the graph model.
	`
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

-- Tool nodes. seq is the FTS5 rowid; summary is the JSON ToolSummary and
-- record the JSON Tool without its embedding.
CREATE TABLE tools (
	seq        INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	verb       TEXT NOT NULL DEFAULT '',
	category   TEXT NOT NULL DEFAULT '',
	module     TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL,
	revision   INTEGER NOT NULL,
	summary    TEXT NOT NULL,
	record     TEXT NOT NULL,
	embedding  BLOB,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX tools_status_id ON tools(status, id);
CREATE INDEX tools_category ON tools(category);
CREATE INDEX tools_module ON tools(module);

CREATE TABLE revisions (
	tool_id  TEXT NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
	revision INTEGER NOT NULL,
	status   TEXT NOT NULL,
	reason   TEXT NOT NULL DEFAULT '',
	manifest TEXT,
	at       INTEGER NOT NULL,
	PRIMARY KEY (tool_id, revision)
);

-- Verb, Category, Tag, Group and Module nodes.
CREATE TABLE nodes (
	label TEXT NOT NULL,
	key   TEXT NOT NULL,
	PRIMARY KEY (label, key)
);

-- Entity nodes (key = lower-cased name) and their aliases.
CREATE TABLE entities (
	key  TEXT PRIMARY KEY,
	name TEXT NOT NULL,
	type TEXT NOT NULL DEFAULT ''
);
CREATE TABLE entity_aliases (
	alias_key  TEXT NOT NULL,
	entity_key TEXT NOT NULL REFERENCES entities(key),
	alias      TEXT NOT NULL,
	PRIMARY KEY (alias_key, entity_key)
);
CREATE INDEX entity_aliases_entity ON entity_aliases(entity_key);

-- (Entity)-[:IS_A]->(Entity)
CREATE TABLE is_a (
	entity_key TEXT NOT NULL REFERENCES entities(key),
	type_key   TEXT NOT NULL REFERENCES entities(key),
	PRIMARY KEY (entity_key, type_key)
);
CREATE INDEX is_a_type ON is_a(type_key);

-- Edges between a tool and a non-tool node: PROVIDES Verb, IN Category,
-- TAGGED Tag, MEMBER_OF Group, ABOUT Entity, and (Module)-[:OFFERS]->(Tool)
-- stored from the tool's side with type OFFERS.
CREATE TABLE tool_edges (
	tool_id TEXT NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
	type    TEXT NOT NULL,
	label   TEXT NOT NULL,
	key     TEXT NOT NULL,
	PRIMARY KEY (tool_id, type, label, key)
);
CREATE INDEX tool_edges_node ON tool_edges(label, key, type);

-- Tool-to-tool edges. to_id may name a tool that does not exist yet.
CREATE TABLE relations (
	from_id  TEXT NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
	kind     TEXT NOT NULL,
	to_id    TEXT NOT NULL,
	score    REAL NOT NULL DEFAULT 0,
	sequence TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (from_id, kind, to_id)
);
CREATE INDEX relations_to ON relations(to_id, kind);

-- Full-text index; rowid = tools.seq. The porter stemmer lets "reservations"
-- match "reservation"; unicode61 splits UPPER_SNAKE verbs on '_'.
CREATE VIRTUAL TABLE tools_fts USING fts5(
	name, verb, description, tags, use_cases, entities,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TABLE usage (
	tool_id      TEXT PRIMARY KEY REFERENCES tools(id) ON DELETE CASCADE,
	uses         INTEGER NOT NULL DEFAULT 0,
	successes    INTEGER NOT NULL DEFAULT 0,
	last_used    INTEGER NOT NULL DEFAULT 0,
	centroid_sum BLOB,
	centroid_n   INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE usage_events (
	id         INTEGER PRIMARY KEY,
	tool_id    TEXT NOT NULL REFERENCES tools(id) ON DELETE CASCADE,
	session_id TEXT NOT NULL DEFAULT '',
	user_id    TEXT NOT NULL DEFAULT '',
	query      TEXT NOT NULL DEFAULT '',
	success    INTEGER NOT NULL,
	latency_ms INTEGER NOT NULL DEFAULT 0,
	at         INTEGER NOT NULL
);
CREATE INDEX usage_events_session ON usage_events(session_id, at, id);
`,
	// v2: tool sources and the external definitions they yield.
	`
CREATE TABLE sources (
	id              TEXT PRIMARY KEY,
	type            TEXT NOT NULL,
	location        TEXT NOT NULL,
	created_at      INTEGER NOT NULL,
	last_scanned_at INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT NOT NULL DEFAULT '',
	specs           INTEGER NOT NULL DEFAULT 0
);

-- (Source)-[:DEFINES]->(Definition); record is the JSON Definition
-- without its embedding.
CREATE TABLE definitions (
	id         TEXT PRIMARY KEY,
	source_id  TEXT NOT NULL,
	spec_hash  TEXT NOT NULL,
	status     TEXT NOT NULL,
	record     TEXT NOT NULL,
	embedding  BLOB,
	updated_at INTEGER NOT NULL
);
CREATE INDEX definitions_spec ON definitions(spec_hash);
CREATE INDEX definitions_source ON definitions(source_id);
CREATE INDEX definitions_status ON definitions(status);
`,
	// v3: served queries keep their embeddings (retrieval's neighbours
	// signal is rebuilt from them after a restart) and are read newest first.
	`
ALTER TABLE usage_events ADD COLUMN query_vec BLOB;
CREATE INDEX usage_events_at ON usage_events(at, id);
`,
	// v4: API keys (hashes only, never secrets) and the append-only audit
	// log. record holds the JSON APIKey / AuditEvent; the columns beside it
	// are what lookups and filters use.
	`
CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	hash       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER NOT NULL DEFAULT 0,
	record     TEXT NOT NULL
);
CREATE INDEX api_keys_created ON api_keys(created_at, id);

CREATE TABLE audit_events (
	id     TEXT PRIMARY KEY,
	at     INTEGER NOT NULL,
	actor  TEXT NOT NULL,
	action TEXT NOT NULL,
	tool   TEXT NOT NULL,
	record TEXT NOT NULL
);
CREATE INDEX audit_events_actor ON audit_events(actor, id);
CREATE INDEX audit_events_action ON audit_events(action, id);
CREATE INDEX audit_events_tool ON audit_events(tool, id);
CREATE INDEX audit_events_at ON audit_events(at);
`,
	// v5: capability gaps, one row per verb nothing fulfilled. record holds
	// the JSON Gap; status, count and last_seen order listings, closed_by
	// is the tool that covered it.
	`
CREATE TABLE gaps (
	verb      TEXT PRIMARY KEY,
	status    TEXT NOT NULL,
	count     INTEGER NOT NULL,
	last_seen INTEGER NOT NULL,
	closed_by TEXT NOT NULL DEFAULT '',
	record    TEXT NOT NULL
);
CREATE INDEX gaps_rank ON gaps(status, count DESC, last_seen DESC);
`,
	// v6: learned pairings, one row per pair of tools used together (a < b);
	// weight is as of updated_at and decays with graph.PairHalfLife.
	`
CREATE TABLE learned_pairs (
	a          TEXT NOT NULL,
	b          TEXT NOT NULL,
	weight     REAL NOT NULL,
	count      INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (a, b)
);
CREATE INDEX learned_pairs_b ON learned_pairs(b);
`,
	// v7: versions of the learned ranking model (graph.ModelVersions); at
	// most one has status 'promoted'.
	`
CREATE TABLE model_versions (
	id         TEXT PRIMARY KEY,
	created_at INTEGER NOT NULL,
	status     TEXT NOT NULL,
	record     TEXT NOT NULL,
	blob       BLOB
);
CREATE INDEX model_versions_created ON model_versions(created_at DESC, id DESC);
CREATE UNIQUE INDEX model_versions_promoted ON model_versions(status) WHERE status = 'promoted';
`,
	// v8: the operations time series (graph.Series), one row per series,
	// resolution and bucket; hist is a JSON array of bucket counts or NULL.
	`
CREATE TABLE series_points (
	series TEXT NOT NULL,
	res    TEXT NOT NULL,
	at     INTEGER NOT NULL,
	count  REAL NOT NULL,
	sum    REAL NOT NULL,
	hist   TEXT,
	PRIMARY KEY (series, res, at)
);
CREATE INDEX series_points_age ON series_points(res, at);
`,
	// v9: console sessions (graph.Sessions), keyed by the hex SHA-256 of
	// the session token; record holds the JSON session, flash its sealed
	// one-time result (NULL: none).
	`
CREATE TABLE console_sessions (
	id         TEXT PRIMARY KEY,
	expires_at INTEGER NOT NULL,
	record     TEXT NOT NULL,
	flash      BLOB
);
CREATE INDEX console_sessions_expiry ON console_sessions(expires_at);
`,
	// v10: revoked keys, counted by processes that cache verified keys
	// (graph.Keys.RevokedKeys).
	`CREATE INDEX api_keys_revoked ON api_keys(revoked_at) WHERE revoked_at > 0;`,
	// v11: rate-limit counts shared by replicas (graph.RateCounts): one row per
	// key and one-minute window, expired by the limiters.
	`CREATE TABLE rate_counts (
	key    TEXT NOT NULL,
	win    INTEGER NOT NULL,
	n      INTEGER NOT NULL,
	PRIMARY KEY (key, win)
) WITHOUT ROWID;
CREATE INDEX rate_counts_window ON rate_counts(win);
`,
	// v12: the airlock's execution ledger (graph.CallLedger): calls, each
	// approval's running spent total, and the ledger files imported.
	`CREATE TABLE calls (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	approval_id TEXT NOT NULL,
	at          INTEGER NOT NULL,
	cost        REAL NOT NULL,
	record      TEXT NOT NULL
);
CREATE INDEX calls_approval_at ON calls(approval_id, at);
CREATE TABLE call_ledgers (
	approval_id TEXT PRIMARY KEY,
	spent       REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE call_imports (
	source TEXT PRIMARY KEY,
	at     INTEGER NOT NULL,
	calls  INTEGER NOT NULL
) WITHOUT ROWID;
`,
	// v13: the current approval of each airlock wrapper, with its spec
	// (graph.WrapperApprovals): any worker rebuilds the wrapper from it.
	`CREATE TABLE wrapper_approvals (
	slug        TEXT PRIMARY KEY,
	approval_id TEXT NOT NULL,
	spec_hash   TEXT NOT NULL,
	spec        TEXT NOT NULL,
	record      TEXT NOT NULL,
	updated_at  INTEGER NOT NULL
);
`,
	// v14: the order of tool writes, which other processes on the same file
	// follow (Store.Refresh): every insert, re-description and status
	// change sets change_seq to one more than the largest, inside the
	// write transaction, so that SQLite's single writer makes the order
	// that of the commits.
	`
ALTER TABLE tools ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
UPDATE tools SET change_seq = seq;
CREATE INDEX tools_change_seq ON tools(change_seq);
`,
	// v15: short logs by topic shared by every process (graph.Notices: the
	// airlock's notifications, cache invalidations), the imports of
	// notification files, and the marks of claimed spans (ClaimSpan).
	`CREATE TABLE notices (
	seq   INTEGER PRIMARY KEY AUTOINCREMENT,
	topic TEXT NOT NULL,
	at    INTEGER NOT NULL,
	data  TEXT NOT NULL
);
CREATE INDEX notices_topic_seq ON notices(topic, seq);
CREATE TABLE notice_imports (
	source  TEXT PRIMARY KEY,
	at      INTEGER NOT NULL,
	notices INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE span_marks (
	name TEXT PRIMARY KEY,
	at   INTEGER NOT NULL
) WITHOUT ROWID;
`,
	// v16: where a usage event came from (graph.OriginObserved, a run
	// Toolsmith made; graph.OriginReported, a caller's report; '' for the
	// events written before), and whether an observed run already backs a
	// report (graph.RunClaims). The index serves the claims: a user's
	// observed runs of one tool, by time.
	`
ALTER TABLE usage_events ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE usage_events ADD COLUMN claimed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX usage_events_observed ON usage_events(user_id, tool_id, at) WHERE origin = 'observed';
`,
	// v17: who taught each learned pairing (graph.PairEvidence): one row per
	// pair and caller's session that gave evidence of it, so that a pair
	// counts once per session, and the number of distinct callers per pair,
	// which graph.PairQuorum reads. The pairs learned before have no
	// known callers (0) and are not shown until callers teach them again.
	`
CREATE TABLE learned_pair_sessions (
	a       TEXT NOT NULL,
	b       TEXT NOT NULL,
	caller  TEXT NOT NULL,
	session TEXT NOT NULL,
	at      INTEGER NOT NULL,
	PRIMARY KEY (a, b, caller, session)
) WITHOUT ROWID;
ALTER TABLE learned_pairs ADD COLUMN callers INTEGER NOT NULL DEFAULT 0;
`,
}

// schemaVersion is the version a fully migrated store has.
var schemaVersion = len(migrations)

// migrate brings the schema to schemaVersion, one transaction per step.
func migrate(ctx context.Context, db *sql.DB) error {
	// A fresh file is in rollback-journal mode until one connection turns
	// it to WAL; there, processes creating the table at once can meet
	// SQLite's deadlock rule, which answers SQLITE_BUSY at once instead of
	// waiting for the busy timeout. Such a refusal is tried again.
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`)
		if err == nil {
			break
		}
		if !isBusy(err) || wait >= time.Second {
			return fmt.Errorf("sqlite: create schema_version: %w", err)
		}
		time.Sleep(wait)
	}
	v, err := currentVersion(ctx, db)
	if err != nil {
		return err
	}
	if v > schemaVersion {
		return fmt.Errorf("sqlite: schema version %d is newer than this binary (%d)", v, schemaVersion)
	}
	for ; v < schemaVersion; v++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlite: migrate to v%d: %w", v+1, err)
		}
		// Another process opening the same file at the same time (API
		// replicas and workers starting together) may have applied this
		// step while this one waited for the writer lock.
		var done int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&done); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("sqlite: migrate to v%d: %w", v+1, err)
		}
		if done > v {
			_ = tx.Rollback()
			v = done - 1
			continue
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("sqlite: migrate to v%d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("sqlite: migrate to v%d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version(version) VALUES (?)`, v+1); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("sqlite: migrate to v%d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: migrate to v%d: %w", v+1, err)
		}
	}
	return nil
}

// currentVersion reads the schema version; 0 for a fresh file.
func currentVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	switch {
	case err == sql.ErrNoRows:
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("sqlite: read schema version: %w", err)
	}
	return v, nil
}
