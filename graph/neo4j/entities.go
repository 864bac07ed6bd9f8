package neo4j

import (
	"context"
	"fmt"
	"sort"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Entities lists the entity vocabulary ordered by key.
func (s *Store) Entities(ctx context.Context) ([]graph.Entity, error) {
	out, err := s.queryEntities(ctx, cypherEntities, nil)
	if err != nil {
		return nil, wrapErr("entities", err)
	}
	return out, nil
}

// FindEntities returns the entities whose name or an alias equals one of
// names, case-insensitively.
func (s *Store) FindEntities(ctx context.Context, names []string) ([]graph.Entity, error) {
	keys := graph.EntityKeys(names)
	if len(keys) == 0 {
		return []graph.Entity{}, nil
	}
	out, err := s.queryEntities(ctx, cypherFindEntities, map[string]any{"keys": keys})
	if err != nil {
		return nil, wrapErr("find entities", err)
	}
	return out, nil
}

func (s *Store) queryEntities(ctx context.Context, cypher string, params map[string]any) ([]graph.Entity, error) {
	var out []graph.Entity
	err := s.r.read(ctx, func(tx txRunner) error {
		out = []graph.Entity{}
		recs, err := tx.run(ctx, cypher, params)
		if err != nil {
			return err
		}
		for _, r := range recs {
			var e graph.Entity
			if e.Key, err = getString(r, "key"); err != nil {
				return err
			}
			if e.Name, err = getString(r, "name"); err != nil {
				return err
			}
			if e.Type, err = getString(r, "type"); err != nil {
				return err
			}
			if e.Aliases, err = getStrings(r, "aliases"); err != nil {
				return err
			}
			// Aliases in alias-key order, nil when none, as SQLite lists them.
			sort.SliceStable(e.Aliases, func(i, j int) bool { return graph.EntityKey(e.Aliases[i]) < graph.EntityKey(e.Aliases[j]) })
			if len(e.Aliases) == 0 {
				e.Aliases = nil
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// ToolsNearEntities walks IS_A edges (both directions) from the given entity
// keys, breadth first and one statement per hop, then ABOUT edges to tools. A
// tool ABOUT a start entity has depth 1; each IS_A hop adds one. maxDepth < 1
// is treated as 1.
func (s *Store) ToolsNearEntities(ctx context.Context, keys []string, maxDepth int, f graph.Filter) ([]graph.EntityHit, error) {
	if maxDepth < 1 {
		maxDepth = 1
	}
	var start []string
	seen := map[string]bool{}
	for _, k := range keys {
		if k = graph.EntityKey(k); k != "" && !seen[k] {
			seen[k] = true
			start = append(start, k)
		}
	}
	if len(start) == 0 {
		return []graph.EntityHit{}, nil
	}
	sort.Strings(start)
	var out []graph.EntityHit
	err := s.r.read(ctx, func(tx txRunner) error {
		out = []graph.EntityHit{}
		hops := map[string]int{}
		var reached []map[string]any
		for _, k := range start {
			hops[k] = 0
			reached = append(reached, map[string]any{"key": k, "hops": int64(0)})
		}
		frontier := start
		for h := 1; h < maxDepth && len(frontier) > 0; h++ {
			recs, err := tx.run(ctx, cypherEntityStep, map[string]any{"frontier": frontier})
			if err != nil {
				return err
			}
			var next []string
			for _, r := range recs {
				k, err := getString(r, "key")
				if err != nil {
					return err
				}
				if _, ok := hops[k]; ok {
					continue
				}
				hops[k] = h
				next = append(next, k)
				reached = append(reached, map[string]any{"key": k, "hops": int64(h)})
			}
			frontier = next
		}
		recs, err := tx.run(ctx, cypherToolsNearEntities, filterParams(f, map[string]any{"reached": reached}))
		if err != nil {
			return err
		}
		done := map[string]bool{}
		for _, r := range recs {
			id, err := getString(r, "id")
			if err != nil {
				return err
			}
			// Rows come by depth, id, entity key: the first row of a tool
			// is its best one.
			if done[id] {
				continue
			}
			done[id] = true
			if f.Allow != nil {
				_, ok, err := allowedSummary(r, f)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			key, err := getString(r, "entityKey")
			if err != nil {
				return err
			}
			depth, err := getInt(r, "depth")
			if err != nil {
				return err
			}
			out = append(out, graph.EntityHit{ToolID: id, EntityKey: key, Depth: int(depth)})
		}
		return nil
	})
	if err != nil {
		return nil, wrapErr("tools near entities", err)
	}
	return out, nil
}

// nodeLabels are the labels a Subgraph node may have.
var nodeLabels = []string{"Tool", "Verb", "Entity", "Category", "Tag", "Group", "Module"}

// Neighbourhood returns the nodes within depth hops of a tool (edges taken in
// either direction) and the edges that join a node at distance < depth to
// another node of the result. depth < 0 is treated as 0. It walks breadth
// first, one statement per hop, inside one read transaction.
func (s *Store) Neighbourhood(ctx context.Context, toolID string, depth int) (graph.Subgraph, error) {
	if depth < 0 {
		depth = 0
	}
	var sg graph.Subgraph
	err := s.r.read(ctx, func(tx txRunner) error {
		sg = graph.Subgraph{Nodes: []graph.Node{}, Edges: []graph.Edge{}}
		recs, err := tx.run(ctx, cypherNeighbourStart, map[string]any{"id": toolID})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fault.ErrNotFound
		}
		start, err := getString(recs[0], "eid")
		if err != nil {
			return err
		}
		visited := map[string]bool{start: true}
		nodes := map[graph.Node]bool{{Label: "Tool", Key: toolID}: true}
		edges := map[graph.Edge]bool{}
		frontier := []string{start}
		for d := 0; d < depth && len(frontier) > 0; d++ {
			recs, err := tx.run(ctx, cypherNeighbourStep, map[string]any{"frontier": frontier, "labels": nodeLabels})
			if err != nil {
				return err
			}
			var next []string
			for _, r := range recs {
				var vals [5]string
				for i, k := range []string{"eid", "type", "fromLabel", "fromKey", "toLabel"} {
					if vals[i], err = getString(r, k); err != nil {
						return err
					}
				}
				toKey, err := getString(r, "toKey")
				if err != nil {
					return err
				}
				outgoing, err := getBool(r, "outgoing")
				if err != nil {
					return err
				}
				eid, typ := vals[0], vals[1]
				here := graph.Node{Label: vals[2], Key: vals[3]}
				there := graph.Node{Label: vals[4], Key: toKey}
				e := graph.Edge{From: here, Type: typ, To: there}
				if !outgoing {
					e = graph.Edge{From: there, Type: typ, To: here}
				}
				edges[e] = true
				nodes[there] = true
				if !visited[eid] {
					visited[eid] = true
					next = append(next, eid)
				}
			}
			sort.Strings(next)
			frontier = next
		}
		for n := range nodes {
			sg.Nodes = append(sg.Nodes, n)
		}
		for e := range edges {
			sg.Edges = append(sg.Edges, e)
		}
		return nil
	})
	if err != nil {
		return graph.Subgraph{}, wrapErr(fmt.Sprintf("neighbourhood %q", toolID), err)
	}
	graph.SortSubgraph(sg)
	return sg, nil
}
