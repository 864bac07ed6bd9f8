package retrieval

import (
	"github.com/toolsmith/toolsmith/retrieval/adapter"
)

// Model is a learned refinement of the ranking that a service applies on
// top of its options: a query-side adapter over the frozen embedder (the
// query vector is mapped before the semantic signals compare it with tool
// vectors) and ranking weights that replace Options.Weights. The retrain
// workflow (retrieval/retrain) trains, evaluates and promotes them; a
// service without one ranks exactly as configured.
type Model struct {
	// Version names the stored version the model came from ("" for one
	// built in memory, as the evaluation does).
	Version string
	// Adapter maps query vectors; nil maps nothing.
	Adapter *adapter.Adapter
	// Weights replace Options.Weights (the session strategy's weights are
	// these with History tripled, as by default); nil keeps the options'.
	Weights *Weights
	// Record is each tool's record as a first candidate, learned from
	// the same served queries (retrain.BuildRecord); the fulfilment
	// decision reads it (Candidate.Record). nil: no tool has one.
	Record *Record
}

// SetModel applies m to every search from now on (nil: the configured
// ranking, no adapter). The swap is atomic: a search in flight finishes
// with the model it started with. Cached results were ranked by the
// previous model, so the result cache is cleared.
func (s *Service) SetModel(m *Model) {
	s.model.Store(m)
	if s.cache != nil {
		s.cache.clear()
	}
}

// Model returns the model the service applies, nil when none.
func (s *Service) Model() *Model { return s.model.Load() }

// Record is the record of the model the service applies (nil when none
// or without one).
func (s *Service) Record() *Record {
	if m := s.model.Load(); m != nil {
		return m.Record
	}
	return nil
}

// weightsFor are the weights of strategy st under model m.
func (s *Service) weightsFor(m *Model, st Strategy) Weights {
	if m != nil && m.Weights != nil {
		w := *m.Weights
		if st == StrategySession {
			w.History *= 3
		}
		return w
	}
	if st == StrategySession {
		return *s.opts.SessionWeights
	}
	return *s.opts.Weights
}

// semanticVector is the query vector the semantic signals compare with
// tool vectors: qv through the model's adapter, qv itself without one.
// Query-to-query comparisons (the usage centroid, the neighbours) keep
// qv: past queries are stored as the frozen embedder made them.
func (m *Model) semanticVector(qv []float32) []float32 {
	if m == nil || m.Adapter == nil || qv == nil {
		return qv
	}
	return m.Adapter.Apply(qv)
}
