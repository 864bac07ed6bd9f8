package evaluation

import (
	"fmt"
	"slices"
	"testing"
)

// ColdTools leaves the cold tools without history, keeps every other
// tool's, and scores only queries all of whose tools are cold.
func TestColdTools(t *testing.T) {
	var ids []string
	for i := range 200 {
		ids = append(ids, fmt.Sprintf("tool%d", i))
	}
	var cold, warm []string
	for _, id := range ids {
		if isCold(id, 0.125) {
			cold = append(cold, id)
		} else {
			warm = append(warm, id)
		}
	}
	if n := len(cold); n < 10 || n > 45 {
		t.Fatalf("%d of 200 tools cold at share 1/8", n)
	}
	history := []QueryRecord{
		{Query: "a", RelevantToolIDs: []string{cold[0]}},
		{Query: "b", RelevantToolIDs: []string{warm[0]}},
		{Query: "c", RelevantToolIDs: []string{cold[1], warm[1]}},
	}
	queries := []QueryRecord{
		{Query: "d", RelevantToolIDs: []string{cold[2]}},
		{Query: "e", RelevantToolIDs: []string{warm[2]}},
		{Query: "f", RelevantToolIDs: []string{cold[3], warm[3]}},
		{Query: "g", RelevantToolIDs: []string{cold[4], cold[5]}},
	}
	hist, qs := ColdTools(history, queries, 0.125)
	if len(hist) != 2 || hist[0].Query != "b" || hist[1].Query != "c" || !slices.Equal(hist[1].RelevantToolIDs, []string{warm[1]}) {
		t.Fatalf("history %+v; want b, and c without its cold tool", hist)
	}
	if len(qs) != 2 || qs[0].Query != "d" || qs[1].Query != "g" {
		t.Fatalf("queries %+v; want d and g (all their tools cold)", qs)
	}
	if isCold(cold[0], 0) {
		t.Fatal("share 0 made a tool cold")
	}
}
