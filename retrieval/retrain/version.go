package retrain

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/adapter"
)

// Statuses of a version. Promoted is the store's (graph.ModelPromoted):
// one version at most.
const (
	StatusCandidate  = "candidate" // trained, not yet decided
	StatusPromoted   = graph.ModelPromoted
	StatusRejected   = "rejected"    // evaluated and kept out (Reason says why)
	StatusSuperseded = "superseded"  // was promoted; a better one replaced it
	StatusRolledBack = "rolled-back" // was promoted; an operator rolled back from it
)

// Baseline names "no learned model" where a version id is expected: the
// configured ranking without an adapter.
const Baseline = "none"

// Figures are a model's results on the held-out replay: the share of
// queries whose served tool ranks first (R1) and among the first five
// (R5), the mean reciprocal rank (MRR, 0 beyond MaxRank) and the number of
// held-out queries (N).
type Figures struct {
	R1  float64 `json:"r1"`
	R5  float64 `json:"r5"`
	MRR float64 `json:"mrr"`
	N   int     `json:"n"`
	// Tools counts the distinct tools that served the replayed queries.
	Tools int `json:"tools"`
	// Substituted is the share of the replayed queries for which the
	// fulfilment decision (the default rule, reading the model's search
	// and its record) substitutes the first candidate, and Wrong the share
	// for which that candidate did not serve the query: a wrong tool run.
	Substituted float64 `json:"substituted"`
	Wrong       float64 `json:"wrong"`
	// Fresh counts the replayed queries served after everything a version
	// an operator rolled back from had seen (its held-out window's end):
	// N when no version was rolled back. The gate reads it so that a
	// rollback holds until new use, not the same evidence again, speaks
	// for a change (Gate.Decide).
	Fresh int `json:"fresh"`
	// Catalogue are the figures of a second replay, of the catalogue's own
	// texts as queries (a sample of the tools' use cases and short
	// descriptions, each served by its tool; catalogueQueries): the gate
	// keeps a candidate that ranks them worse than the current model does
	// (Gate.Decide), whatever it learned from the newest uses. Nil for a
	// version evaluated before it was kept.
	Catalogue *CatalogueFigures `json:"catalogue,omitempty"`
}

// CatalogueFigures are R@1, R@5 and MRR over N of the catalogue's own texts.
type CatalogueFigures struct {
	R1  float64 `json:"r1"`
	R5  float64 `json:"r5"`
	MRR float64 `json:"mrr"`
	N   int     `json:"n"`
}

// Counts say what a candidate was trained on.
type Counts struct {
	// Tools are the active tools (the adapter's targets).
	Tools int `json:"tools"`
	// CataloguePairs are the texts of the tools' manifests.
	CataloguePairs int `json:"cataloguePairs"`
	// UsagePairs are the training part's served queries.
	UsagePairs int `json:"usagePairs"`
	// Recorded are the tools with a record (Version.Record).
	Recorded int `json:"recorded"`
	// Events are the served queries read; HeldOut of them were kept out
	// of training for the replay (and Tune of the rest chose the weights).
	Events  int `json:"events"`
	HeldOut int `json:"heldOut"`
	Tune    int `json:"tune"`
}

// Split is where a candidate's events were cut, by the store's order of
// writes (graph.ServedQuery.Seq): events from From up to TrainUpTo
// trained it, those after it up to HeldOutUpTo are its held-out replay.
type Split struct {
	From        int64 `json:"from"`
	TrainUpTo   int64 `json:"trainUpTo"`
	HeldOutUpTo int64 `json:"heldOutUpTo"`
}

// Version is one stored version of the learned model with what it was
// trained on and how it did.
type Version struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	Status    string    `json:"status"`
	// Parent is the version promoted when this one was trained ("" for
	// the baseline).
	Parent string `json:"parent,omitempty"`
	// Weights are the candidate's ranking weights.
	Weights retrieval.Weights `json:"weights"`
	// Scale is the factor the learned signals' weights (usage, neighbours,
	// query log) were given on the tuning part.
	Scale  float64 `json:"scale"`
	Counts Counts  `json:"counts"`
	Split  Split   `json:"split"`
	// Dim is the adapter's dimension (0: no adapter).
	Dim int `json:"dim"`
	// TrainSeconds is how long training took.
	TrainSeconds float64 `json:"trainSeconds"`
	// Current and Candidate are the figures of the model promoted at
	// evaluation time (or the baseline) and of this one, on the same
	// replay; nil until evaluated.
	Current   *Figures `json:"current,omitempty"`
	Candidate *Figures `json:"candidate,omitempty"`
	// Gate is the rule the decision applied.
	Gate   *Gate  `json:"gate,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Adapter is the learned map; loaded only with Get/Promoted.
	Adapter *adapter.Adapter `json:"-"`
	// Record is each tool's record as a first candidate
	// (retrieval.Record), learned from the training part by BuildRecord
	// with this version's ranking; the fulfilment decision reads it once
	// the version is promoted. List leaves it out.
	Record *retrieval.Record `json:"record,omitempty"`
}

// Model is what retrieval applies for v.
func (v Version) Model() *retrieval.Model {
	w := v.Weights
	return &retrieval.Model{Version: v.ID, Adapter: v.Adapter, Weights: &w, Record: v.Record}
}

// record is the stored JSON description: Version without the fields the
// store keeps itself.
func (v Version) record() (graph.ModelVersion, error) {
	rec, err := json.Marshal(v)
	if err != nil {
		return graph.ModelVersion{}, fmt.Errorf("retrain: encode version %q: %w", v.ID, err)
	}
	mv := graph.ModelVersion{ID: v.ID, CreatedAt: v.CreatedAt, Status: v.Status, Record: rec}
	if v.Adapter != nil {
		mv.Blob = encodeAdapter(v.Adapter)
	}
	return mv, nil
}

// fromStored reads a stored version (its adapter when the blob is there).
func fromStored(mv graph.ModelVersion) (Version, error) {
	var v Version
	if err := json.Unmarshal(mv.Record, &v); err != nil {
		return Version{}, fmt.Errorf("retrain: decode version %q: %w", mv.ID, err)
	}
	v.ID, v.CreatedAt, v.Status = mv.ID, mv.CreatedAt, mv.Status
	if len(mv.Blob) > 0 {
		a, err := decodeAdapter(mv.Blob)
		if err != nil {
			return Version{}, fmt.Errorf("retrain: decode version %q: %w", mv.ID, err)
		}
		v.Adapter = a
	}
	return v, nil
}

// adapterMagic starts an encoded adapter: "TSA" and format 1.
var adapterMagic = [4]byte{'T', 'S', 'A', 1}

// encodeAdapter writes an adapter compactly: magic, dimension (uint32),
// both-sides flag (one byte) and Δ as little-endian float32, row-major
// (1 MiB for 512 dimensions).
func encodeAdapter(a *adapter.Adapter) []byte {
	b := make([]byte, 0, 9+4*len(a.Delta))
	b = append(b, adapterMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(a.Dim))
	flag := byte(0)
	if a.Tools {
		flag = 1
	}
	b = append(b, flag)
	for _, x := range a.Delta {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func decodeAdapter(b []byte) (*adapter.Adapter, error) {
	if len(b) < 9 || [4]byte(b[:4]) != adapterMagic {
		return nil, errors.New("adapter: not an encoded adapter")
	}
	d := int(binary.LittleEndian.Uint32(b[4:8]))
	if d <= 0 || d > 1<<13 || len(b) != 9+4*d*d {
		return nil, fmt.Errorf("adapter: %d bytes for dimension %d", len(b), d)
	}
	a := &adapter.Adapter{Dim: d, Delta: make([]float32, d*d), Tools: b[8] == 1}
	for i := range a.Delta {
		a.Delta[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[9+4*i:]))
	}
	return a, nil
}
