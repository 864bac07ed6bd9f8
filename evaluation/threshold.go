package evaluation

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/tool"
)

// ProtocolThreshold measures a similarity threshold alone, the first
// substitution rule (workflows/CALIBRATION.md, "The first calibration"):
// the tools are embedded as the registry embeds manifests (name and
// description), a fixed-stride sample of the single-tool queries
// (--limit, default DefaultThresholdQueries) each takes the most similar
// tool by cosine over all tools, and the report gives, per threshold, the
// precision of substituting that tool when it clears the threshold, the
// share of queries substituted and F0.5.
const ProtocolThreshold = "threshold"

// DefaultThresholdQueries is the threshold protocol's sample size when
// --limit is 0 (the figures in workflows/CALIBRATION.md).
const DefaultThresholdQueries = 1500

// thresholdSample is one query's most similar tool: its cosine and whether
// it is the query's relevant tool.
type thresholdSample struct {
	sim     float64
	correct bool
}

// Threshold runs the threshold protocol over tools and queries with m and
// writes its report to out.
func Threshold(ctx context.Context, m embed.Embedder, tools []ToolRecord, queries []QueryRecord, limit int, out io.Writer) error {
	if limit <= 0 {
		limit = DefaultThresholdQueries
	}
	texts := make([]string, len(tools))
	for i, tl := range tools {
		texts[i] = tool.EmbeddingText(tool.Manifest{Name: tl.Name, Description: tl.Description})
	}
	tvecs, err := m.EmbedDocuments(ctx, texts)
	if err != nil {
		return fmt.Errorf("eval threshold: embed tools: %w", err)
	}
	var single []QueryRecord
	for _, q := range queries {
		if q.Subset == "single" && len(q.RelevantToolIDs) == 1 {
			single = append(single, q)
		}
	}
	stride := max(1, len(single)/limit)
	var samples []thresholdSample
	for i := 0; i < len(single) && len(samples) < limit; i += stride {
		q := single[i]
		qv, err := m.EmbedQuery(ctx, q.Query)
		if err != nil {
			return fmt.Errorf("eval threshold: embed query: %w", err)
		}
		best, bestSim := -1, -2.0
		for j, tv := range tvecs {
			var dot float64
			for k := range tv {
				dot += float64(tv[k]) * float64(qv[k])
			}
			if dot > bestSim {
				best, bestSim = j, dot
			}
		}
		if best < 0 {
			return fmt.Errorf("eval threshold: no tools")
		}
		samples = append(samples, thresholdSample{sim: bestSim, correct: tools[best].ID == q.RelevantToolIDs[0]})
	}
	if len(samples) == 0 {
		return fmt.Errorf("eval threshold: no single-tool queries (subset \"single\", one relevant tool)")
	}
	thresholdReport(out, samples)
	return nil
}

// thresholdRow is one threshold's line of the report.
type thresholdRow struct {
	threshold, precision, substituted, f05 float64
}

// thresholdRows are the report's lines for thresholds .30, .35, …, .90.
func thresholdRows(samples []thresholdSample) []thresholdRow {
	right := 0
	for _, s := range samples {
		if s.correct {
			right++
		}
	}
	var rows []thresholdRow
	for step := 0; step <= 12; step++ {
		th := 0.30 + 0.05*float64(step)
		var sub, ok int
		for _, s := range samples {
			if s.sim >= th {
				sub++
				if s.correct {
					ok++
				}
			}
		}
		prec := 0.0
		if sub > 0 {
			prec = float64(ok) / float64(sub)
		}
		recall := float64(ok) / float64(max(1, right))
		f := 0.0
		if prec+recall > 0 {
			f = 1.25 * prec * recall / (0.25*prec + recall)
		}
		rows = append(rows, thresholdRow{threshold: th, precision: prec, substituted: float64(sub) / float64(len(samples)), f05: f})
	}
	return rows
}

func thresholdReport(out io.Writer, samples []thresholdSample) {
	var right, wrong []float64
	for _, s := range samples {
		if s.correct {
			right = append(right, s.sim)
		} else {
			wrong = append(wrong, s.sim)
		}
	}
	sort.Float64s(right)
	sort.Float64s(wrong)
	q := func(xs []float64, p float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		return xs[int(p*float64(len(xs)-1))]
	}
	fmt.Fprintf(out, "queries %d, top-1 correct %d (%.1f%%)\n", len(samples), len(right), 100*float64(len(right))/float64(len(samples)))
	fmt.Fprintf(out, "similarity of correct top-1: p10 %.3f p25 %.3f p50 %.3f p75 %.3f\n", q(right, .1), q(right, .25), q(right, .5), q(right, .75))
	fmt.Fprintf(out, "similarity of wrong top-1:   p50 %.3f p75 %.3f p90 %.3f p95 %.3f\n", q(wrong, .5), q(wrong, .75), q(wrong, .9), q(wrong, .95))
	fmt.Fprintf(out, "%-9s %-10s %-12s %-8s\n", "threshold", "precision", "substituted", "F0.5")
	for _, r := range thresholdRows(samples) {
		fmt.Fprintf(out, "%-9s %-10s %-12s %-8s\n", fmt.Sprintf("%.2f", r.threshold), fmt.Sprintf("%.3f", r.precision),
			fmt.Sprintf("%.1f%%", 100*r.substituted), fmt.Sprintf("%.3f", r.f05))
	}
}
