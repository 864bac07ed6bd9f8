package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ftsColumns are tools_fts's columns in declaration order; their weights
// are ftsColumnWeights.
var ftsColumns = [...]string{"name", "verb", "description", "tags", "use_cases", "entities"}

// bm25B is FTS5's bm25 length-normalisation constant.
const bm25B = 0.75

// ftsTokenizer is tools_fts's tokenize option; the text index tokenises
// with the very same FTS5 tokenizer.
const ftsTokenizer = `porter unicode61 remove_diacritics 2`

// textIndex mirrors tools_fts in memory and ranks it with FTS5's own bm25
// formula, so TextSearch returns what `-bm25(tools_fts, weights)` would,
// without bm25()'s per-row cost (a few microseconds per matching row, and
// a natural-language OR-query matches thousands of rows at 10,000 tools).
//
// FTS5 stays the durable index and the tokenizer: documents are loaded
// from an fts5vocab view of tools_fts, and new ones (and query words) are
// tokenised by an in-memory FTS5 table with the same tokenize option, so
// terms match exactly. Like memIndex it is updated only after a commit.
//
// Its memory holds no pointers per posting or per term occurrence: the
// postings of a term are (row, weight) pairs of 8 bytes, and documents are
// columns indexed by rowid. At 100,000 tools that is millions of postings
// the garbage collector never scans (it scanned each, through a pointer to
// its document, on every cycle).
type textIndex struct {
	mu          sync.RWMutex
	ids         []string  // by rowid (tools.seq): the tool id, "" for none
	lengths     []int32   // by rowid: tokens in all columns (FTS5's xColumnSize(-1))
	docTerms    [][]int32 // by rowid: the document's distinct term numbers, for removal
	docs        int       // documents present
	terms       map[string]int32
	post        [][]posting // by term number
	totalTokens int64
	maxRowid    int64
	broken      error // set when an update could not be applied
	scratch     sync.Pool
	// loading is set while loadBackground fills the index; searches then
	// fall back to FTS5 (same ranking) instead of waiting for it.
	loading atomic.Bool
	loaded  chan struct{} // closed when a background load ends

	tok      *tokenizer
	wordMu   sync.Mutex
	wordTerm map[string]string // query word -> its single FTS5 token ("" = none or several)
}

// posting is one term's occurrence in a document (its rowid): w is the
// column-weighted term frequency (FTS5's aFreq), a sum of small integer
// weights times counts, which float32 holds exactly.
type posting struct {
	row int32
	w   float32
}

// docText is one tools_fts row's column values.
type docText struct {
	rowid int64
	id    string
	cols  [len(ftsColumns)]string
}

func newTextIndex() *textIndex {
	x := &textIndex{terms: map[string]int32{}, wordTerm: map[string]string{}}
	x.scratch.New = func() any { return &textScratch{} }
	return x
}

// termCount is a term's frequency in one column of one document.
type termCount struct {
	rowid int64
	term  string
	col   int
	n     int
}

// errTextLoading makes TextSearch ask FTS5 while the index loads.
var errTextLoading = errors.New("the text index is loading")

// loadBackground fills the index (loadLocked) after returning: the store is
// ready sooner (at 100,000 tools reading tools_fts's instances takes
// seconds), and until the load ends TextSearch ranks with FTS5's bm25,
// which the index mirrors. The write lock is taken before returning and
// held to the load's end, so every put waits for the load and then applies
// on top of it: a registration the load read (or did not, being after ids
// was read) is indexed either way. A failed load marks the index broken (FTS5 answers
// until the store is reopened).
func (x *textIndex) loadBackground(ctx context.Context, db *sql.DB, ids map[int64]string) {
	x.loading.Store(true)
	x.loaded = make(chan struct{})
	x.mu.Lock() // now, so that no put runs before the load's reset
	go func() {
		defer close(x.loaded)
		defer x.loading.Store(false)
		defer x.mu.Unlock()
		if err := x.loadLocked(context.WithoutCancel(ctx), db, ids); err != nil {
			x.broken = err
		}
	}()
}

// wait returns once a background load has ended.
func (x *textIndex) wait() {
	if x.loaded != nil {
		<-x.loaded
	}
}

// done is closed once a background load has ended (at once when none
// ran).
func (x *textIndex) done() <-chan struct{} {
	if x.loaded != nil {
		return x.loaded
	}
	c := make(chan struct{})
	close(c)
	return c
}

// loadLocked fills the index from tools_fts through a temporary fts5vocab
// table on one connection of db. ids maps every tools_fts rowid to its tool
// id. The caller holds x.mu for writing.
func (x *textIndex) loadLocked(ctx context.Context, db *sql.DB, ids map[int64]string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: load text index: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE IF NOT EXISTS temp.tools_fts_instances USING fts5vocab(main, tools_fts, instance)`); err != nil {
		return fmt.Errorf("sqlite: load text index: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS temp.tools_fts_instances`) //nolint:errcheck // best effort; the table is per connection
	x.ids, x.lengths, x.docTerms, x.docs, x.terms, x.post, x.totalTokens, x.maxRowid, x.broken = nil, nil, nil, 0, map[string]int32{}, nil, 0, 0, nil
	for rowid, id := range ids {
		x.addDoc(rowid, id)
	}
	// The counts stream into the index row by row: collected first (with a
	// map of every document's terms to merge the columns), they were
	// about a gigabyte at 100,000 tools, all alive at once on a start.
	a := x.adder()
	if err := scanCounts(ctx, conn, countsQuery("temp.tools_fts_instances"), a.add); err != nil {
		return fmt.Errorf("sqlite: load text index: %w", err)
	}
	a.flush()
	x.compact()
	return nil
}

// countsQuery reads a fts5vocab instance table's term counts per document
// and column, ordered so that a document's counts, and a term's columns
// within it, are consecutive (countAdder relies on it).
func countsQuery(table string) string {
	return `SELECT doc, term, col, count(*) FROM ` + table + ` GROUP BY doc, term, col ORDER BY doc, term, col`
}

// compact trims the postings lists that append left with spare capacity
// (a list grown by append holds up to twice its length): after a load,
// the index is read far more than it grows. The caller holds x.mu.
func (x *textIndex) compact() {
	for t, ps := range x.post {
		if cap(ps)-len(ps) > len(ps)/8 {
			x.post[t] = slices.Clone(ps)
		}
	}
	x.post = slices.Clip(x.post)
}

// querier is what scanCounts reads through: a connection or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// scanCounts reads (rowid, term, column name, count) rows and hands each
// to fn.
func scanCounts(ctx context.Context, conn querier, query string, fn func(termCount)) error {
	colIndex := map[string]int{}
	for i, c := range ftsColumns {
		colIndex[c] = i
	}
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var tc termCount
		var col string
		if err := rows.Scan(&tc.rowid, &tc.term, &col, &tc.n); err != nil {
			return err
		}
		i, ok := colIndex[col]
		if !ok {
			return fmt.Errorf("unknown full-text column %q", col)
		}
		tc.col = i
		fn(tc)
	}
	return rows.Err()
}

// has reports whether rowid is a document. The caller holds x.mu.
func (x *textIndex) has(rowid int64) bool {
	return rowid >= 0 && rowid < int64(len(x.ids)) && x.ids[rowid] != ""
}

// addDoc makes rowid an empty document of tool id. The caller holds x.mu.
func (x *textIndex) addDoc(rowid int64, id string) {
	if rowid < 0 || rowid > math.MaxInt32 || id == "" {
		return
	}
	if n := int(rowid) + 1; n > len(x.ids) {
		x.ids = slices.Grow(x.ids, n-len(x.ids))[:n]
		x.lengths = slices.Grow(x.lengths, n-len(x.lengths))[:n]
		x.docTerms = slices.Grow(x.docTerms, n-len(x.docTerms))[:n]
	}
	if x.ids[rowid] == "" {
		x.docs++
	}
	x.ids[rowid], x.lengths[rowid], x.docTerms[rowid] = id, 0, nil
	x.maxRowid = max(x.maxRowid, rowid)
}

// termNumber returns term's number, adding it. The caller holds x.mu.
func (x *textIndex) termNumber(term string) int32 {
	if n, ok := x.terms[term]; ok {
		return n
	}
	n := int32(len(x.post))
	x.terms[term] = n
	x.post = append(x.post, nil)
	return n
}

// addCounts adds term counts to documents already present (which must
// hold none of these terms yet), in countsQuery's order. The caller holds
// x.mu.
func (x *textIndex) addCounts(counts []termCount) {
	a := x.adder()
	for _, c := range counts {
		a.add(c)
	}
	a.flush()
}

// countAdder adds a stream of term counts in countsQuery's order (by
// document, then term, then column) to the index: the columns of one
// (document, term) pair are consecutive, so their weights merge without a
// map, and a document's term list is complete, and sized, at its last
// count. The caller holds x.mu.
type countAdder struct {
	x     *textIndex
	rowid int64   // the document being read; -1 before the first
	term  int32   // the pending (rowid, term) pair's term; -1 for none
	w     float64 // and its column-weighted frequency so far
	terms []int32 // the document's terms so far
}

func (x *textIndex) adder() *countAdder {
	return &countAdder{x: x, rowid: -1, term: -1}
}

func (a *countAdder) add(c termCount) {
	x := a.x
	if !x.has(c.rowid) {
		return
	}
	if c.rowid != a.rowid {
		a.flush()
		a.rowid = c.rowid
	}
	t := x.termNumber(c.term)
	if t != a.term {
		a.pair()
		a.term = t
	}
	a.w += ftsColumnWeights[c.col] * float64(c.n)
	x.lengths[c.rowid] += int32(c.n)
	x.totalTokens += int64(c.n)
}

// pair posts the pending (document, term) pair.
func (a *countAdder) pair() {
	if a.term < 0 {
		return
	}
	a.x.post[a.term] = append(a.x.post[a.term], posting{row: int32(a.rowid), w: float32(a.w)})
	a.terms = append(a.terms, a.term)
	a.term, a.w = -1, 0
}

// flush ends the current document.
func (a *countAdder) flush() {
	a.pair()
	if a.rowid >= 0 && len(a.terms) > 0 {
		x := a.x
		x.docTerms[a.rowid] = append(x.docTerms[a.rowid], a.terms...)
	}
	a.terms = a.terms[:0]
}

// remove drops a document and its postings. The caller holds x.mu.
func (x *textIndex) remove(rowid int64) {
	for _, t := range x.docTerms[rowid] {
		ps := x.post[t]
		for i := range ps {
			if int64(ps[i].row) == rowid {
				ps[i] = ps[len(ps)-1]
				ps = ps[:len(ps)-1]
				break
			}
		}
		x.post[t] = ps
	}
	x.totalTokens -= int64(x.lengths[rowid])
	x.ids[rowid], x.lengths[rowid], x.docTerms[rowid] = "", 0, nil
	x.docs--
}

// postings returns term's postings. The caller holds x.mu.
func (x *textIndex) postings(term string) []posting {
	if n, ok := x.terms[term]; ok {
		return x.post[n]
	}
	return nil
}

// put replaces the given rows (inserted or rewritten in a committed
// transaction). When tokenising fails the index is marked broken and
// TextSearch falls back to FTS5 until the store is reopened.
func (x *textIndex) put(ctx context.Context, docs []docText) {
	if len(docs) == 0 {
		return
	}
	counts, err := x.tok.documents(ctx, docs)
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		x.broken = fmt.Errorf("tokenise documents: %w", err)
		return
	}
	for _, dt := range docs {
		if x.has(dt.rowid) {
			x.remove(dt.rowid)
		}
		x.addDoc(dt.rowid, dt.id)
	}
	x.addCounts(counts)
}

// term returns the single FTS5 token a query word becomes; ok is false
// when it becomes none or several (a phrase, which the index does not
// rank; the caller then asks FTS5).
func (x *textIndex) term(ctx context.Context, word string) (string, bool, error) {
	x.wordMu.Lock()
	t, cached := x.wordTerm[word]
	x.wordMu.Unlock()
	if cached {
		return t, t != "", nil
	}
	tokens, err := x.tok.words(ctx, []string{word})
	if err != nil {
		return "", false, err
	}
	if len(tokens[0]) == 1 {
		t = tokens[0][0]
	}
	x.wordMu.Lock()
	if len(x.wordTerm) >= maxCachedWords {
		clear(x.wordTerm)
	}
	x.wordTerm[word] = t
	x.wordMu.Unlock()
	return t, t != "", nil
}

// maxCachedWords bounds the query-word cache.
const maxCachedWords = 1 << 16

// textCandidate is a scored document, by its row (no pointer: the
// selection moves candidates around, and pointers would cost a write
// barrier each while the collector runs).
type textCandidate struct {
	row   int32
	score float64
}

// search ranks every document matching any of terms (query words already
// tokenised, one per query phrase, duplicates kept as FTS5 keeps them)
// with FTS5's bm25, best first (ties by tool id), and hands them to keep
// until it reports that it has enough. Terms are pruned by pruneByDF.
func (x *textIndex) search(terms []string, keep func(id string, score float64) bool) error {
	if x.loading.Load() {
		return errTextLoading
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.broken != nil {
		return x.broken
	}
	total := x.docs
	if total == 0 {
		return nil
	}
	kept := pruneByDF(terms, func(t string) int { return len(x.postings(t)) }, total)
	avgdl := float64(x.totalTokens) / float64(total)
	// Scores accumulate in a scratch slice indexed by rowid (tools are
	// never deleted, so rowids are dense); touched lists the rows scored.
	sc := x.scratch.Get().(*textScratch)
	defer x.scratch.Put(sc)
	if n := int(x.maxRowid) + 1; len(sc.score) < n {
		sc.score = make([]float64, n)
	}
	sc.touched = sc.touched[:0]
	for _, t := range kept {
		ps := x.postings(t)
		v := idf(total, len(ps))
		for _, p := range ps {
			w := float64(p.w)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(x.lengths[p.row])/avgdl)
			if sc.score[p.row] == 0 {
				sc.touched = append(sc.touched, p.row)
			}
			sc.score[p.row] += v * (w * (bm25K1 + 1)) / (w + norm)
		}
	}
	cands := textHeap{c: sc.cands[:0], ids: x.ids}
	for _, r := range sc.touched {
		cands.c = append(cands.c, textCandidate{r, sc.score[r]})
		sc.score[r] = 0
	}
	// Best first without sorting every match: heapify, then pop only as
	// many as keep asks for.
	cands.init()
	for len(cands.c) > 0 {
		c := cands.pop()
		if !keep(x.ids[c.row], c.score) {
			break
		}
	}
	sc.cands = cands.c[:0]
	return nil
}

// textScratch is the per-search working memory, pooled.
type textScratch struct {
	score   []float64
	touched []int32
	cands   []textCandidate
}

// textHeap orders candidates best first: higher score, then smaller id
// (ids by row).
type textHeap struct {
	c   []textCandidate
	ids []string
}

func (h *textHeap) less(i, j int) bool {
	a, b := h.c[i], h.c[j]
	if a.score != b.score {
		return a.score > b.score
	}
	return h.ids[a.row] < h.ids[b.row]
}

// down is container/heap's sift-down over the first n candidates.
func (h *textHeap) down(i, n int) {
	for {
		l := 2*i + 1
		if l >= n || l < 0 {
			return
		}
		j := l
		if r := l + 1; r < n && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			return
		}
		h.c[i], h.c[j] = h.c[j], h.c[i]
		i = j
	}
}

func (h *textHeap) init() {
	for i := len(h.c)/2 - 1; i >= 0; i-- {
		h.down(i, len(h.c))
	}
}

// pop removes and returns the best candidate.
func (h *textHeap) pop() textCandidate {
	n := len(h.c) - 1
	h.c[0], h.c[n] = h.c[n], h.c[0]
	h.down(0, n)
	c := h.c[n]
	h.c = h.c[:n]
	return c
}

// tokenizer runs FTS5's tokenizer on text outside tools_fts: an in-memory
// database on one dedicated connection holding an FTS5 table with
// tools_fts's columns and tokenize option, and an fts5vocab view of it.
type tokenizer struct {
	mu   sync.Mutex
	db   *sql.DB
	conn *sql.Conn
}

func openTokenizer(ctx context.Context) (*tokenizer, error) {
	db, err := sql.Open("sqlite", "file::memory:")
	if err != nil {
		return nil, fmt.Errorf("sqlite: tokenizer: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: tokenizer: %w", err)
	}
	for _, q := range []string{
		`CREATE VIRTUAL TABLE probe USING fts5(` + strings.Join(ftsColumns[:], ", ") + `, tokenize = '` + ftsTokenizer + `')`,
		`CREATE VIRTUAL TABLE probe_instances USING fts5vocab(probe, instance)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			conn.Close()
			db.Close()
			return nil, fmt.Errorf("sqlite: tokenizer: %w", err)
		}
	}
	return &tokenizer{db: db, conn: conn}, nil
}

func (t *tokenizer) close() {
	t.conn.Close()
	t.db.Close()
}

// documents tokenises rows as tools_fts would.
func (t *tokenizer) documents(ctx context.Context, docs []docText) ([]termCount, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx = context.WithoutCancel(ctx) // the data is committed: finish the mirror
	tx, err := t.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // nothing is kept: the probe is emptied either way
	for _, d := range docs {
		args := []any{d.rowid}
		for _, c := range d.cols {
			args = append(args, c)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO probe(rowid, `+strings.Join(ftsColumns[:], ", ")+`) VALUES (?,?,?,?,?,?,?)`, args...); err != nil {
			return nil, err
		}
	}
	// The rollback empties the probe.
	var out []termCount
	err = scanCounts(ctx, tx, countsQuery("probe_instances"), func(c termCount) { out = append(out, c) })
	return out, err
}

// words tokenises each word, returning its tokens in order.
func (t *tokenizer) words(ctx context.Context, words []string) ([][]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tx, err := t.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // the rollback empties the probe
	for i, w := range words {
		if _, err := tx.ExecContext(ctx, `INSERT INTO probe(rowid, name) VALUES (?, ?)`, i+1, w); err != nil {
			return nil, err
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT doc, term FROM probe_instances ORDER BY doc, "offset"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([][]string, len(words))
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			return nil, err
		}
		if doc >= 1 && doc <= len(words) {
			out[doc-1] = append(out[doc-1], term)
		}
	}
	return out, rows.Err()
}
