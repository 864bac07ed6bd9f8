package evaluation

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/embed/hashing"
)

// TestThresholdRows: each threshold's precision is the share of right
// first tools among the queries at or above it, substituted the share of
// all queries at or above it, and F0.5 weighs that precision twice as much
// as the recall over the right first tools.
func TestThresholdRows(t *testing.T) {
	samples := []thresholdSample{{0.32, false}, {0.42, true}, {0.52, false}, {0.62, true}, {0.72, true}}
	rows := thresholdRows(samples)
	if len(rows) != 13 || math.Abs(rows[0].threshold-0.30) > 1e-9 || math.Abs(rows[12].threshold-0.90) > 1e-9 {
		t.Fatalf("thresholds %v, want .30 to .90 by .05", rows)
	}
	for _, c := range []struct {
		row               int
		prec, sub, recall float64
	}{
		{0, 3.0 / 5, 5.0 / 5, 3.0 / 3}, // .30: every query
		{2, 3.0 / 4, 4.0 / 5, 3.0 / 3}, // .40
		{6, 2.0 / 2, 2.0 / 5, 2.0 / 3}, // .60
		{12, 0, 0, 0},                  // .90: none
	} {
		r := rows[c.row]
		f := 0.0
		if c.prec+c.recall > 0 {
			f = 1.25 * c.prec * c.recall / (0.25*c.prec + c.recall)
		}
		if math.Abs(r.precision-c.prec) > 1e-9 || math.Abs(r.substituted-c.sub) > 1e-9 || math.Abs(r.f05-f) > 1e-9 {
			t.Errorf("threshold %.2f: %+v, want precision %.3f substituted %.3f F0.5 %.3f", r.threshold, r, c.prec, c.sub, f)
		}
	}
}

// TestThresholdProtocol runs the protocol end to end with the hashing
// embedder: only single-tool queries are sampled, each takes its most
// similar tool, and the report counts the right ones.
func TestThresholdProtocol(t *testing.T) {
	tools := []ToolRecord{
		{ID: "fx", Name: "currency converter", Description: "convert money between currencies"},
		{ID: "wx", Name: "weather forecast", Description: "tomorrow's weather for a city"},
	}
	queries := []QueryRecord{
		{Query: "convert money between currencies", RelevantToolIDs: []string{"fx"}, Subset: "single"},
		{Query: "weather forecast for a city", RelevantToolIDs: []string{"wx"}, Subset: "single"},
		{Query: "tomorrow's weather for a city", RelevantToolIDs: []string{"fx"}, Subset: "single"}, // a wrong label: counted wrong
		{Query: "convert money and check the weather", RelevantToolIDs: []string{"fx", "wx"}, Subset: "multi"},
	}
	var out bytes.Buffer
	if err := Threshold(context.Background(), hashing.New(256), tools, queries, 0, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "queries 3, top-1 correct 2 (66.7%)\n") {
		t.Fatalf("report:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "\n0.90 ") {
		t.Errorf("report lacks the .90 row:\n%s", out.String())
	}
	if err := Threshold(context.Background(), hashing.New(256), tools, queries[3:], 0, &out); err == nil {
		t.Error("no single-tool query: want an error")
	}
}
