package evaluation

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
)

// Usage is the eval command's help text.
const Usage = `usage:
  toolsmith eval --tools F --queries F [--history F] [--strategy all|hybrid|semantic|keyword] [--k 5] [--json] [--limit N] [--vector-cache F]
  toolsmith eval ... [--adapter off|catalogue] [--adapter-train-tools F] [--adapter-both] [--adapter-epochs N] [--adapter-lr R] [--adapter-temp T] [--adapter-decay D]
  toolsmith eval --protocol leave-one-out --tools F --queries F [--history F] [--confidence C] [--threshold 0] [--margin 0] [--score-margin 0] [--fit-samples F] [--evidence-shift D] [--record=true] [--record-weight W] [--record-shift D] [--cold-tools S] [--calibrate] [--json]
  toolsmith eval --protocol sparse-history --tools F --queries F --history F [--hot-tools 10] [--hot-queries 30] [--json]
  toolsmith eval --protocol threshold --tools F --queries F [--limit 1500]
  toolsmith eval split --queries F --history-out F --test-out F
  toolsmith eval split --queries F --tune-out F --choose-out F --report-out F

eval indexes the tools into a fresh temporary SQLite store with the built-in
embedder (USE-Lite, weights from --model-dir), ingests --history as usage
events, runs every query and prints Recall@1, Recall@k, NDCG@k, MRR and
p50/p95 ranking latency per strategy; --json adds one JSON object as the last
line. Query texts present in the history are dropped from the queries.
--vector-cache keeps every embedded text's vector in a file, so repeated runs
on the same set (tuning weights) skip embedding.

Tools may carry parameters ("parameters": a JSON Schema or a list of
{name, type, description}); queries may name several relevant tools:
Recall@k is the fraction found, Completeness@k the share of queries with all
of them in the top k, and queries with a "subset" are also scored per subset.

--protocol leave-one-out measures the fulfilment decision the novel-verb
workflow makes (retrieval.SubstituteRule): each query is searched as the
workflow searches, with its relevant tools present and taken out; it reports
how often nothing fits when they are out, how often the right tool is
substituted when they are in, and the substitutions' precision, then the
whole curve of those figures over the rule's confidence bar. --json puts
leaveOneOut.nothingFits, leaveOneOut.recall, leaveOneOut.precision and the
curve on the last line; --calibrate adds the rule with the most recall at
precision ≥ 0.95 over thresholds and margins; --fit-samples F appends the
run's samples to F and fits the decision model (retrieval.DecisionModel) on
all of F, so a model is fitted on one part of the data and chosen on another
(--evidence-shift D measures it, or the default model, with that shift of
the searches with usage evidence). With --history, each tool's record as a
first candidate is learned from the history alone, as the retraining
workflow learns it from served queries (retrain.BuildRecord: the history's
queries replayed through the fulfilment search fold by fold, each over the
other folds' evidence), and the decision reads it; --record=false gives no
tool a record, --record-weight W and --record-shift D set the model's two
weights of it, and --fit-samples also prints the record weight fitted over
the default model's other weights.

--teach-rule (any protocol, with --history) ingests the history as a
signed-in user's uses are learned, not as an admin's import: a history
query teaches its tool only when it is like the tool and no tool of the
catalogue is more than --teach-margin (default .15) more like it; the other
uses count without their query. It measures what that rule costs learning.

--cold-tools S (any protocol) leaves a hash-chosen share S of the tools
without history while every other tool keeps its --history, and scores only
the queries for those cold tools: a new tool among look-alikes that have
served queries like its own (without --history, the same queries
zero-shot). With leave-one-out, the share of
substitutions that run a wrong tool is 1 − precision.

--protocol sparse-history gives only a few tools history, as a young
deployment has: --hot-tools tools (chosen by a hash of their ids among those
with at least --hot-queries history queries) keep their first --hot-queries
history queries, and no other tool has any. It scores the queries for those
tools (hot) and for every other tool (cold) apart, each zero-shot and with
that history (hybrid): learning from use must lift the hot queries and leave
the cold ones where they were. --json puts sparseHistory on the last line.

--adapter catalogue trains a query-side linear adapter over the frozen
embedder (retrieval/adapter) from the evaluated catalogue alone (each
tool's use cases, descriptions, verb, name and parameter names against its
vector) and from --history, never from the scored queries, and searches
with it; the table is preceded by the training's size, loss and time.
--adapter-train-tools F trains it on a hash-chosen share F of the tools and
scores only the queries for the others (a tool-disjoint split); give the
same F with --adapter off for the frozen embedder's figures on those
queries.

--protocol threshold measures a similarity threshold alone, the first
substitution rule (workflows/CALIBRATION.md): a fixed-stride sample of
--limit single-tool queries (default 1500) each takes the tool most similar
to it (name and description, as the registry embeds them), and the report
gives the similarity of right and wrong first tools and, per threshold from
.30 to .90, the precision of substituting it, the share substituted and F0.5.

eval split divides a query file by an FNV-1a hash of each normalised query
text into a history half and a test half (no query text in both); with
--tune-out, --choose-out and --report-out it divides it three ways instead
(another hash), to tune on one part, choose on the second and report on the
third (evaluation/TUNING.md says which figure came from which part).
`

// Command runs `toolsmith eval` with args (after "eval"). load opens the
// embedder from a model directory; the command table passes use.Load (or a
// function wrapping it) and the model dir default from its config.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer, modelDir string, load func(dir string) (embed.Model, error)) error {
	if len(args) > 0 && args[0] == "split" {
		return splitCommand(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, Usage) }
	var o Options
	var strategy string
	fs.StringVar(&o.Tools, "tools", "", "tools.jsonl")
	fs.StringVar(&o.Queries, "queries", "", "queries.jsonl")
	fs.StringVar(&o.History, "history", "", "history file (queries format) ingested as usage events")
	fs.StringVar(&strategy, "strategy", "all", "all|hybrid|semantic|keyword")
	fs.IntVar(&o.K, "k", 5, "cut-off for Recall@k and NDCG@k")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object as the last line")
	fs.IntVar(&o.Limit, "limit", 0, "evaluate a fixed hash-ordered sample of N queries (the history is used whole)")
	fs.StringVar(&modelDir, "model-dir", modelDir, "USE-Lite weights directory")
	fs.StringVar(&o.ToolText, "tool-text", "joined", "tool vector: joined (registry text) or mean (of name+description and description_for_model)")
	fs.StringVar(&o.Retrieval.Normalisation, "norm", "", "signal normalisation: z (default), minmax or rank")
	fs.Float64Var(&o.Retrieval.RankConstant, "rank-c", 0, "rank normalisation constant (default 10)")
	fs.IntVar(&o.Retrieval.Neighbours, "neighbours-k", 0, "k of the neighbours signal's kNN vote (default 3)")
	fs.IntVar(&o.Retrieval.Plausible, "plausible", 0, "how many of a query's best candidates by its own signals usage evidence may reorder (default 30; -1: all)")
	fs.Float64Var(&o.Retrieval.NeighbourFloor, "neighbour-floor", 0, "least cosine of a past query (or usage centroid) to the query for its evidence to count (default 0.5)")
	fs.Float64Var(&o.Retrieval.NeighbourMargin, "neighbour-margin", 0, "a past query counts when its cosine is ≥ the query's best tool cosine plus this (0: the default 0.05; < -1: off)")
	fs.Float64Var(&o.Retrieval.UsageMargin, "usage-margin", 0, "use never lifts a tool over one whose description (to the query or its best phrase) is this much more like the query (0: the default; < 0: off)")
	fs.Float64Var(&o.Retrieval.RelatedMargin, "related-margin", 0, "the open gate lifts only tools whose description, usage centroid or nearest past query comes within this of the best candidate's on the same measure (0: the default 0.2; < 0: off)")
	fs.Float64Var(&o.Retrieval.Admit, "admit", 0, "cosine at which a past query admits its tool outside the plausible set (default 0.65; > 1: never)")
	fs.IntVar(&o.Retrieval.PhraseWords, "phrase-words", 0, "window of the phrase signal in words (default 3; -1 disables it)")
	fs.Float64Var(&o.Retrieval.Feedback, "feedback", 0, "pseudo-relevance feedback weight (0 = default, <0 = off)")
	fs.IntVar(&o.Retrieval.FeedbackDocs, "feedback-docs", 0, "best matches averaged by the feedback (default 3)")
	fs.StringVar(&o.VectorCache, "vector-cache", "", "file keeping embedded texts across runs (for tuning; created when missing)")
	var weights string
	fs.StringVar(&weights, "weights", "", "override hybrid weights, e.g. semantic=0.5,keyword=0.2,usage=0.6")
	fs.StringVar(&o.Protocol, "protocol", ProtocolRank, "rank (retrieval quality), leave-one-out (the fulfilment decision), sparse-history (history for a few tools only) or threshold (a similarity threshold alone)")
	def := retrieval.DefaultSubstituteRule()
	fs.Float64Var(&o.Rule.Confidence, "confidence", def.Confidence, "leave-one-out: the decision model's confidence a match needs to be substituted (0: off)")
	fs.Float64Var(&o.Rule.Threshold, "threshold", def.Threshold, "leave-one-out: the similarity a match needs to be substituted (0: off)")
	fs.Float64Var(&o.Rule.Margin, "margin", def.Margin, "leave-one-out: how far a close match's similarity must stand above the others' (0: off)")
	fs.Float64Var(&o.Rule.ScoreMargin, "score-margin", def.ScoreMargin, "leave-one-out: how far a close match's hybrid score must stand above the second's (0: off)")
	fs.Float64Var(&o.Rule.EvidenceMargin, "evidence-margin", def.EvidenceMargin, "leave-one-out: a hybrid-score lead over the second that substitutes whatever the similarity (0: off)")
	fs.Func("evidence-shift", "leave-one-out: the decision model's log-odds shift for searches with usage evidence (retrieval.DecisionModel.EvidenceShift), for the default or the fitted model (default: the default model's)", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		o.EvidenceShift = &f
		return nil
	})
	fs.BoolVar(&o.Record, "record", true, "leave-one-out: learn each tool's record as a first candidate from --history (replayed fold by fold, as the retraining workflow does) and let the decision read it (false: no tool has a record)")
	fs.Func("record-weight", "leave-one-out: the decision model's weight of the record (default: the default model's)", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		o.RecordWeight = &f
		return nil
	})
	fs.Func("record-shift", "leave-one-out: the decision model's log-odds shift of searches whose first has a record (default: the default model's)", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		o.RecordShift = &f
		return nil
	})
	fs.StringVar(&o.FitSamples, "fit-samples", "", "leave-one-out: append this run's decision samples to the file and fit the decision model on all of them")
	fs.IntVar(&o.HotTools, "hot-tools", DefaultHotTools, "sparse-history: how many tools have history")
	fs.IntVar(&o.HotQueries, "hot-queries", DefaultHotQueries, "sparse-history: history queries per tool with history")
	fs.StringVar(&o.Adapter, "adapter", AdapterOff, "off, or catalogue: train a query-side adapter on the evaluated tools' catalogue entries (and --history) and search with it")
	fs.Float64Var(&o.AdapterTrainTools, "adapter-train-tools", 0, "share of tools (by id hash) that train the adapter; only queries for the others are scored (0: all tools train, all queries scored)")
	fs.BoolVar(&o.AdapterOptions.BothSides, "adapter-both", false, "map the tool vectors with the adapter too (a learned metric), not only the queries")
	fs.IntVar(&o.AdapterOptions.Epochs, "adapter-epochs", 0, "adapter training epochs (default 20)")
	fs.Float64Var(&o.AdapterOptions.LearningRate, "adapter-lr", 0, "adapter learning rate (default 1e-3)")
	fs.Float64Var(&o.AdapterOptions.Temperature, "adapter-temp", 0, "adapter softmax temperature (default 0.05)")
	fs.Float64Var(&o.AdapterOptions.Decay, "adapter-decay", 0, "adapter L2 pull towards the identity (default 0.1; <0: none)")
	fs.BoolVar(&o.TeachRule, "teach-rule", false, "learn --history as a signed-in user's uses are learned: a query teaches a tool only when it is like the tool and no tool is far more like it (the others are ingested without their query)")
	fs.Float64Var(&o.TeachMargin, "teach-margin", 0, "with --teach-rule: the rule's margin (0: the default; <0: the similarity floor alone)")
	fs.Float64Var(&o.ColdTools, "cold-tools", 0, "share of tools (by id hash) left without history while every other tool has its --history; only their queries are scored (0: off)")
	fs.BoolVar(&o.Calibrate, "calibrate", false, "leave-one-out: also sweep thresholds and margins for the most recall at precision ≥ 0.95")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err // -h: the usage is printed; not a failure
		}
		return fault.Malformed("args", "%v", err)
	}
	if weights != "" {
		w, err := ParseWeights(weights)
		if err != nil {
			return err
		}
		o.Retrieval.Weights = &w
	}
	switch strings.ToLower(strategy) {
	case "all", "":
	case "hybrid", "semantic", "keyword":
		st, _ := retrieval.ParseStrategy(strategy)
		o.Strategies = []retrieval.Strategy{st}
	default:
		return fault.Malformed("strategy", "must be all, hybrid, semantic or keyword; got %q", strategy)
	}
	switch o.Protocol {
	case ProtocolRank, ProtocolLeaveOneOut, ProtocolSparseHistory, ProtocolThreshold:
	default:
		return fault.Malformed("protocol", "must be rank, leave-one-out, sparse-history or threshold; got %q", o.Protocol)
	}
	if o.HotTools <= 0 || o.HotQueries <= 0 {
		return fault.Malformed("hot-tools", "--hot-tools and --hot-queries must be ≥ 1")
	}
	if o.Rule.Threshold < 0 || o.Rule.Threshold > 1 {
		return fault.Malformed("threshold", "must be in [0, 1]; got %g", o.Rule.Threshold)
	}
	if o.Rule.Confidence < 0 || o.Rule.Confidence >= 1 {
		return fault.Malformed("confidence", "must be in [0, 1); got %g", o.Rule.Confidence)
	}
	if o.Rule.Margin < 0 || o.Rule.Margin >= 1 {
		return fault.Malformed("margin", "must be in [0, 1); got %g", o.Rule.Margin)
	}
	if o.Rule.ScoreMargin < 0 {
		return fault.Malformed("score-margin", "must be ≥ 0; got %g", o.Rule.ScoreMargin)
	}
	if o.Adapter != AdapterOff && o.Adapter != AdapterCatalogue {
		return fault.Malformed("adapter", "must be off or catalogue; got %q", o.Adapter)
	}
	if o.AdapterTrainTools < 0 || o.AdapterTrainTools >= 1 {
		return fault.Malformed("adapter-train-tools", "must be in [0, 1); got %g", o.AdapterTrainTools)
	}
	if o.ColdTools < 0 || o.ColdTools >= 1 {
		return fault.Malformed("cold-tools", "must be in [0, 1); got %g", o.ColdTools)
	}
	if o.Tools == "" || o.Queries == "" {
		fs.Usage()
		return fault.Malformed("tools", "--tools and --queries are required")
	}
	if modelDir == "" {
		return fault.Malformed("model-dir", "no model directory: set --model-dir or TOOLSMITH_MODEL_DIR")
	}
	m, err := load(modelDir)
	if err != nil {
		return fmt.Errorf("eval: load embedder: %w", err)
	}
	if o.Protocol == ProtocolThreshold {
		tools, err := ReadTools(o.Tools)
		if err != nil {
			return err
		}
		queries, err := ReadQueries(o.Queries)
		if err != nil {
			return err
		}
		return Threshold(ctx, m, tools, queries, o.Limit, stdout)
	}
	o.Embedder = m
	o.Progress = stderr
	_, err = Run(ctx, o, stdout)
	return err
}

func splitCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval split", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var in, hOut, tOut, tuneOut, chooseOut, reportOut string
	fs.StringVar(&in, "queries", "", "queries.jsonl to split")
	fs.StringVar(&hOut, "history-out", "", "where the history half goes")
	fs.StringVar(&tOut, "test-out", "", "where the test half goes")
	fs.StringVar(&tuneOut, "tune-out", "", "three-way split: where the tuning part goes")
	fs.StringVar(&chooseOut, "choose-out", "", "three-way split: where the choosing part goes")
	fs.StringVar(&reportOut, "report-out", "", "three-way split: where the report part goes")
	if err := fs.Parse(args); err != nil {
		return fault.Malformed("args", "%v", err)
	}
	if tuneOut != "" || chooseOut != "" || reportOut != "" {
		if in == "" || tuneOut == "" || chooseOut == "" || reportOut == "" || hOut != "" || tOut != "" {
			return fault.Malformed("queries", "a three-way split takes --queries, --tune-out, --choose-out and --report-out (and neither --history-out nor --test-out)")
		}
		return split3Command(in, [3]string{tuneOut, chooseOut, reportOut}, stdout)
	}
	if in == "" || hOut == "" || tOut == "" {
		return fault.Malformed("queries", "--queries, --history-out and --test-out are required")
	}
	qs, err := ReadQueries(in)
	if err != nil {
		return err
	}
	hf, err := os.Create(hOut)
	if err != nil {
		return fmt.Errorf("eval split: %w", err)
	}
	defer hf.Close()
	tf, err := os.Create(tOut)
	if err != nil {
		return fmt.Errorf("eval split: %w", err)
	}
	defer tf.Close()
	nh, nt, err := Split(qs, hf, tf)
	if err != nil {
		return err
	}
	if err := hf.Close(); err != nil {
		return fmt.Errorf("eval split: %w", err)
	}
	if err := tf.Close(); err != nil {
		return fmt.Errorf("eval split: %w", err)
	}
	fmt.Fprintf(stdout, "history: %d queries → %s\ntest: %d queries → %s\n", nh, hOut, nt, tOut)
	return nil
}

// ParseWeights reads "name=value,…" over retrieval.DefaultWeights; names are
// semantic, phrase, keyword, subword, usage, neighbours, querylog, verb, history,
// success, graph and complexity.
func ParseWeights(s string) (retrieval.Weights, error) {
	w := retrieval.DefaultWeights()
	fields := map[string]*float64{
		"semantic": &w.Semantic, "phrase": &w.Phrase, "keyword": &w.Keyword, "subword": &w.Subword, "usage": &w.Usage, "neighbours": &w.Neighbours, "querylog": &w.QueryLog, "verb": &w.Verb, "history": &w.History,
		"success": &w.Success, "graph": &w.Graph, "complexity": &w.Complexity, "pairing": &w.Pairing, "popularity": &w.Popularity,
	}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		p, known := fields[strings.ToLower(strings.TrimSpace(name))]
		if !ok || !known {
			return w, fault.Malformed("weights", "want name=value with a name among semantic, phrase, keyword, subword, usage, neighbours, querylog, verb, history, success, graph, complexity, pairing, popularity; got %q", part)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || f < 0 {
			return w, fault.Malformed("weights", "%q: weight must be a non-negative number", part)
		}
		*p = f
	}
	return w, nil
}

// split3Command writes the three-way split of the queries in in to paths
// (tune, choose, report).
func split3Command(in string, paths [3]string, stdout io.Writer) error {
	qs, err := ReadQueries(in)
	if err != nil {
		return err
	}
	var fs [3]*os.File
	for i, p := range paths {
		if fs[i], err = os.Create(p); err != nil {
			return fmt.Errorf("eval split: %w", err)
		}
		defer fs[i].Close()
	}
	n, err := Split3(qs, fs[0], fs[1], fs[2])
	if err != nil {
		return err
	}
	for i, f := range fs {
		if err := f.Close(); err != nil {
			return fmt.Errorf("eval split: %w", err)
		}
		fmt.Fprintf(stdout, "%s: %d queries → %s\n", []string{PartTune, PartChoose, PartReport}[i], n[i], paths[i])
	}
	return nil
}
