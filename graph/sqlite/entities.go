package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Entities lists the entity vocabulary ordered by key.
func (s *Store) Entities(ctx context.Context) ([]graph.Entity, error) {
	return s.queryEntities(ctx, `SELECT key, name, type FROM entities ORDER BY key`)
}

// FindEntities returns entities whose name or an alias equals one of names,
// case-insensitively.
func (s *Store) FindEntities(ctx context.Context, names []string) ([]graph.Entity, error) {
	keys := graph.EntityKeys(names)
	if len(keys) == 0 {
		return []graph.Entity{}, nil
	}
	js, err := json.Marshal(keys)
	if err != nil {
		return nil, fmt.Errorf("sqlite: find entities: %w", err)
	}
	return s.queryEntities(ctx, `SELECT key, name, type FROM entities
		WHERE key IN (SELECT value FROM json_each(?1))
		   OR key IN (SELECT entity_key FROM entity_aliases WHERE alias_key IN (SELECT value FROM json_each(?1)))
		ORDER BY key`, string(js))
}

func (s *Store) queryEntities(ctx context.Context, q string, args ...any) ([]graph.Entity, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: entities: %w", err)
	}
	out := []graph.Entity{}
	idx := map[string]int{}
	for rows.Next() {
		var e graph.Entity
		if err := rows.Scan(&e.Key, &e.Name, &e.Type); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: entities: %w", err)
		}
		idx[e.Key] = len(out)
		out = append(out, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: entities: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	keys := make([]string, 0, len(out))
	for _, e := range out {
		keys = append(keys, e.Key)
	}
	js, _ := json.Marshal(keys)
	arows, err := s.db.QueryContext(ctx, `SELECT entity_key, alias FROM entity_aliases
		WHERE entity_key IN (SELECT value FROM json_each(?)) ORDER BY entity_key, alias_key`, string(js))
	if err != nil {
		return nil, fmt.Errorf("sqlite: entity aliases: %w", err)
	}
	defer arows.Close()
	for arows.Next() {
		var k, a string
		if err := arows.Scan(&k, &a); err != nil {
			return nil, fmt.Errorf("sqlite: entity aliases: %w", err)
		}
		if i, ok := idx[k]; ok {
			out[i].Aliases = append(out[i].Aliases, a)
		}
	}
	if err := arows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: entity aliases: %w", err)
	}
	return out, nil
}

// ToolsNearEntities walks IS_A edges (both directions) from the given entity
// keys with a recursive CTE, then ABOUT edges to tools. A tool ABOUT a start
// entity has depth 1; each IS_A hop adds one. maxDepth < 1 is treated as 1.
func (s *Store) ToolsNearEntities(ctx context.Context, keys []string, maxDepth int, f graph.Filter) ([]graph.EntityHit, error) {
	if maxDepth < 1 {
		maxDepth = 1
	}
	norm := make([]string, 0, len(keys))
	for _, k := range keys {
		if k = graph.EntityKey(k); k != "" {
			norm = append(norm, k)
		}
	}
	if len(norm) == 0 {
		return []graph.EntityHit{}, nil
	}
	js, _ := json.Marshal(norm)
	where, args := filterSQL(f, "t")
	q := nearEntitiesSQL(where)
	rows, err := s.db.QueryContext(ctx, q, append([]any{string(js), maxDepth}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tools near entities: %w", err)
	}
	defer rows.Close()
	m := newMatcher(f)
	out := []graph.EntityHit{}
	for rows.Next() {
		var h graph.EntityHit
		var sj string
		if err := rows.Scan(&h.ToolID, &h.EntityKey, &h.Depth, &sj); err != nil {
			return nil, fmt.Errorf("sqlite: tools near entities: %w", err)
		}
		if f.Allow != nil {
			var sum graph.ToolSummary
			if err := json.Unmarshal([]byte(sj), &sum); err != nil {
				return nil, fmt.Errorf("sqlite: tools near entities: decode: %w", err)
			}
			if !m.allow(&sum) {
				continue
			}
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: tools near entities: %w", err)
	}
	return out, nil
}

// graphEdgesCTE unifies every edge table into (fl, fk, typ, tl, tk) rows with
// the edge's real direction; tool-to-tool edges to unregistered targets are
// left out.
const graphEdgesCTE = `
	edges(fl, fk, typ, tl, tk) AS (
		SELECT 'Tool', tool_id, type, label, key FROM tool_edges WHERE type <> 'OFFERS'
		UNION ALL
		SELECT 'Module', key, 'OFFERS', 'Tool', tool_id FROM tool_edges WHERE type = 'OFFERS'
		UNION ALL
		SELECT 'Tool', r.from_id, r.kind, 'Tool', r.to_id FROM relations r WHERE EXISTS (SELECT 1 FROM tools t WHERE t.id = r.to_id)
		UNION ALL
		SELECT 'Entity', entity_key, 'IS_A', 'Entity', type_key FROM is_a
	)`

// Neighbourhood returns the nodes within depth hops of a tool (edges taken in
// either direction) and the edges that join a node at distance < depth to
// another node of the result. depth < 0 is treated as 0.
func (s *Store) Neighbourhood(ctx context.Context, toolID string, depth int) (graph.Subgraph, error) {
	if depth < 0 {
		depth = 0
	}
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM tools WHERE id = ?`, toolID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return graph.Subgraph{}, fmt.Errorf("sqlite: neighbourhood %q: %w", toolID, fault.ErrNotFound)
	}
	if err != nil {
		return graph.Subgraph{}, fmt.Errorf("sqlite: neighbourhood %q: %w", toolID, err)
	}
	q := `WITH RECURSIVE ` + graphEdgesCTE + `,
		reach(l, k, d) AS (
			SELECT 'Tool', ?, 0
			UNION
			SELECT e.tl, e.tk, r.d + 1 FROM reach r JOIN edges e ON e.fl = r.l AND e.fk = r.k WHERE r.d < ?
			UNION
			SELECT e.fl, e.fk, r.d + 1 FROM reach r JOIN edges e ON e.tl = r.l AND e.tk = r.k WHERE r.d < ?
		),
		near(l, k, d) AS (SELECT l, k, min(d) FROM reach GROUP BY l, k)
		SELECT 'N', l, k, d, '', '', '' FROM near
		UNION ALL
		SELECT DISTINCT 'E', e.fl, e.fk, 0, e.typ, e.tl, e.tk FROM edges e
		JOIN near a ON a.l = e.fl AND a.k = e.fk
		JOIN near b ON b.l = e.tl AND b.k = e.tk
		WHERE a.d < ? OR b.d < ?`
	rows, err := s.db.QueryContext(ctx, q, toolID, depth, depth, depth, depth)
	if err != nil {
		return graph.Subgraph{}, fmt.Errorf("sqlite: neighbourhood %q: %w", toolID, err)
	}
	defer rows.Close()
	sg := graph.Subgraph{Nodes: []graph.Node{}, Edges: []graph.Edge{}}
	for rows.Next() {
		var kind, fl, fk, typ, tl, tk string
		var d int
		if err := rows.Scan(&kind, &fl, &fk, &d, &typ, &tl, &tk); err != nil {
			return graph.Subgraph{}, fmt.Errorf("sqlite: neighbourhood %q: %w", toolID, err)
		}
		if kind == "N" {
			sg.Nodes = append(sg.Nodes, graph.Node{Label: fl, Key: fk})
		} else {
			sg.Edges = append(sg.Edges, graph.Edge{From: graph.Node{Label: fl, Key: fk}, Type: typ, To: graph.Node{Label: tl, Key: tk}})
		}
	}
	if err := rows.Err(); err != nil {
		return graph.Subgraph{}, fmt.Errorf("sqlite: neighbourhood %q: %w", toolID, err)
	}
	graph.SortSubgraph(sg)
	return sg, nil
}

// nearEntitiesSQL finds the tools ABOUT the entities within the depth
// (arguments: the keys as a JSON array and the depth), nearest first, that
// pass where (on tools t). CROSS JOIN keeps the entities the outer loop
// (plan_test.go checks).
func nearEntitiesSQL(where string) string {
	return `WITH RECURSIVE
		adj(a, b) AS (
			SELECT entity_key, type_key FROM is_a
			UNION ALL
			SELECT type_key, entity_key FROM is_a
		),
		reach(key, hops) AS (
			SELECT value, 0 FROM json_each(?)
			UNION
			SELECT adj.b, reach.hops + 1 FROM reach JOIN adj ON adj.a = reach.key
			WHERE reach.hops + 1 < ?
		),
		best(key, hops) AS (SELECT key, min(hops) FROM reach GROUP BY key),
		hits AS (
			SELECT te.tool_id AS tool_id, best.key AS key, best.hops + 1 AS depth,
			       row_number() OVER (PARTITION BY te.tool_id ORDER BY best.hops, best.key) AS rn
			FROM best
			CROSS JOIN tool_edges te ON te.label = 'Entity' AND te.type = 'ABOUT' AND te.key = best.key
			CROSS JOIN tools t ON t.id = te.tool_id
			WHERE ` + where + `
		)
		SELECT hits.tool_id, hits.key, hits.depth, t.summary FROM hits JOIN tools t ON t.id = hits.tool_id
		WHERE rn = 1 ORDER BY depth, tool_id`
}
