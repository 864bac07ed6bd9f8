package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
)

// TestNeighbourQueriesStartFromTheirEdges checks the query plans of the
// per-hit lookups (related, learned pairs, entities) and of the full-text
// join: each must start from its edges or matches and look tools up by id.
// A plan that walks the tools table by status costs a scan of the whole
// catalogue per call (at 10,000 tools that was a third of a search's CPU).
func TestNeighbourQueriesStartFromTheirEdges(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	filters := map[string]graph.Filter{
		"no filter":  {},
		"categories": {Categories: []string{"finance"}},
		"modules":    {Modules: []string{"demo"}},
	}
	for fname, f := range filters {
		where, args := filterSQL(f, "t")
		type query struct {
			sql  string
			args []any
		}
		related := func(kind graph.RelKind) query {
			sql, args := relatedSQL("a", kind, where)
			return query{sql, args}
		}
		queries := map[string]query{
			"learned pairs":        {learnedPairsSQL(where), []any{"a", graph.PairQuorum, "a", graph.PairQuorum}},
			"related depends_on":   related(graph.RelDependsOn),
			"related alternatives": related(graph.RelAlternative),
			"text search":          {textSearchSQL(where), []any{"currency", 20}},
			"entities":             {nearEntitiesSQL(where), []any{`["currency"]`, 3}},
		}
		for qname, q := range queries {
			rows, err := s.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q.sql, append(q.args, args...)...)
			if err != nil {
				t.Fatalf("%s, %s: %v", qname, fname, err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			for _, step := range plan {
				scansTools := step == "SCAN t" || strings.HasPrefix(step, "SCAN t ") ||
					(strings.HasPrefix(step, "SEARCH t ") && !strings.Contains(step, "id=?") && !strings.Contains(step, "rowid=?"))
				if scansTools {
					t.Errorf("%s, %s: the plan walks the tools table (%q):\n  %s", qname, fname, step, strings.Join(plan, "\n  "))
				}
			}
		}
	}
}
