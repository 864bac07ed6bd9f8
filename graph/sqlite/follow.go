package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
)

// nextChange is the change_seq of a tool write inside tx: one more than
// the largest. Transactions begin IMMEDIATE (one writer at a time, across
// processes), so the order of change_seq is the order of the commits, and a
// reader that has seen change_seq n has seen every write before it.
func nextChange(ctx context.Context, tx *sql.Tx) (int64, error) {
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(change_seq), 0) + 1 FROM tools`).Scan(&n); err != nil {
		return 0, err
	}
	return n, nil
}

// followMarks are how far Refresh has followed the file: the largest
// tools.change_seq and usage_events.id it has applied. The caller holds
// writeMu, or is Open.
type followMarks struct {
	tools, usage int64
}

// readMarks reads the current marks of the file.
func readMarks(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (followMarks, error) {
	var m followMarks
	err := q.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(change_seq), 0) FROM tools), (SELECT COALESCE(MAX(id), 0) FROM usage_events)`).
		Scan(&m.tools, &m.usage)
	return m, err
}

// Refresh applies the tool writes and usage events other processes
// committed to the file since the last Refresh (or Open) to the memory
// index, the text index and the document frequencies, and returns the ids
// of the tools whose record changed. Writes of this Store are applied
// when they commit: their rows are recognised (same updatedAt and status
// as the memory index holds) and neither applied again nor returned.
// When nothing was written, it costs one indexed read.
func (s *Store) Refresh(ctx context.Context) ([]string, error) {
	cur, err := readMarks(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("sqlite: refresh: %w", err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if cur.tools <= s.marks.tools && cur.usage <= s.marks.usage {
		return nil, nil
	}
	// Under writeMu this Store's own writes are all committed and applied,
	// so every row read below is at least as new as the memory index.
	changed, err := s.refreshTools(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.refreshUsage(ctx); err != nil {
		return changed, err
	}
	return changed, nil
}

// refreshTools applies the tool rows written after marks.tools.
func (s *Store) refreshTools(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, change_seq, summary, embedding FROM tools WHERE change_seq > ? ORDER BY change_seq`, s.marks.tools)
	if err != nil {
		return nil, fmt.Errorf("sqlite: refresh tools: %w", err)
	}
	type row struct {
		seq int64
		sum graph.ToolSummary
		vec []float32
	}
	var todo []row
	mark := s.marks.tools
	for rows.Next() {
		var r row
		var change int64
		var sumJSON string
		var blob []byte
		if err := rows.Scan(&r.seq, &change, &sumJSON, &blob); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: refresh tools: %w", err)
		}
		mark = max(mark, change)
		if err := json.Unmarshal([]byte(sumJSON), &r.sum); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: refresh tool: %w", err)
		}
		if have, ok := s.mem.summary(r.sum.ID); ok && have.UpdatedAt.Equal(r.sum.UpdatedAt) && have.Status == r.sum.Status {
			continue // this Store's own write, applied at its commit
		}
		if blob != nil {
			r.vec = graph.Normalize(decodeVec(blob))
		}
		todo = append(todo, r)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return nil, fmt.Errorf("sqlite: refresh tools: %w", err)
	}
	if len(todo) == 0 {
		s.marks.tools = mark
		return nil, nil
	}
	if dim := s.dimension(); dim == 0 {
		// A fresh process whose embedder another process recorded.
		if info, err := s.readEmbedder(ctx); err == nil {
			s.infoMu.Lock()
			s.info = info
			s.infoMu.Unlock()
		}
	}
	rowids := make([]int64, len(todo))
	for i, r := range todo {
		rowids[i] = r.seq
	}
	docs, err := s.readDocs(ctx, rowids)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(todo))
	for i, r := range todo {
		s.mem.put(r.sum, r.vec)
		ids[i] = r.sum.ID
	}
	s.text.put(ctx, docs)
	s.resetDocFreq()
	s.marks.tools = mark
	return ids, nil
}

// readDocs reads the tools_fts rows of the given rowids (tools.seq).
func (s *Store) readDocs(ctx context.Context, rowids []int64) ([]docText, error) {
	js, err := json.Marshal(rowids)
	if err != nil {
		return nil, fmt.Errorf("sqlite: refresh full-text: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT f.rowid, t.id, f.name, f.verb, f.description, f.tags, f.use_cases, f.entities
		FROM tools_fts f JOIN tools t ON t.seq = f.rowid WHERE f.rowid IN (SELECT value FROM json_each(?))`, string(js))
	if err != nil {
		return nil, fmt.Errorf("sqlite: refresh full-text: %w", err)
	}
	defer rows.Close()
	var docs []docText
	for rows.Next() {
		var d docText
		if err := rows.Scan(&d.rowid, &d.id, &d.cols[0], &d.cols[1], &d.cols[2], &d.cols[3], &d.cols[4], &d.cols[5]); err != nil {
			return nil, fmt.Errorf("sqlite: refresh full-text: %w", err)
		}
		docs = append(docs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: refresh full-text: %w", err)
	}
	return docs, nil
}

// refreshUsage reloads the usage evidence of the tools used since
// marks.usage (this Store's own events included: reloading is cheap and
// idempotent).
func (s *Store) refreshUsage(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `SELECT tool_id, MAX(id) FROM usage_events WHERE id > ? GROUP BY tool_id`, s.marks.usage)
	if err != nil {
		return fmt.Errorf("sqlite: refresh usage: %w", err)
	}
	var ids []string
	mark := s.marks.usage
	for rows.Next() {
		var id string
		var last int64
		if err := rows.Scan(&id, &last); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: refresh usage: %w", err)
		}
		ids = append(ids, id)
		mark = max(mark, last)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return fmt.Errorf("sqlite: refresh usage: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	if err := s.loadUsage(ctx, ids); err != nil {
		return fmt.Errorf("sqlite: refresh: %w", err)
	}
	s.marks.usage = mark
	return nil
}

// dimension is the recorded embedding dimension, 0 before EnsureEmbedder.
func (s *Store) dimension() int {
	s.infoMu.RLock()
	defer s.infoMu.RUnlock()
	return s.info.Dimension
}
