package retrieval

import "math"

// RecordEntry is one tool's record: of the served queries replayed through
// the fulfilment search (each ranked without its own use, see
// retrain.BuildRecord), how many put the tool first (First) and how many of
// those the tool had served (Right).
type RecordEntry struct {
	First int `json:"first"`
	Right int `json:"right"`
}

// Record is what use says of each tool as a first candidate: which tools
// the search often puts first for queries they did not serve. The decision
// reads it as Candidate.Record (Record.LogOdds of the candidate's tool). It
// is learned from served queries only (a query and the tool that
// succeeded), by the retraining workflow for a deployment and by `toolsmith
// eval` from --history, never from an evaluation set's labels.
type Record struct {
	Tools map[string]RecordEntry `json:"tools"`
	// Rate is the share of replayed queries whose first candidate was
	// right (NewRecord sets it; 0: LogOdds computes it from Tools).
	Rate float64 `json:"rate,omitempty"`
}

// NewRecord is the record of tools with its Rate.
func NewRecord(tools map[string]RecordEntry) *Record {
	r := &Record{Tools: tools}
	r.Rate, _ = r.rate()
	return r
}

// RecordPrior is the weight, in replayed queries, of the record's prior:
// a tool first for few queries reads close to the record's overall rate of
// right first candidates, which is neutral (LogOdds 0).
const RecordPrior = 4

// LogOdds is the tool's smoothed log odds of being right when first, less
// the record's overall log odds: positive for a tool more often right
// than the average first candidate, negative for one often first and
// wrong, and exactly 0 for a tool without a record (and for any tool of
// an empty or nil record).
func (r *Record) LogOdds(id string) float64 {
	lo, _ := r.Of(id)
	return lo
}

// Of is LogOdds and whether the tool has a record (was first for a
// replayed query).
func (r *Record) Of(id string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	e, ok := r.Tools[id]
	if !ok || e.First <= 0 {
		return 0, false
	}
	p, ok := r.Rate, r.Rate > 0
	if !ok {
		if p, ok = r.rate(); !ok {
			return 0, false
		}
	}
	p = min(max(p, 0.01), 0.99)
	right := float64(min(max(e.Right, 0), e.First))
	wrong := float64(e.First) - right
	return math.Log((right+RecordPrior*p)/(wrong+RecordPrior*(1-p))) - math.Log(p/(1-p)), true
}

// rate is the share of replayed queries whose first candidate was right,
// kept off 0 and 1; ok is false for an empty record.
func (r *Record) rate() (float64, bool) {
	var first, right int
	for _, e := range r.Tools {
		if e.First > 0 {
			first += e.First
			right += min(max(e.Right, 0), e.First)
		}
	}
	if first == 0 {
		return 0, false
	}
	return min(max(float64(right)/float64(first), 0.01), 0.99), true
}

// Len is how many tools have a record.
func (r *Record) Len() int {
	if r == nil {
		return 0
	}
	return len(r.Tools)
}
