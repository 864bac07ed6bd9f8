package graph_test

import (
	"testing"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/graphtest"
)

func TestMemoryRateCounts(t *testing.T) {
	graphtest.RateCountsContract(t, &graph.MemoryRateCounts{})
}
