package evaluation

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strings"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/retrieval"
)

// ProtocolSparseHistory measures whether learning from use can hurt: only
// a few tools ("hot") have history, as in every young deployment, and the
// queries for hot tools and for all other ("cold") tools are scored apart,
// each with and without that history.
const ProtocolSparseHistory = "sparse-history"

// Defaults of the sparse-history protocol: tools with history and history
// queries per tool.
const (
	DefaultHotTools   = 10
	DefaultHotQueries = 30
)

// Sparse is the sparse-history protocol's outcome: hybrid figures for the
// hot and the cold queries, zero-shot and with the sparse history.
type Sparse struct {
	HotTools       []string `json:"hotTools"`
	HistoryQueries int      `json:"historyQueries"`
	HotZeroShot    Metrics  `json:"hotZeroShot"`
	Hot            Metrics  `json:"hot"`
	ColdZeroShot   Metrics  `json:"coldZeroShot"`
	Cold           Metrics  `json:"cold"`
	NHot           int      `json:"nHot"`
	NCold          int      `json:"nCold"`
}

// toolKey orders tool ids by a hash: a fixed, label-blind choice of the hot
// tools.
func toolKey(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("hot:" + id))
	return h.Sum64()
}

// SparseHistory chooses n hot tools and at most m history queries each from
// history (already in hash order): the hot tools are the first n in hash
// order of their ids among the tools with at least m history queries (or
// the most served, when fewer than n have m), and each keeps its first m
// queries. A multi-tool query is kept for its hot tools only, so no cold
// tool gains history. It returns the hot tools (sorted) and the history.
func SparseHistory(history []QueryRecord, n, m int) ([]string, []QueryRecord) {
	count := map[string]int{}
	for _, h := range history {
		for _, id := range h.RelevantToolIDs {
			count[id]++
		}
	}
	ids := make([]string, 0, len(count))
	for id := range count {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		ei, ej := count[ids[i]] >= m, count[ids[j]] >= m
		if ei != ej {
			return ei
		}
		if !ei && count[ids[i]] != count[ids[j]] {
			return count[ids[i]] > count[ids[j]]
		}
		ki, kj := toolKey(ids[i]), toolKey(ids[j])
		if ki != kj {
			return ki < kj
		}
		return ids[i] < ids[j]
	})
	hot := ids[:min(n, len(ids))]
	isHot := map[string]bool{}
	for _, id := range hot {
		isHot[id] = true
	}
	taken := map[string]int{}
	var out []QueryRecord
	for _, h := range history {
		var keep []string
		for _, id := range h.RelevantToolIDs {
			if isHot[id] && taken[id] < m {
				keep = append(keep, id)
				taken[id]++
			}
		}
		if len(keep) > 0 {
			out = append(out, QueryRecord{Query: h.Query, RelevantToolIDs: keep, Subset: h.Subset})
		}
	}
	hot = append([]string(nil), hot...)
	sort.Strings(hot)
	return hot, out
}

// splitHot divides queries into those with a hot relevant tool and the rest.
func splitHot(queries []QueryRecord, hot []string) (hq, cq []QueryRecord) {
	isHot := map[string]bool{}
	for _, id := range hot {
		isHot[id] = true
	}
	for _, q := range queries {
		h := false
		for _, id := range q.RelevantToolIDs {
			h = h || isHot[id]
		}
		if h {
			hq = append(hq, q)
		} else {
			cq = append(cq, q)
		}
	}
	return hq, cq
}

// sparseRanks scores the hot and the cold queries with the hybrid strategy
// into zero (before the history is ingested) or into with (after).
func (o Options) sparseRanks(ctx context.Context, svc *retrieval.Service, caller access.Caller, hq, cq []QueryRecord, hot, cold *Metrics) error {
	var err error
	if len(hq) > 0 {
		if *hot, _, err = o.runStrategy(ctx, svc, caller, retrieval.StrategyHybrid, hq); err != nil {
			return err
		}
	}
	if len(cq) > 0 {
		if *cold, _, err = o.runStrategy(ctx, svc, caller, retrieval.StrategyHybrid, cq); err != nil {
			return err
		}
	}
	return nil
}

func writeSparse(out io.Writer, o Options, sp Sparse) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sparse history: %d tools with history (%d queries in all), k: %d, embedder: %s\nhot tools: %s\n",
		len(sp.HotTools), sp.HistoryQueries, o.K, o.Embedder.Name(), strings.Join(sp.HotTools, ", "))
	fmt.Fprintf(&b, "%-16s %6s %9s %9s %12s %9s %9s\n", "queries", "n", "Recall@1", fmt.Sprintf("Recall@%d", o.K), fmt.Sprintf("Complete@%d", o.K), fmt.Sprintf("NDCG@%d", o.K), "MRR")
	row := func(name string, n int, m Metrics) {
		fmt.Fprintf(&b, "%-16s %6d %9.4f %9.4f %12.4f %9.4f %9.4f\n", name, n, m.Recall1, m.RecallK, m.CompleteK, m.NDCGK, m.MRR)
	}
	row("hot zero-shot", sp.NHot, sp.HotZeroShot)
	row("hot history", sp.NHot, sp.Hot)
	row("cold zero-shot", sp.NCold, sp.ColdZeroShot)
	row("cold history", sp.NCold, sp.Cold)
	fmt.Fprintf(&b, "cold Recall@%d change: %+.4f   hot Recall@%d change: %+.4f\n", o.K, sp.Cold.RecallK-sp.ColdZeroShot.RecallK, o.K, sp.Hot.RecallK-sp.HotZeroShot.RecallK)
	var last any
	if o.JSON {
		last = map[string]any{"sparseHistory": sp}
	}
	return writeReport(out, &b, last)
}
