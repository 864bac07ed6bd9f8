package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// prepared is a tool validated and encoded outside the transaction.
type prepared struct {
	t       graph.Tool
	summary graph.ToolSummary
	vec     []float32 // normalised copy for the memory index
	text    docText   // the full-text row written, for the text index
}

// prepare validates t and fills its defaults.
func (s *Store) prepare(t graph.Tool) (prepared, error) {
	if strings.TrimSpace(t.ID) == "" {
		return prepared{}, fmt.Errorf("sqlite: upsert: empty tool id: %w", fault.ErrInvalid)
	}
	if t.Status == "" {
		t.Status = graph.StatusActive
	}
	if !graph.ValidStatus(t.Status) {
		return prepared{}, fmt.Errorf("sqlite: upsert %q: status %q: %w", t.ID, t.Status, fault.ErrInvalid)
	}
	for _, r := range t.Relations {
		switch r.Kind {
		case graph.RelDependsOn, graph.RelAlternative, graph.RelPairsWith:
		default:
			return prepared{}, fmt.Errorf("sqlite: upsert %q: relation kind %q: %w", t.ID, r.Kind, fault.ErrInvalid)
		}
		if r.Target == "" {
			return prepared{}, fmt.Errorf("sqlite: upsert %q: relation %s without target: %w", t.ID, r.Kind, fault.ErrInvalid)
		}
	}
	for _, e := range t.Entities {
		if strings.TrimSpace(e.Name) == "" {
			return prepared{}, fmt.Errorf("sqlite: upsert %q: entity without name: %w", t.ID, fault.ErrInvalid)
		}
	}
	if len(t.Manifest) > 0 && !json.Valid(t.Manifest) {
		return prepared{}, fmt.Errorf("sqlite: upsert %q: manifest is not valid JSON: %w", t.ID, fault.ErrInvalid)
	}
	var vec []float32
	if t.Embedding != nil {
		if err := s.checkDim(fmt.Sprintf("upsert %q", t.ID), t.Embedding); err != nil {
			return prepared{}, err
		}
		vec = graph.Normalize(t.Embedding)
	}
	return prepared{t: t, vec: vec}, nil
}

// UpsertTool writes t and everything hanging off it in one transaction.
func (s *Store) UpsertTool(ctx context.Context, t graph.Tool) (graph.UpsertResult, error) {
	res, err := s.UpsertTools(ctx, []graph.Tool{t})
	if err != nil {
		return graph.UpsertResult{}, err
	}
	return res[0], nil
}

// UpsertTools writes several tools in a single transaction: all or none. It
// is the batch form of UpsertTool (much faster for bulk loads, since SQLite
// pays one fsync per commit). A tool id may appear only once per batch.
func (s *Store) UpsertTools(ctx context.Context, tools []graph.Tool) ([]graph.UpsertResult, error) {
	if err := s.writable("upsert"); err != nil {
		return nil, err
	}
	preps := make([]prepared, len(tools))
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		p, err := s.prepare(t)
		if err != nil {
			return nil, err
		}
		if seen[p.t.ID] {
			return nil, fmt.Errorf("sqlite: upsert %q: duplicate id in batch: %w", p.t.ID, fault.ErrInvalid)
		}
		seen[p.t.ID] = true
		preps[i] = p
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: upsert: begin: %w", err)
	}
	defer tx.Rollback()
	now := s.now().UTC()
	results := make([]graph.UpsertResult, len(preps))
	for i := range preps {
		r, err := upsertTx(ctx, tx, &preps[i], graph.Nanos(now))
		if err != nil {
			return nil, err
		}
		results[i] = r
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: upsert: commit: %w", err)
	}
	// Only now, with the data durable, does search see the new versions.
	docs := make([]docText, len(preps))
	for i, p := range preps {
		s.mem.put(p.summary, p.vec)
		docs[i] = p.text
	}
	s.text.put(ctx, docs)
	s.resetDocFreq()
	return results, nil
}

// upsertTx performs the writes of one tool inside tx and fills p.summary.
func upsertTx(ctx context.Context, tx *sql.Tx, p *prepared, now int64) (graph.UpsertResult, error) {
	t := &p.t
	wrap := func(step string, err error) error { return fmt.Errorf("sqlite: upsert %q: %s: %w", t.ID, step, err) }

	var seq, rev, created int64
	err := tx.QueryRowContext(ctx, `SELECT seq, revision, created_at FROM tools WHERE id = ?`, t.ID).Scan(&seq, &rev, &created)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return graph.UpsertResult{}, wrap("read", err)
	}
	if !exists {
		created = now
	}
	rev++
	t.CreatedAt = graph.FromNanos(created)
	t.UpdatedAt = graph.FromNanos(now)
	p.summary = graph.CloneSummary(t.ToolSummary)

	sumJSON, err := json.Marshal(p.summary)
	if err != nil {
		return graph.UpsertResult{}, wrap("encode summary", err)
	}
	rec := *t
	rec.Embedding = nil
	recJSON, err := json.Marshal(rec)
	if err != nil {
		return graph.UpsertResult{}, wrap("encode record", fmt.Errorf("%v: %w", err, fault.ErrInvalid))
	}
	var blob []byte
	if t.Embedding != nil {
		blob = encodeVec(t.Embedding)
	}
	change, err := nextChange(ctx, tx)
	if err != nil {
		return graph.UpsertResult{}, wrap("change order", err)
	}
	if exists {
		_, err = tx.ExecContext(ctx, `UPDATE tools SET verb=?, category=?, module=?, status=?, revision=?, summary=?, record=?, embedding=?, updated_at=?, change_seq=? WHERE seq=?`,
			t.Verb, t.Category, t.Module, t.Status, rev, string(sumJSON), string(recJSON), blob, now, change, seq)
		if err != nil {
			return graph.UpsertResult{}, wrap("update", err)
		}
		for _, q := range []string{
			`DELETE FROM tool_edges WHERE tool_id = ?`,
			`DELETE FROM relations WHERE from_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, t.ID); err != nil {
				return graph.UpsertResult{}, wrap("clear edges", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM tools_fts WHERE rowid = ?`, seq); err != nil {
			return graph.UpsertResult{}, wrap("clear full-text", err)
		}
	} else {
		r, err := tx.ExecContext(ctx, `INSERT INTO tools(id, verb, category, module, status, revision, summary, record, embedding, created_at, updated_at, change_seq)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
			t.ID, t.Verb, t.Category, t.Module, t.Status, rev, string(sumJSON), string(recJSON), blob, created, now, change)
		if err != nil {
			return graph.UpsertResult{}, wrap("insert", err)
		}
		if seq, err = r.LastInsertId(); err != nil {
			return graph.UpsertResult{}, wrap("insert", err)
		}
	}

	// Node edges.
	type nodeEdge struct{ typ, label, key string }
	var edges []nodeEdge
	if t.Verb != "" {
		edges = append(edges, nodeEdge{"PROVIDES", "Verb", t.Verb})
	}
	if t.Category != "" {
		edges = append(edges, nodeEdge{"IN", "Category", t.Category})
	}
	for _, x := range t.Tags {
		if x != "" {
			edges = append(edges, nodeEdge{"TAGGED", "Tag", x})
		}
	}
	for _, x := range t.Groups {
		if x != "" {
			edges = append(edges, nodeEdge{"MEMBER_OF", "Group", x})
		}
	}
	if t.Module != "" {
		edges = append(edges, nodeEdge{"OFFERS", "Module", t.Module})
	}
	for _, e := range edges {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO nodes(label, key) VALUES (?, ?)`, e.label, e.key); err != nil {
			return graph.UpsertResult{}, wrap("node", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO tool_edges(tool_id, type, label, key) VALUES (?,?,?,?)`, t.ID, e.typ, e.label, e.key); err != nil {
			return graph.UpsertResult{}, wrap("edge", err)
		}
	}

	// Entities: (Tool)-[:ABOUT]->(Entity), (Entity)-[:IS_A]->(Type entity).
	entityNames := make([]string, 0, len(t.Entities))
	for _, e := range t.Entities {
		key := graph.EntityKey(e.Name)
		typeKey := graph.EntityKey(e.Type)
		if _, err := tx.ExecContext(ctx, `INSERT INTO entities(key, name, type) VALUES (?,?,?)
			ON CONFLICT(key) DO UPDATE SET type = CASE WHEN excluded.type <> '' THEN excluded.type ELSE entities.type END`,
			key, strings.TrimSpace(e.Name), strings.TrimSpace(e.Type)); err != nil {
			return graph.UpsertResult{}, wrap("entity", err)
		}
		if typeKey != "" {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO entities(key, name, type) VALUES (?,?, '')`, typeKey, strings.TrimSpace(e.Type)); err != nil {
				return graph.UpsertResult{}, wrap("entity type", err)
			}
			if typeKey != key {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO is_a(entity_key, type_key) VALUES (?,?)`, key, typeKey); err != nil {
					return graph.UpsertResult{}, wrap("is_a", err)
				}
			}
		}
		for _, a := range e.Aliases {
			if ak := graph.EntityKey(a); ak != "" {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO entity_aliases(alias_key, entity_key, alias) VALUES (?,?,?)`, ak, key, strings.TrimSpace(a)); err != nil {
					return graph.UpsertResult{}, wrap("alias", err)
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO tool_edges(tool_id, type, label, key) VALUES (?,'ABOUT','Entity',?)`, t.ID, key); err != nil {
			return graph.UpsertResult{}, wrap("about", err)
		}
		entityNames = append(entityNames, e.Name)
		entityNames = append(entityNames, e.Aliases...)
	}

	// Tool-to-tool relations.
	for _, r := range t.Relations {
		if _, err := tx.ExecContext(ctx, `INSERT INTO relations(from_id, kind, to_id, score, sequence) VALUES (?,?,?,?,?)
			ON CONFLICT(from_id, kind, to_id) DO UPDATE SET score = excluded.score, sequence = excluded.sequence`,
			t.ID, string(r.Kind), r.Target, r.Score, r.Sequence); err != nil {
			return graph.UpsertResult{}, wrap("relation", err)
		}
	}

	// Full-text row.
	p.text = docText{rowid: seq, id: t.ID, cols: [len(ftsColumns)]string{
		t.Name, graph.VerbText(t.Verb), t.ShortDescription + "\n" + t.Description,
		strings.TrimSpace(strings.Join(t.Tags, " ") + " " + t.ParamsText), strings.Join(t.UseCases, "\n"), strings.Join(entityNames, "\n"),
	}}
	if _, err := tx.ExecContext(ctx, `INSERT INTO tools_fts(rowid, name, verb, description, tags, use_cases, entities) VALUES (?,?,?,?,?,?,?)`,
		seq, p.text.cols[0], p.text.cols[1], p.text.cols[2], p.text.cols[3], p.text.cols[4], p.text.cols[5]); err != nil {
		return graph.UpsertResult{}, wrap("full-text", err)
	}

	// History.
	if _, err := tx.ExecContext(ctx, `INSERT INTO revisions(tool_id, revision, status, reason, manifest, at) VALUES (?,?,?,?,?,?)`,
		t.ID, rev, t.Status, "", nullJSON(t.Manifest), now); err != nil {
		return graph.UpsertResult{}, wrap("revision", err)
	}
	return graph.UpsertResult{Created: !exists, Revision: int(rev)}, nil
}

func nullJSON(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return string(m)
}

// GetTool returns the full record of a tool, whatever its status.
func (s *Store) GetTool(ctx context.Context, id string) (graph.Tool, error) {
	var rec string
	var blob []byte
	err := s.db.QueryRowContext(ctx, `SELECT record, embedding FROM tools WHERE id = ?`, id).Scan(&rec, &blob)
	if errors.Is(err, sql.ErrNoRows) {
		return graph.Tool{}, fmt.Errorf("sqlite: get tool %q: %w", id, fault.ErrNotFound)
	}
	if err != nil {
		return graph.Tool{}, fmt.Errorf("sqlite: get tool %q: %w", id, err)
	}
	var t graph.Tool
	if err := json.Unmarshal([]byte(rec), &t); err != nil {
		return graph.Tool{}, fmt.Errorf("sqlite: get tool %q: decode: %w", id, err)
	}
	if blob != nil {
		t.Embedding = decodeVec(blob)
	}
	if string(t.Manifest) == "null" {
		t.Manifest = nil
	}
	return t, nil
}

// ListTools pages through summaries ordered by id.
func (s *Store) ListTools(_ context.Context, q graph.ListQuery) (graph.ToolPage, error) {
	limit := graph.Limit(q.Limit, graph.DefaultListLimit, graph.MaxListLimit)
	if n := len(q.Filter.IDs); n > 0 && n <= maxMemoryList {
		return s.listFromMemory(q, limit), nil
	}
	// The memory index holds every committed summary (another process's
	// within the follow bound, as for search): a page from it costs no
	// SQL count and no JSON decoding, which at 100,000 tools made the
	// first listing of the catalogue after a start take seconds.
	return s.mem.list(q.After, limit, newMatcher(q.Filter)), nil
}

// SetStatus changes a tool's status and appends a revision with the reason.
func (s *Store) SetStatus(ctx context.Context, id, status, reason string) error {
	if err := s.writable("set status"); err != nil {
		return err
	}
	if !graph.ValidStatus(status) {
		return fmt.Errorf("sqlite: set status %q: status %q: %w", id, status, fault.ErrInvalid)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: set status %q: %w", id, err)
	}
	defer tx.Rollback()
	var rev int64
	var sj, rec string
	err = tx.QueryRowContext(ctx, `SELECT revision, summary, record FROM tools WHERE id = ?`, id).Scan(&rev, &sj, &rec)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: set status %q: %w", id, fault.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("sqlite: set status %q: %w", id, err)
	}
	var t graph.Tool
	if err := json.Unmarshal([]byte(rec), &t); err != nil {
		return fmt.Errorf("sqlite: set status %q: decode: %w", id, err)
	}
	now := s.now().UTC()
	rev++
	t.Status = status
	t.UpdatedAt = graph.FromNanos(graph.Nanos(now))
	sum := graph.CloneSummary(t.ToolSummary)
	sumJSON, err := json.Marshal(sum)
	if err != nil {
		return fmt.Errorf("sqlite: set status %q: %w", id, err)
	}
	recJSON, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("sqlite: set status %q: %w", id, err)
	}
	change, err := nextChange(ctx, tx)
	if err != nil {
		return fmt.Errorf("sqlite: set status %q: change order: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tools SET status=?, revision=?, summary=?, record=?, updated_at=?, change_seq=? WHERE id=?`,
		status, rev, string(sumJSON), string(recJSON), graph.Nanos(now), change, id); err != nil {
		return fmt.Errorf("sqlite: set status %q: %w", id, err)
	}
	manifest := t.Manifest
	if string(manifest) == "null" {
		manifest = nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO revisions(tool_id, revision, status, reason, manifest, at) VALUES (?,?,?,?,?,?)`,
		id, rev, status, reason, nullJSON(manifest), graph.Nanos(now)); err != nil {
		return fmt.Errorf("sqlite: set status %q: revision: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: set status %q: commit: %w", id, err)
	}
	s.mem.setStatus(sum)
	return nil
}

// maxMemoryList is the largest id list ListTools answers from the memory
// index (which holds every committed summary) instead of SQL: retrieval
// lists a session's or a vote's tools by id on every search.
const maxMemoryList = 1000

// listFromMemory is ListTools for a filter naming its ids.
func (s *Store) listFromMemory(q graph.ListQuery, limit int) graph.ToolPage {
	ids := slices.Clone(q.Filter.IDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	m := newMatcher(q.Filter)
	page := graph.ToolPage{Items: make([]graph.ToolSummary, 0, min(limit, len(ids)))}
	var tmp graph.ToolSummary // Allow's copy
	for _, id := range ids {
		sum, ok := s.mem.summary(id)
		if !ok || !m.pushed(&sum) {
			continue
		}
		page.Total++
		if id <= q.After || !m.allowOn(&tmp, &sum) {
			continue
		}
		if len(page.Items) == limit {
			page.Next = page.Items[len(page.Items)-1].ID
			continue
		}
		page.Items = append(page.Items, graph.CloneSummary(sum))
	}
	return page
}

// History returns a tool's revisions, oldest first.
func (s *Store) History(ctx context.Context, id string) ([]graph.Revision, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT revision, status, reason, manifest, at FROM revisions WHERE tool_id = ? ORDER BY revision`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: history %q: %w", id, err)
	}
	defer rows.Close()
	var out []graph.Revision
	for rows.Next() {
		var r graph.Revision
		var manifest sql.NullString
		var at int64
		if err := rows.Scan(&r.Revision, &r.Status, &r.Reason, &manifest, &at); err != nil {
			return nil, fmt.Errorf("sqlite: history %q: %w", id, err)
		}
		if manifest.Valid {
			r.Manifest = json.RawMessage(manifest.String)
		}
		r.At = graph.FromNanos(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: history %q: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sqlite: history %q: %w", id, fault.ErrNotFound)
	}
	return out, nil
}

// Stats counts nodes, edges and usage events.
func (s *Store) Stats(ctx context.Context) (graph.Stats, error) {
	st := graph.Stats{ByStatus: map[string]int{}}
	rows, err := s.db.QueryContext(ctx, `SELECT status, count(*) FROM tools GROUP BY status`)
	if err != nil {
		return graph.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return graph.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
		}
		st.ByStatus[status] = n
		st.Tools += n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return graph.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	// Verb, category, tag and group counts are of nodes some tool points to.
	err = s.db.QueryRowContext(ctx, `SELECT
		(SELECT count(DISTINCT key) FROM tool_edges WHERE label='Verb'),
		(SELECT count(*) FROM entities),
		(SELECT count(DISTINCT key) FROM tool_edges WHERE label='Category'),
		(SELECT count(DISTINCT key) FROM tool_edges WHERE label='Tag'),
		(SELECT count(DISTINCT key) FROM tool_edges WHERE label='Group'),
		(SELECT count(*) FROM tool_edges) + (SELECT count(*) FROM is_a) +
		(SELECT count(*) FROM relations r WHERE EXISTS (SELECT 1 FROM tools t WHERE t.id = r.to_id)),
		(SELECT count(*) FROM usage_events)`).
		Scan(&st.Verbs, &st.Entities, &st.Categories, &st.Tags, &st.Groups, &st.Edges, &st.UsageEvents)
	if err != nil {
		return graph.Stats{}, fmt.Errorf("sqlite: stats: %w", err)
	}
	if info, err := s.Embedder(ctx); err == nil {
		st.Embedder = info
	}
	return st, nil
}

// ManifestRunes returns every tool's manifest size in runes, read from the
// record in one statement. The record is always written as a Go string,
// so stored as TEXT, with the manifest as the JSON encoder wrote it
// (compact); SQLite returns an object or array as compact text keeping
// its strings' escapes as they are, so length(), which counts characters
// of TEXT, is the rune count of GetTool's Manifest. (The revisions'
// manifest column holds the text as registered, uncompacted: not the
// same size.) A null manifest (GetTool's nil) counts 0.
func (s *Store) ManifestRunes(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, coalesce(length(nullif(record -> '$.manifest', 'null')), 0) FROM tools`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: manifest runes: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("sqlite: manifest runes: %w", err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: manifest runes: %w", err)
	}
	return out, nil
}
