// Package evaluation measures retrieval quality on a labelled tool set in
// the format of shared/eval/metatool: tools.jsonl (id, name, description,
// category, description_for_model) and queries.jsonl (query,
// relevant_tool_ids, subset). Run indexes the tools into a fresh temporary
// SQLite store, optionally ingests a history file (same format as queries:
// past queries with the tools that served them) as usage events through
// retrieval.Service.RecordEvents, the code path of live events, then runs
// every query per strategy and reports Recall@1, Recall@k, NDCG@k, MRR and
// search latency.
//
// Split divides a query file deterministically by a hash of the normalised
// query text into a history half and a test half, so that no query text is
// in both.
package evaluation

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/adapter"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/tool"
)

// ToolRecord is one line of tools.jsonl.
type ToolRecord struct {
	ID                  string `json:"id"`
	Name                string `json:"name"`
	Description         string `json:"description"`
	Category            string `json:"category"`
	DescriptionForModel string `json:"description_for_model"`
	// Parameters, when present, are the tool's inputs: a JSON Schema
	// object, or a list of {name, type, description}.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// paramSpec is one entry of a parameter list.
type paramSpec struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Required    *bool  `json:"required"`
}

// InputSchema reads a tool record's parameters as a JSON Schema object
// (nil when it has none): a schema is taken as it is, a list of
// {name, type, description} becomes an object schema whose properties are
// required unless an entry says otherwise.
func (r ToolRecord) InputSchema() (json.RawMessage, error) {
	raw := bytes.TrimSpace(r.Parameters)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '{':
		var probe map[string]any
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("tool %q: parameters: %w", r.ID, err)
		}
		return raw, nil
	case '[':
		var list []paramSpec
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("tool %q: parameters must be a JSON Schema or a list of {name, type, description}: %w", r.ID, err)
		}
		props := map[string]any{}
		required := []string{}
		for i, p := range list {
			if strings.TrimSpace(p.Name) == "" {
				return nil, fmt.Errorf("tool %q: parameters[%d].name is required", r.ID, i)
			}
			prop := map[string]any{}
			switch t := strings.ToLower(strings.TrimSpace(p.Type)); t {
			case "string", "number", "integer", "boolean", "array", "object":
				prop["type"] = t
			case "int", "long":
				prop["type"] = "integer"
			case "float", "double":
				prop["type"] = "number"
			case "bool":
				prop["type"] = "boolean"
			}
			if d := strings.TrimSpace(p.Description); d != "" {
				prop["description"] = d
			}
			props[p.Name] = prop
			if p.Required == nil || *p.Required {
				required = append(required, p.Name)
			}
		}
		return json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	}
	return nil, fmt.Errorf("tool %q: parameters must be a JSON Schema object or a list", r.ID)
}

// QueryRecord is one line of queries.jsonl (and of a history file).
type QueryRecord struct {
	Query           string   `json:"query"`
	RelevantToolIDs []string `json:"relevant_tool_ids"`
	Subset          string   `json:"subset,omitempty"`
}

// Options configure Run.
type Options struct {
	Tools, Queries string // required paths
	History        string // optional path
	// Strategies to run; empty = hybrid, semantic, keyword.
	Strategies []retrieval.Strategy
	// K is the cut-off of Recall@K and NDCG@K (default 5).
	K int
	// JSON prints one JSON object as the last line.
	JSON bool
	// Embedder embeds tools, history and queries (required).
	Embedder embed.Model
	// Retrieval tunes the service (weights etc.); the result cache is off.
	Retrieval retrieval.Options
	// Limit, when > 0, keeps the first Limit queries in hash order: a fixed,
	// unbiased sample for tuning. The history is always used whole.
	Limit int
	// Progress receives the progress bar (nil = none).
	Progress io.Writer
	// BatchSize is the embedding batch size (default 64).
	BatchSize int
	// ToolText chooses the tool vector: "joined" (default) embeds
	// tool.EmbeddingText, the registry's text; "mean" averages the unit
	// embeddings of the name with the user-facing description and of the
	// description written for the model, so a long instruction text does
	// not drown the short statement of purpose.
	ToolText string
	// Protocol is ProtocolRank (default), ProtocolLeaveOneOut or
	// ProtocolSparseHistory.
	Protocol string
	// Rule is the substitution decision leave-one-out measures (default:
	// the workflow's, retrieval.DefaultSubstituteRule).
	Rule retrieval.SubstituteRule
	// FitSamples, with leave-one-out, appends this run's decision samples
	// (the features of both searches and whether the first candidate is
	// right) to the file, fits retrieval.DecisionModel on every sample in
	// it, and measures and prints the fitted model.
	FitSamples string
	// EvidenceShift, when set, is the decision model's EvidenceShift for
	// the run (of the default model, or of the fitted one, which otherwise
	// takes the default's): the log-odds shift of searches with usage
	// evidence that aligns both regimes' bars.
	EvidenceShift *float64
	// Calibrate, with leave-one-out, also sweeps thresholds and margins and
	// reports the rule with the most "nothing fits" at precision ≥ 0.95.
	Calibrate bool
	// HotTools and HotQueries, with ProtocolSparseHistory, are how many
	// tools have history and how many history queries each keeps (defaults
	// DefaultHotTools and DefaultHotQueries).
	HotTools, HotQueries int
	// VectorCache, when set, is a file of vectors kept across runs: texts
	// embedded once (tools, queries, history) are read back, not embedded
	// again. It is written when the run ends.
	VectorCache string
	// Adapter is AdapterOff (default) or AdapterCatalogue: train an
	// adapter (retrieval/adapter) on the evaluated catalogue and the
	// history, and search with it on the query side.
	Adapter string
	// AdapterTrainTools, in (0, 1), is the share of tools (by a hash of
	// their ids) whose catalogue entries and history train the adapter;
	// only queries for the other tools are scored, so the adapter never
	// sees the tools it is scored on. 0 trains on every tool and scores
	// every query. It filters the queries with the adapter off too, so
	// both runs score the same queries.
	AdapterTrainTools float64
	// AdapterOptions tune the adapter's training.
	AdapterOptions adapter.Options
	// ColdTools, in (0, 1), is the share of tools (by a hash of their ids)
	// that get no history although every other tool has its history, and
	// only the queries for those cold tools are scored (ColdTools): a new
	// tool among look-alikes that have served queries like its own
	// (without History, the same queries zero-shot). 0 is off.
	ColdTools float64
	// Record, with History and leave-one-out, learns each tool's record as
	// a first candidate from the history alone (retrain.BuildRecord, as the
	// retraining workflow learns it from served queries: the history's
	// queries replayed fold by fold, each over the others' evidence, never
	// the scored queries' labels), and the decision reads it
	// (retrieval.Candidate.Record).
	Record bool
	// RecordWeight, when set, is the decision model's weight of the
	// record (retrieval.EvidenceFeatures' feature 11) for the run, and
	// RecordShift the weight of "the first has a record" (feature 12).
	RecordWeight, RecordShift *float64
	// TeachRule learns the history as a signed-in user's uses are
	// learned, not as an admin's import: a history query teaches a tool
	// only when retrieval's rule for it holds (retrieval.Service.Teaches:
	// the query like the tool, and no tool far more like it); the others
	// are ingested as uses without their query. TeachMargin, when set, is
	// the rule's margin for the run (retrieval.Options.TeachMargin).
	TeachRule   bool
	TeachMargin float64
}

// Metrics are one strategy's figures.
type Metrics struct {
	Recall1 float64 `json:"recall@1"`
	RecallK float64 `json:"recall@5"`
	// CompleteK is Completeness@k: the share of queries with every relevant
	// tool in the top k (Recall@k counts the fraction found).
	CompleteK float64 `json:"completeness@5"`
	NDCGK     float64 `json:"ndcg@5"`
	MRR       float64 `json:"mrr"`
	P50       float64 `json:"p50_ms"`
	P95       float64 `json:"p95_ms"`
	N         int     `json:"-"`
}

// Report is Run's outcome by strategy.
type Report map[retrieval.Strategy]Metrics

// ReadTools reads tools.jsonl.
func ReadTools(path string) ([]ToolRecord, error) {
	var out []ToolRecord
	err := readJSONL(path, func(line int, b []byte) error {
		var r ToolRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return fault.Malformed(fmt.Sprintf("%s:%d", filepath.Base(path), line), "%v", err)
		}
		if r.ID == "" {
			return fault.Malformed(fmt.Sprintf("%s:%d", filepath.Base(path), line), "id is required")
		}
		if _, err := r.InputSchema(); err != nil {
			return fault.Malformed(fmt.Sprintf("%s:%d", filepath.Base(path), line), "%v", err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// ReadQueries reads queries.jsonl or a history file.
func ReadQueries(path string) ([]QueryRecord, error) {
	var out []QueryRecord
	err := readJSONL(path, func(line int, b []byte) error {
		var r QueryRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return fault.Malformed(fmt.Sprintf("%s:%d", filepath.Base(path), line), "%v", err)
		}
		if strings.TrimSpace(r.Query) == "" || len(r.RelevantToolIDs) == 0 {
			return fault.Malformed(fmt.Sprintf("%s:%d", filepath.Base(path), line), "query and relevant_tool_ids are required")
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func readJSONL(path string, each func(line int, b []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("evaluation: open %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		if err := each(n, b); err != nil {
			return fmt.Errorf("evaluation: read %s: %w", path, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("evaluation: read %s: %w", path, err)
	}
	return nil
}

// normQuery is the text the split hashes: lower case, single spaces.
func normQuery(q string) string {
	return strings.Join(strings.Fields(strings.ToLower(q)), " ")
}

// Half returns "history" or "test" for a query by an FNV-1a hash of its
// normalised text: deterministic, and identical texts share a half.
func Half(query string) string {
	if queryHash("", query)%2 == 0 {
		return "history"
	}
	return "test"
}

// queryHash is the FNV-1a hash of salt and a query's normalised text.
func queryHash(salt, query string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(salt + normQuery(query)))
	return h.Sum64()
}

// Split writes each query line of in to history or test by Half and
// returns how many went to each.
func Split(queries []QueryRecord, history, test io.Writer) (int, int, error) {
	n, err := splitBy(queries, func(q string) int {
		if Half(q) == "history" {
			return 0
		}
		return 1
	}, history, test)
	return n[0], n[1], err
}

// splitBy writes each query, as a JSON line, to the writer part names and
// returns how many went to each.
func splitBy(queries []QueryRecord, part func(query string) int, ws ...io.Writer) ([]int, error) {
	n := make([]int, len(ws))
	for _, q := range queries {
		b, err := json.Marshal(q)
		if err != nil {
			return n, fmt.Errorf("evaluation: split: %w", err)
		}
		i := part(q.Query)
		if _, err := ws[i].Write(append(b, '\n')); err != nil {
			return n, fmt.Errorf("evaluation: split: %w", err)
		}
		n[i]++
	}
	return n, nil
}

// The parts of the three-way split: tune on one, choose between a few
// settings on the second, report on the third, touched once.
const (
	PartTune   = "tune"
	PartChoose = "choose"
	PartReport = "report"
)

// Part returns PartTune, PartChoose or PartReport for a query by an FNV-1a
// hash of its normalised text (salted, so the parts do not follow the
// halves of Half): deterministic, and identical texts share a part.
func Part(query string) string { return parts[partIndex(query)] }

func partIndex(query string) int { return int(queryHash("part:", query) % 3) }

var parts = [3]string{PartTune, PartChoose, PartReport}

// Split3 writes each query to its Part's writer and returns how many went
// to each, in the order tune, choose, report.
func Split3(queries []QueryRecord, tune, choose, report io.Writer) ([3]int, error) {
	n, err := splitBy(queries, partIndex, tune, choose, report)
	return [3]int(n), err
}

// hashOrder sorts queries by the hash of their text (a fixed shuffle) so a
// Limit takes an unbiased sample.
func hashOrder(qs []QueryRecord) {
	key := func(s string) uint64 {
		h := fnv.New64a()
		h.Write([]byte("order:" + normQuery(s)))
		return h.Sum64()
	}
	sort.SliceStable(qs, func(i, j int) bool { return key(qs[i].Query) < key(qs[j].Query) })
}

// Manifest maps a tool record onto a manifest: the short description is
// the user-facing description, the full description joins it with the
// description written for the model (both are indexed and embedded).
func Manifest(r ToolRecord) tool.Manifest {
	desc := strings.TrimSpace(r.Description)
	if dm := strings.TrimSpace(r.DescriptionForModel); dm != "" && dm != desc {
		desc = strings.TrimRight(desc, ". ") + ". " + dm
	}
	short := r.Description
	if len([]rune(short)) > 100 {
		short = string([]rune(short)[:97]) + "..."
	}
	name := r.Name
	if name == "" {
		name = r.ID
	}
	name = Words(name)
	m := tool.Manifest{
		ToolID: r.ID, Name: name, Description: desc, ShortDescription: short,
		Category: r.Category, PermissionsRequired: []string{"public"}, Status: graph.StatusActive,
	}
	if schema, err := r.InputSchema(); err == nil {
		m.InputSchema = schema
	}
	return m
}

// Words splits an identifier-like name into words at underscores, hyphens
// and lower-to-upper case changes ("MixerBox_Translate" → "Mixer Box
// Translate"), so that both indexes see the words a user would type.
func Words(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-':
			b.WriteByte(' ')
			continue
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// progress draws a one-line bar.
type progress struct {
	w     io.Writer
	label string
	total int
	last  time.Time
}

func (p *progress) set(done int) {
	if p.w == nil || p.total == 0 {
		return
	}
	if done < p.total && time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	fill := width * done / p.total
	fmt.Fprintf(p.w, "\r%-24s [%s%s] %d/%d", p.label, strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, p.total)
	if done >= p.total {
		fmt.Fprintln(p.w)
	}
}

func (o Options) embedAll(ctx context.Context, label string, texts []string) ([][]float32, error) {
	bs := o.BatchSize
	if bs <= 0 {
		bs = 64
	}
	p := &progress{w: o.Progress, label: label, total: len(texts)}
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += bs {
		j := min(i+bs, len(texts))
		vs, err := o.Embedder.EmbedDocuments(ctx, texts[i:j])
		if err != nil {
			return nil, fmt.Errorf("evaluation: embed %s: %w", label, err)
		}
		out = append(out, vs...)
		p.set(len(out))
	}
	p.set(len(texts))
	return out, nil
}

func (o Options) toolVectors(ctx context.Context, tools []ToolRecord, ms []tool.Manifest) ([][]float32, error) {
	switch o.ToolText {
	case "", "joined":
		texts := make([]string, len(ms))
		for i, m := range ms {
			texts[i] = tool.EmbeddingText(m)
		}
		return o.embedAll(ctx, "embed tools", texts)
	case "mean":
		texts := make([]string, 0, 2*len(tools))
		for i, r := range tools {
			long := strings.TrimSpace(r.DescriptionForModel)
			if long == "" {
				long = ms[i].Name + ". " + r.Description
			}
			texts = append(texts, ms[i].Name+". "+r.Description, long)
		}
		vs, err := o.embedAll(ctx, "embed tools", texts)
		if err != nil {
			return nil, err
		}
		out := make([][]float32, len(tools))
		for i := range tools {
			a, b := graph.Normalize(vs[2*i]), graph.Normalize(vs[2*i+1])
			sum := make([]float32, len(a))
			for j := range a {
				sum[j] = a[j] + b[j]
			}
			out[i] = graph.Normalize(sum)
		}
		return out, nil
	}
	return nil, fault.Malformed("tool-text", "must be joined or mean; got %q", o.ToolText)
}

// Run evaluates and writes a table (and with JSON, a last JSON line) to out.
func Run(ctx context.Context, o Options, out io.Writer) (Report, error) {
	if o.Tools == "" {
		return nil, fault.Malformed("tools", "is required")
	}
	if o.Queries == "" {
		return nil, fault.Malformed("queries", "is required")
	}
	if o.Embedder == nil {
		return nil, errors.New("evaluation: no embedder")
	}
	if o.K <= 0 {
		o.K = 5
	}
	// Every text is embedded once: the vector cache remembers it for the
	// rest of the run, and across runs when it has a file.
	vc, err := openVectorCache(o.VectorCache, o.Embedder)
	if err != nil {
		return nil, err
	}
	o.Embedder = vc
	defer func() {
		if err := vc.save(); err != nil && o.Progress != nil {
			fmt.Fprintln(o.Progress, err)
		}
	}()
	if len(o.Strategies) == 0 {
		o.Strategies = []retrieval.Strategy{retrieval.StrategyHybrid, retrieval.StrategySemantic, retrieval.StrategyKeyword}
	}
	tools, err := ReadTools(o.Tools)
	if err != nil {
		return nil, err
	}
	queries, err := ReadQueries(o.Queries)
	if err != nil {
		return nil, err
	}
	var history []QueryRecord
	var sparse Sparse
	if o.Protocol == ProtocolSparseHistory {
		if o.History == "" {
			return nil, fault.Malformed("history", "the sparse-history protocol takes its history from --history")
		}
		if o.HotTools <= 0 {
			o.HotTools = DefaultHotTools
		}
		if o.HotQueries <= 0 {
			o.HotQueries = DefaultHotQueries
		}
	}
	if o.History != "" {
		if history, err = ReadQueries(o.History); err != nil {
			return nil, err
		}
		hashOrder(history)
		if o.Protocol == ProtocolSparseHistory {
			sparse.HotTools, history = SparseHistory(history, o.HotTools, o.HotQueries)
			sparse.HistoryQueries = len(history)
		}
		// Never let a test query text be in the history.
		seen := map[string]bool{}
		for _, h := range history {
			seen[normQuery(h.Query)] = true
		}
		kept := queries[:0]
		for _, q := range queries {
			if !seen[normQuery(q.Query)] {
				kept = append(kept, q)
			}
		}
		if dropped := len(queries) - len(kept); dropped > 0 && o.Progress != nil {
			fmt.Fprintf(o.Progress, "dropped %d queries whose text is in the history\n", dropped)
		}
		queries = kept
	}
	if o.AdapterTrainTools > 0 {
		queries = heldOut(queries, o.AdapterTrainTools)
	}
	if o.ColdTools > 0 {
		history, queries = ColdTools(history, queries, o.ColdTools)
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "cold tools (share %g): %d history queries for the others, %d queries for the cold ones\n", o.ColdTools, len(history), len(queries))
		}
	}
	hashOrder(queries)
	if o.Limit > 0 {
		queries = queries[:min(o.Limit, len(queries))]
	}

	dir, err := os.MkdirTemp("", "toolsmith-eval-*")
	if err != nil {
		return nil, fmt.Errorf("evaluation: temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "graph.db"), sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("evaluation: open store: %w", err)
	}
	defer st.Close()
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: o.Embedder.Name(), Dimension: o.Embedder.Dimension()}); err != nil {
		return nil, fmt.Errorf("evaluation: %w", err)
	}
	ms := make([]tool.Manifest, len(tools))
	for i, r := range tools {
		ms[i] = Manifest(r)
	}
	tvecs, err := o.toolVectors(ctx, tools, ms)
	if err != nil {
		return nil, err
	}
	// The adapter, when asked for, learns from the catalogue and the
	// history before the tools are indexed (with both sides, their
	// vectors are mapped too) and the search embeds through it.
	searchEmb := o.Embedder
	var ad *adapter.Adapter
	switch o.Adapter {
	case "", AdapterOff:
	case AdapterCatalogue:
		a, r, err := o.trainAdapter(ctx, ms, tvecs, history)
		if err != nil {
			return nil, err
		}
		r.write(out)
		ad, searchEmb = a, adapted{Model: o.Embedder, a: a}
	default:
		return nil, fault.Malformed("adapter", "must be off or catalogue; got %q", o.Adapter)
	}
	for i, m := range ms {
		if _, err := st.UpsertTool(ctx, tool.ToGraph(m, ad.ApplyTool(tvecs[i]))); err != nil {
			return nil, fmt.Errorf("evaluation: index %q: %w", m.ToolID, err)
		}
	}

	// Embed every distinct query and history text once, in batches, before
	// ranking: the cache then serves them, so latency is ranking alone.
	seen := map[string]bool{}
	var distinct []string
	for _, q := range append(append([]QueryRecord{}, queries...), history...) {
		if !seen[q.Query] {
			seen[q.Query] = true
			distinct = append(distinct, q.Query)
		}
	}
	if _, err := o.embedAll(ctx, "embed queries", distinct); err != nil {
		return nil, err
	}
	ropts := o.Retrieval
	ropts.CacheSize, ropts.EmbedCacheSize = -1, -1
	if o.TeachMargin != 0 {
		ropts.TeachMargin = o.TeachMargin
	}
	svc := retrieval.New(st, searchEmb, ropts)
	caller := access.Caller{UserID: "eval", Level: "owner", Groups: []string{access.Wildcard}}

	var hotQ, coldQ []QueryRecord
	if o.Protocol == ProtocolSparseHistory {
		// Zero-shot first, on the same store and queries.
		hotQ, coldQ = splitHot(queries, sparse.HotTools)
		sparse.NHot, sparse.NCold = len(hotQ), len(coldQ)
		if err := o.sparseRanks(ctx, svc, caller, hotQ, coldQ, &sparse.HotZeroShot, &sparse.ColdZeroShot); err != nil {
			return nil, err
		}
	}
	if len(history) > 0 {
		var evs []retrieval.Event
		for i, h := range history {
			// One session per history query, each a user's own: its
			// relevant tools were used together (learned pairings, shown
			// once graph.PairQuorum users paired them), nothing else was.
			sid, user := fmt.Sprintf("eval-history-%d", i), fmt.Sprintf("eval-user-%d", i)
			for _, id := range h.RelevantToolIDs {
				evs = append(evs, retrieval.Event{ToolID: id, Query: h.Query, Success: true, SessionID: sid, UserID: user})
			}
		}
		if o.TeachRule {
			teach, err := svc.Teaches(ctx, evs)
			if err != nil {
				return nil, fmt.Errorf("evaluation: teach rule: %w", err)
			}
			taught := 0
			for i, ok := range teach {
				if ok {
					taught++
				} else {
					evs[i].Query = ""
				}
			}
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "teach rule: %d of %d history uses teach their query\n", taught, len(evs))
			}
		}
		p := &progress{w: o.Progress, label: "ingest history", total: len(evs)}
		for i := 0; i < len(evs); i += 1000 {
			j := min(i+1000, len(evs))
			if err := svc.RecordEvents(ctx, caller, evs[i:j]); err != nil {
				return nil, fmt.Errorf("evaluation: ingest history: %w", err)
			}
			p.set(j)
		}
		// The scheduled analytics run once over the history, as a server's
		// would: ranking gets its popularity priors.
		r, err := analytics.Build(ctx, st, nil, analytics.Options{})
		if err != nil {
			return nil, fmt.Errorf("evaluation: analytics: %w", err)
		}
		if err := analytics.Publish(ctx, st, r); err != nil {
			return nil, fmt.Errorf("evaluation: analytics: %w", err)
		}
		svc.ForgetPriors()
	}
	var record *retrieval.Record
	if o.Record && len(history) > 0 && o.Protocol == ProtocolLeaveOneOut {
		var evs []graph.ServedQuery
		for _, h := range history {
			for _, id := range h.RelevantToolIDs {
				evs = append(evs, graph.ServedQuery{ToolID: id, Query: h.Query})
			}
		}
		start := time.Now()
		if record, err = retrain.BuildRecord(ctx, st, searchEmb, ropts, nil, evs); err != nil {
			return nil, fmt.Errorf("evaluation: %w", err)
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "record: %d tools first for a history query (right when first %.3f), %.1f s\n", record.Len(), record.Rate, time.Since(start).Seconds())
		}
	}

	rep := Report{}
	if o.Protocol == ProtocolSparseHistory {
		if err := o.sparseRanks(ctx, svc, caller, hotQ, coldQ, &sparse.Hot, &sparse.Cold); err != nil {
			return nil, err
		}
		rep[retrieval.StrategyHybrid+"/hot"], rep[retrieval.StrategyHybrid+"/cold"] = sparse.Hot, sparse.Cold
		rep[retrieval.StrategyHybrid+"/hot/zero-shot"], rep[retrieval.StrategyHybrid+"/cold/zero-shot"] = sparse.HotZeroShot, sparse.ColdZeroShot
		return rep, writeSparse(out, o, sparse)
	}
	if o.Protocol == ProtocolLeaveOneOut {
		loo, pts, fitted, err := o.leaveOneOut(ctx, svc, caller, queries, record)
		if err != nil {
			return nil, err
		}
		return rep, writeLeaveOneOut(out, o, loo, pts, fitted, len(queries), len(history))
	}
	for _, strat := range o.Strategies {
		m, subsets, err := o.runStrategy(ctx, svc, caller, strat, queries)
		if err != nil {
			return nil, err
		}
		rep[strat] = m
		if len(subsets) > 1 { // a breakdown says something only with several subsets
			for name, sub := range subsets {
				rep[retrieval.Strategy(string(strat)+"/"+name)] = sub
			}
		}
	}
	if err := write(out, o, rep, len(queries), len(history)); err != nil {
		return nil, err
	}
	return rep, nil
}

func (o Options) runStrategy(ctx context.Context, svc *retrieval.Service, caller access.Caller, strat retrieval.Strategy, queries []QueryRecord) (Metrics, map[string]Metrics, error) {
	p := &progress{w: o.Progress, label: "search " + string(strat), total: len(queries)}
	var m Metrics
	subsets := map[string]Metrics{}
	lat := make([]float64, 0, len(queries))
	for i, q := range queries {
		start := time.Now()
		hits, _, err := svc.Rank(ctx, retrieval.Query{Text: q.Query, Strategy: strat, MaxTools: retrieval.MaxTools, Caller: caller})
		if err != nil {
			return Metrics{}, nil, fmt.Errorf("evaluation: %s %q: %w", strat, q.Query, err)
		}
		lat = append(lat, float64(time.Since(start).Microseconds())/1000)
		ranked := make([]string, len(hits))
		for j, h := range hits {
			ranked[j] = h.Tool.ID
		}
		s := Score(ranked, q.RelevantToolIDs, o.K)
		m.add(s)
		if q.Subset != "" {
			sub := subsets[q.Subset]
			sub.add(s)
			subsets[q.Subset] = sub
		}
		p.set(i + 1)
	}
	m.mean()
	for k, sub := range subsets {
		sub.mean()
		subsets[k] = sub
	}
	m.P50, m.P95 = percentile(lat, 0.50), percentile(lat, 0.95)
	return m, subsets, nil
}

// add sums one query's figures; mean turns the sums into means.
func (m *Metrics) add(s Metrics) {
	m.Recall1 += s.Recall1
	m.RecallK += s.RecallK
	m.CompleteK += s.CompleteK
	m.NDCGK += s.NDCGK
	m.MRR += s.MRR
	m.N++
}

func (m *Metrics) mean() {
	if m.N == 0 {
		return
	}
	n := float64(m.N)
	m.Recall1, m.RecallK, m.CompleteK, m.NDCGK, m.MRR = m.Recall1/n, m.RecallK/n, m.CompleteK/n, m.NDCGK/n, m.MRR/n
}

// Score computes one query's metrics: Recall@1 and Recall@k as the fraction
// of relevant tools found in the top 1 and top k, binary NDCG@k, and the
// reciprocal rank of the first relevant tool (0 when none is ranked).
func Score(ranked, relevant []string, k int) Metrics {
	rel := map[string]bool{}
	for _, r := range relevant {
		rel[r] = true
	}
	if len(rel) == 0 {
		return Metrics{}
	}
	var m Metrics
	found := func(n int) float64 {
		c := 0
		for i := 0; i < n && i < len(ranked); i++ {
			if rel[ranked[i]] {
				c++
			}
		}
		return float64(c) / float64(len(rel))
	}
	m.Recall1 = found(1)
	m.RecallK = found(k)
	if m.RecallK == 1 {
		m.CompleteK = 1
	}
	var dcg, idcg float64
	for i := 0; i < k && i < len(ranked); i++ {
		if rel[ranked[i]] {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := 0; i < min(k, len(rel)); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	m.NDCGK = dcg / idcg
	for i, id := range ranked {
		if rel[id] {
			m.MRR = 1 / float64(i+1)
			break
		}
	}
	return m
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func write(out io.Writer, o Options, rep Report, nq, nh int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "queries: %d  history: %d  k: %d  embedder: %s  (latency: ranking with the query embedding precomputed)\n", nq, nh, o.K, o.Embedder.Name())
	fmt.Fprintf(&b, "%-16s %9s %9s %12s %9s %9s %9s %9s\n", "strategy", "Recall@1", fmt.Sprintf("Recall@%d", o.K), fmt.Sprintf("Complete@%d", o.K), fmt.Sprintf("NDCG@%d", o.K), "MRR", "p50 ms", "p95 ms")
	keys := make([]string, 0, len(rep))
	for k := range rep {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, s := range o.Strategies {
		for _, k := range keys {
			if k != string(s) && !strings.HasPrefix(k, string(s)+"/") {
				continue
			}
			m := rep[retrieval.Strategy(k)]
			lat := fmt.Sprintf("%9.2f %9.2f", m.P50, m.P95)
			if k != string(s) {
				lat = fmt.Sprintf("%9s %9s", "", "")
			}
			fmt.Fprintf(&b, "%-16s %9.4f %9.4f %12.4f %9.4f %9.4f %s  (n=%d)\n", k, m.Recall1, m.RecallK, m.CompleteK, m.NDCGK, m.MRR, lat, m.N)
		}
	}
	var last any
	if o.JSON {
		last = rep
	}
	return writeReport(out, &b, last)
}

// writeReport writes a report's table and, when last is not nil, last as
// one JSON object on the last line.
func writeReport(out io.Writer, b *strings.Builder, last any) error {
	if last != nil {
		js, err := json.Marshal(last)
		if err != nil {
			return fmt.Errorf("evaluation: %w", err)
		}
		b.Write(js)
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("evaluation: write report: %w", err)
	}
	return nil
}
