package retrieval

import (
	"context"
	"math"
	"testing"

	"github.com/toolsmith/toolsmith/graph"
)

// meanStore serves VectorSearch and VectorScores over a few vectors and
// their mean; every other Store method is absent (nil embedded interface).
type meanStore struct {
	graph.Store
	vecs map[string][]float32
}

func (m meanStore) MeanVector(context.Context) ([]float32, error) {
	mean := make([]float32, 3)
	for _, v := range m.vecs {
		for i, x := range graph.Normalize(v) {
			mean[i] += x / float32(len(m.vecs))
		}
	}
	return mean, nil
}

func (m meanStore) VectorSearch(_ context.Context, q []float32, k int, f graph.Filter) ([]graph.Hit, error) {
	var hits []graph.Hit
	for _, id := range f.IDs {
		hits = append(hits, graph.Hit{Tool: graph.ToolSummary{ID: id}, Score: graph.Cosine(q, m.vecs[id])})
	}
	return hits, nil
}

func (m meanStore) VectorScores(_ context.Context, vecs [][]float32, f graph.Filter) (map[string][]float64, error) {
	out := map[string][]float64{}
	for _, id := range f.IDs {
		for _, v := range vecs {
			out[id] = append(out[id], graph.Cosine(v, m.vecs[id]))
		}
	}
	return out, nil
}

// TestCentreSemantic checks the centred cosine, computed from the plain
// cosine, t·m and |m|, against its definition: cos(q, t − m).
func TestCentreSemantic(t *testing.T) {
	st := meanStore{vecs: map[string][]float32{
		"a": {1, 0.2, 0}, "b": {1, 0, 0.3}, "c": {1, -0.2, -0.3},
	}}
	s := &Service{store: st}
	q := []float32{0.6, 0.5, 0.1}
	cands := map[string]*candidate{}
	for id, v := range st.vecs {
		cands[id] = &candidate{sum: graph.ToolSummary{ID: id}, semantic: graph.Cosine(q, v), hasSem: true}
	}
	if _, err := s.centreSemantic(context.Background(), q, graph.Filter{}, cands); err != nil {
		t.Fatal(err)
	}
	for id, v := range st.vecs {
		d := st.centred(v)
		want := dot(graph.Normalize(q), d) / math.Sqrt(dot(d, d))
		if c := cands[id]; !c.hasCentred || math.Abs(c.centred-want) > 1e-5 {
			t.Errorf("%s: centred = %v (set %v), want %v", id, c.centred, c.hasCentred, want)
		}
	}
}

// centred is v's unit vector minus the store's mean vector.
func (m meanStore) centred(v []float32) []float32 {
	mean, _ := m.MeanVector(context.Background())
	d := graph.Normalize(v)
	for i := range d {
		d[i] -= mean[i]
	}
	return d
}

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
