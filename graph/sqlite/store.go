package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Options configure Open.
type Options struct {
	// ReadOnly opens an existing, migrated store without write access.
	ReadOnly bool
	// BusyTimeout is how long a statement waits for a lock; 0 means
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxOpenConns bounds the connection pool; 0 means 4.
	MaxOpenConns int
	// CacheSizeKiB is SQLite's page cache per connection; 0 means 16 MiB.
	// SQLite's own 2 MiB makes full-text ranking at 10,000 tools re-read
	// pages from the OS on every query; every connection has its own
	// cache, outside the Go heap, so the resident cost is up to
	// MaxOpenConns times this (it was 32 MiB, 128 MiB in all).
	CacheSizeKiB int
	// Now is the clock used for timestamps; nil means time.Now.
	Now func() time.Time
}

// DefaultBusyTimeout is how long a write waits for the file's one writer
// lock. Within a process writers queue on a mutex; across processes (API
// replicas and workers on one file, in WAL mode so readers never wait)
// only this timeout orders them, and it outlasts by far the longest write
// transaction Toolsmith makes (a batch registration), with room for a
// slow disk.
const DefaultBusyTimeout = 15 * time.Second

// Store is the SQLite implementation of graph.Store.
type Store struct {
	db  *sql.DB
	ro  bool
	now func() time.Time
	mem *memIndex
	// text mirrors tools_fts for ranking (see textIndex).
	text *textIndex

	// writeMu serialises writers: SQLite has a single writer anyway, and
	// holding it from BEGIN to the in-memory update keeps the memory index
	// in commit order.
	writeMu sync.Mutex
	// marks are how far the memory follows the file (Refresh); guarded by
	// writeMu.
	marks followMarks

	// df caches full-text document frequencies for query-term pruning.
	dfMu sync.Mutex
	df   map[string]int

	// stmts caches prepared read statements by SQL text (parsing a query
	// costs as much as running a small one); bounded by maxCachedStmts.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt

	infoMu sync.RWMutex
	info   graph.EmbedderInfo // zero until EnsureEmbedder
}

var _ graph.Store = (*Store)(nil)

// ErrReadOnly is returned by writes on a store opened with Options.ReadOnly.
var ErrReadOnly = errors.New("store is read-only")

// Open opens (creating and migrating when needed) the store at path, a file
// name. It loads every embedding and usage centroid into memory.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("sqlite: open: empty path: %w", fault.ErrInvalid)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	cache := opts.CacheSizeKiB
	if cache <= 0 {
		cache = 16 << 10
	}
	q.Add("_pragma", "cache_size(-"+strconv.Itoa(cache)+")")
	if opts.ReadOnly {
		q.Set("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	dsn := "file:" + path + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	conns := opts.MaxOpenConns
	if conns <= 0 {
		conns = 4
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	s := &Store{db: db, ro: opts.ReadOnly, now: opts.Now, mem: newMemIndex(), text: newTextIndex()}
	if s.now == nil {
		s.now = time.Now
	}
	ctx := context.Background()
	if opts.ReadOnly {
		v, err := currentVersion(ctx, db)
		if err != nil {
			db.Close()
			return nil, err
		}
		if v != schemaVersion {
			db.Close()
			return nil, fmt.Errorf("sqlite: open %q read-only: schema version %d, want %d", path, v, schemaVersion)
		}
	} else if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	if s.text.tok, err = openTokenizer(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.load(ctx); err != nil {
		s.text.tok.close()
		db.Close()
		return nil, err
	}
	return s, nil
}

// load fills the embedder info and the in-memory index from the database.
func (s *Store) load(ctx context.Context) error {
	info, err := s.readEmbedder(ctx)
	if err != nil && !errors.Is(err, fault.ErrNotFound) {
		return err
	}
	s.info = info
	// The marks are read before the rows: a write committed in between is
	// then both loaded and seen again by the first Refresh, which
	// recognises it (never missed).
	if s.marks, err = readMarks(ctx, s.db); err != nil {
		return fmt.Errorf("sqlite: load: %w", err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM tools`).Scan(&n); err != nil {
		return fmt.Errorf("sqlite: load tools: %w", err)
	}
	s.mem.reserve(n, info.Dimension)
	rows, err := s.db.QueryContext(ctx, `SELECT seq, summary, embedding FROM tools ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("sqlite: load tools: %w", err)
	}
	defer rows.Close()
	ids := make(map[int64]string, n)
	var vec []float32 // one buffer for every row: the index copies it
	for rows.Next() {
		var seq int64
		var sumJSON, blob sql.RawBytes
		if err := rows.Scan(&seq, &sumJSON, &blob); err != nil {
			return fmt.Errorf("sqlite: load tools: %w", err)
		}
		var sum graph.ToolSummary
		if err := json.Unmarshal(sumJSON, &sum); err != nil {
			return fmt.Errorf("sqlite: load tools: %w", err)
		}
		var unit []float32
		if blob != nil {
			vec = decodeVecInto(vec, blob)
			unit = graph.NormalizeInPlace(vec)
		}
		s.mem.put(sum, unit)
		ids[seq] = sum.ID
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: load tools: %w", err)
	}
	s.text.loadBackground(ctx, s.db, ids)
	if err := s.loadUsage(ctx, nil); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

// maxCachedStmts bounds the statement cache: filters with IN-lists of many
// different lengths produce many SQL texts, and those beyond the bound are
// prepared per call.
const maxCachedStmts = 256

// query runs a read query through the statement cache.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s.stmtMu.Lock()
	st, ok := s.stmts[q]
	if !ok && len(s.stmts) < maxCachedStmts {
		var err error
		if st, err = s.db.PrepareContext(ctx, q); err != nil {
			s.stmtMu.Unlock()
			return nil, err
		}
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts[q] = st
		ok = true
	}
	s.stmtMu.Unlock()
	if !ok {
		return s.db.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

// Loaded is closed once the indexes that Open leaves loading in the
// background (the text index) have loaded: the server hands that load's
// garbage back to the OS then.
func (s *Store) Loaded() <-chan struct{} {
	return s.text.done()
}

// Close releases the database.
func (s *Store) Close() error {
	if s.text != nil {
		s.text.wait() // a background load reads the database
	}
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	if s.text != nil && s.text.tok != nil {
		s.text.tok.close()
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}

func (s *Store) writable(op string) error {
	if s.ro {
		return fmt.Errorf("sqlite: %s: %w", op, ErrReadOnly)
	}
	return nil
}

// ---- embedder ----

func (s *Store) readEmbedder(ctx context.Context) (graph.EmbedderInfo, error) {
	var model, dim string
	err := s.db.QueryRowContext(ctx,
		`SELECT (SELECT value FROM meta WHERE key='embedder_model'), (SELECT value FROM meta WHERE key='embedder_dimension')`).
		Scan(&sqlNullString{&model}, &sqlNullString{&dim})
	if err != nil {
		return graph.EmbedderInfo{}, fmt.Errorf("sqlite: read embedder: %w", err)
	}
	if model == "" {
		return graph.EmbedderInfo{}, fmt.Errorf("sqlite: embedder: %w", fault.ErrNotFound)
	}
	d, err := strconv.Atoi(dim)
	if err != nil {
		return graph.EmbedderInfo{}, fmt.Errorf("sqlite: embedder dimension %q: %w", dim, err)
	}
	return graph.EmbedderInfo{Model: model, Dimension: d}, nil
}

// sqlNullString scans a nullable TEXT into a string ("" for NULL).
type sqlNullString struct{ p *string }

func (n *sqlNullString) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.p = ""
	case string:
		*n.p = x
	case []byte:
		*n.p = string(x)
	default:
		*n.p = fmt.Sprint(x)
	}
	return nil
}

// EnsureEmbedder records info on first use and refuses a different one later.
func (s *Store) EnsureEmbedder(ctx context.Context, info graph.EmbedderInfo) error {
	if info.Model == "" || info.Dimension <= 0 {
		return fmt.Errorf("sqlite: ensure embedder %q/%d: %w", info.Model, info.Dimension, fault.ErrInvalid)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.infoMu.RLock()
	cur := s.info
	s.infoMu.RUnlock()
	if cur.Model != "" {
		if cur != info {
			return fmt.Errorf("sqlite: store was built with embedder %q (dimension %d) but %q (dimension %d) was requested; reindex the store: %w",
				cur.Model, cur.Dimension, info.Model, info.Dimension, graph.ErrEmbedderMismatch)
		}
		return nil
	}
	if err := s.writable("ensure embedder"); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: ensure embedder: %w", err)
	}
	defer tx.Rollback()
	// Another process on the same file may have recorded one since this
	// store was opened: that one is the store's.
	var model, dim string
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key='embedder_model'), (SELECT value FROM meta WHERE key='embedder_dimension')`).
		Scan(&sqlNullString{&model}, &sqlNullString{&dim}); err != nil {
		return fmt.Errorf("sqlite: ensure embedder: %w", err)
	}
	if model != "" {
		d, _ := strconv.Atoi(dim)
		cur = graph.EmbedderInfo{Model: model, Dimension: d}
		s.infoMu.Lock()
		s.info = cur
		s.infoMu.Unlock()
		if cur != info {
			return fmt.Errorf("sqlite: store was built with embedder %q (dimension %d) but %q (dimension %d) was requested; reindex the store: %w",
				cur.Model, cur.Dimension, info.Model, info.Dimension, graph.ErrEmbedderMismatch)
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('embedder_model', ?), ('embedder_dimension', ?)`,
		info.Model, strconv.Itoa(info.Dimension)); err != nil {
		return fmt.Errorf("sqlite: ensure embedder: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: ensure embedder: %w", err)
	}
	s.infoMu.Lock()
	s.info = info
	s.infoMu.Unlock()
	return nil
}

// Embedder returns the recorded embedder or fault.ErrNotFound.
func (s *Store) Embedder(ctx context.Context) (graph.EmbedderInfo, error) {
	s.infoMu.RLock()
	defer s.infoMu.RUnlock()
	if s.info.Model == "" {
		return graph.EmbedderInfo{}, fmt.Errorf("sqlite: embedder: %w", fault.ErrNotFound)
	}
	return s.info, nil
}

// checkDim validates a vector against the recorded dimension.
func (s *Store) checkDim(op string, v []float32) error {
	s.infoMu.RLock()
	dim := s.info.Dimension
	s.infoMu.RUnlock()
	if dim == 0 {
		return fmt.Errorf("sqlite: %s: no embedder recorded (call EnsureEmbedder): %w", op, graph.ErrDimension)
	}
	if len(v) != dim {
		return fmt.Errorf("sqlite: %s: vector has %d dimensions, store has %d: %w", op, len(v), dim, graph.ErrDimension)
	}
	return nil
}

// ---- vectors ----

// encodeVec stores a vector as little-endian float32.
func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	return decodeVecInto(nil, b)
}

// decodeVecInto decodes b into buf's array when it is large enough.
func decodeVecInto(buf []float32, b []byte) []float32 {
	v := slices.Grow(buf[:0], len(b)/4)[:len(b)/4]
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// ---- filters in SQL ----

// filterSQL renders the pushed-down fields of f over the tools alias a.
func filterSQL(f graph.Filter, a string) (string, []any) {
	var conds []string
	var args []any
	in := func(col string, xs []string) {
		ph := make([]string, len(xs))
		for i, x := range xs {
			ph[i] = "?"
			args = append(args, x)
		}
		conds = append(conds, a+"."+col+" IN ("+strings.Join(ph, ",")+")")
	}
	in("status", statuses(f))
	if len(f.Categories) > 0 {
		in("category", f.Categories)
	}
	if len(f.IDs) > 0 {
		in("id", f.IDs)
	}
	if len(f.Modules) > 0 {
		conds = append(conds, moduleSQL(a)+" IN ("+strings.Repeat("?,", len(f.Modules)-1)+"?)")
		for _, m := range f.Modules {
			args = append(args, m)
		}
	}
	return strings.Join(conds, " AND "), args
}

// moduleSQL is graph.ModuleOf over the tools alias a: the stored module or,
// for a tool that names none, the part of its id before the first ".", ""
// without one. Matching the stored column alone left out every onboarded
// wrapper, which a caller limited to its namespace sees.
func moduleSQL(a string) string {
	return "(CASE WHEN " + a + ".module <> '' THEN " + a + ".module WHEN instr(" + a + ".id, '.') > 0 THEN substr(" + a + ".id, 1, instr(" + a + ".id, '.') - 1) ELSE '' END)"
}
