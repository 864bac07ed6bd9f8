// Package graphtest holds the backend-neutral contract suite of graph.Store.
// Every store runs it from its own tests:
//
//	func TestContract(t *testing.T) {
//		graphtest.Run(t, func(t *testing.T) graph.Store { return openFresh(t) })
//	}
//
// The suite only talks to the graph.Store interface (no SQL, no Cypher), so
// a rule it checks holds for every backend.
package graphtest
