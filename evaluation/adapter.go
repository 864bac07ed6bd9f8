package evaluation

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"time"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/retrieval/adapter"
	"github.com/toolsmith/toolsmith/tool"
)

// The --adapter settings.
const (
	AdapterOff       = "off"
	AdapterCatalogue = "catalogue"
)

// adapterTrains reports whether a tool's catalogue entry (and history)
// may train the adapter: every tool when frac is 0, else the tools whose
// id hashes below frac, so the rest are never seen by it.
func adapterTrains(id string, frac float64) bool {
	if frac <= 0 || frac >= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte("adapter:" + id))
	return float64(h.Sum64()%10000)/10000 < frac
}

// heldOut keeps the queries all of whose relevant tools are outside the
// adapter's training tools (the tool-disjoint split).
func heldOut(qs []QueryRecord, frac float64) []QueryRecord {
	var out []QueryRecord
	for _, q := range qs {
		ok := true
		for _, id := range q.RelevantToolIDs {
			if adapterTrains(id, frac) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, q)
		}
	}
	return out
}

// AdapterReport says how the adapter was trained.
type AdapterReport struct {
	Tools     int     `json:"tools"`
	Pairs     int     `json:"pairs"`
	History   int     `json:"historyPairs"`
	FirstLoss float64 `json:"firstLoss"`
	LastLoss  float64 `json:"lastLoss"`
	Seconds   float64 `json:"seconds"`
}

// trainAdapter trains an adapter from the catalogue entries of the
// training tools (and the history queries that served them) against their
// frozen tool vectors: the data a deployment has, never the evaluated
// queries.
func (o Options) trainAdapter(ctx context.Context, ms []tool.Manifest, tvecs [][]float32, history []QueryRecord) (*adapter.Adapter, AdapterReport, error) {
	var rep AdapterReport
	index := map[string]int{} // tool id → target index
	var targets [][]float32
	var texts []string
	var tgt []int
	for i, m := range ms {
		if !adapterTrains(m.ToolID, o.AdapterTrainTools) {
			continue
		}
		index[m.ToolID] = len(targets)
		targets = append(targets, tvecs[i])
		for _, t := range adapter.CatalogueTexts(m) {
			texts = append(texts, t)
			tgt = append(tgt, index[m.ToolID])
		}
	}
	rep.Tools, rep.Pairs = len(targets), len(texts)
	for _, h := range history {
		for _, id := range h.RelevantToolIDs {
			if t, ok := index[id]; ok {
				texts = append(texts, h.Query)
				tgt = append(tgt, t)
				rep.History++
			}
		}
	}
	vs, err := o.embedAll(ctx, "embed catalogue texts", texts)
	if err != nil {
		return nil, rep, err
	}
	pairs := make([]adapter.Pair, len(vs))
	for i, v := range vs {
		pairs[i] = adapter.Pair{Query: v, Target: tgt[i]}
	}
	start := time.Now()
	a, st, err := adapter.Train(pairs, targets, o.AdapterOptions)
	if err != nil {
		return nil, rep, fmt.Errorf("evaluation: adapter: %w", err)
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.FirstLoss, rep.LastLoss = st.FirstLoss, st.LastLoss
	return a, rep, nil
}

func (r AdapterReport) write(w io.Writer) {
	fmt.Fprintf(w, "adapter: %d tools, %d catalogue pairs, %d history pairs, loss %.3f → %.3f, trained in %.1fs\n",
		r.Tools, r.Pairs, r.History, r.FirstLoss, r.LastLoss, r.Seconds)
}

// adapted is an embed.Model whose vectors pass through an adapter: the
// query side (queries, their phrases, past queries) of the search, while
// tool vectors stay frozen in the store.
type adapted struct {
	embed.Model
	a *adapter.Adapter
}

func (m adapted) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := m.Model.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	return m.a.Apply(v), nil
}

func (m adapted) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := m.Model.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		out[i] = m.a.Apply(v)
	}
	return out, nil
}
