package neo4j

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	neo4jdriver "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// ErrTransient marks an error the driver classifies as retryable (a lost
// connection, a leader switch, a deadlock) that persisted after the driver's
// own transaction retries. Callers may retry the whole operation later; it is
// wrapped together with the driver's error.
var ErrTransient = errors.New("transient neo4j error")

// Config is what Open needs to reach a Neo4j server.
type Config struct {
	URI      string // e.g. neo4j://localhost:7687
	User     string
	Password string
	Database string // "" = the server's default database
}

// Validate reports a missing URI.
func (c Config) Validate() error {
	if strings.TrimSpace(c.URI) == "" {
		return fmt.Errorf("neo4j: config: empty URI: %w", fault.ErrInvalid)
	}
	return nil
}

// Store is the Neo4j implementation of graph.Store. It is safe for
// concurrent use.
type Store struct {
	r   runner
	now func() time.Time
	// awaitSeconds bounds how long schema changes wait for new indexes.
	awaitSeconds int

	infoMu sync.RWMutex
	info   graph.EmbedderInfo // zero until known

	meanMu    sync.Mutex // guards the MeanVector cache
	mean      []float32
	meanAt    time.Time
	meanStale bool

	// follow is what Refresh has seen (follow.go).
	follow follower
}

var (
	_ graph.Store        = (*Store)(nil)
	_ graph.MeanVectorer = (*Store)(nil)
	_ graph.VectorScorer = (*Store)(nil)
)

// New returns a store on driver and database ("" = default database). It
// does no I/O: call EnsureSchema once before use (Open does). The store owns
// the driver from now on: Close closes it.
func New(driver neo4jdriver.DriverWithContext, database string) *Store {
	return newStore(&driverRunner{driver: driver, database: database})
}

func newStore(r runner) *Store {
	return &Store{r: r, now: time.Now, awaitSeconds: 300}
}

// Open connects to the server of cfg, verifies connectivity and creates the
// constraints and the full-text index when missing.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	drv, err := neo4jdriver.NewDriverWithContext(cfg.URI, neo4jdriver.BasicAuth(cfg.User, cfg.Password, ""))
	if err != nil {
		return nil, fmt.Errorf("neo4j: open %q: %w", cfg.URI, err)
	}
	if err := drv.VerifyConnectivity(ctx); err != nil {
		_ = drv.Close(ctx)
		return nil, wrapErr(fmt.Sprintf("open %q", cfg.URI), err)
	}
	s := New(drv, cfg.Database)
	if err := s.EnsureSchema(ctx); err != nil {
		_ = drv.Close(ctx)
		return nil, err
	}
	return s, nil
}

// Close closes the driver.
func (s *Store) Close() error {
	if err := s.r.close(context.Background()); err != nil {
		return fmt.Errorf("neo4j: close: %w", err)
	}
	return nil
}

// wrapErr prefixes err with the operation and classifies driver errors:
// retryable ones also wrap ErrTransient, and server "not found" errors
// (unknown database, index, …) also wrap fault.ErrNotFound. Errors that
// already carry a sentinel are only prefixed.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	for _, sentinel := range []error{fault.ErrNotFound, fault.ErrInvalid, fault.ErrConflict, graph.ErrDimension, graph.ErrEmbedderMismatch} {
		if errors.Is(err, sentinel) {
			return fmt.Errorf("neo4j: %s: %w", op, err)
		}
	}
	if neo4jdriver.IsRetryable(err) {
		return fmt.Errorf("neo4j: %s: %w: %w", op, ErrTransient, err)
	}
	var ne *neo4jdriver.Neo4jError
	if errors.As(err, &ne) && strings.Contains(ne.Code, "NotFound") {
		return fmt.Errorf("neo4j: %s: %w: %w", op, fault.ErrNotFound, err)
	}
	return fmt.Errorf("neo4j: %s: %w", op, err)
}

// schemaStatements are run by EnsureSchema, in order.
var schemaStatements = []string{
	cypherConstraintTool,
	cypherConstraintVerb,
	cypherConstraintEntity,
	cypherConstraintCategory,
	cypherConstraintTag,
	cypherConstraintGroup,
	cypherConstraintModule,
	cypherConstraintMeta,
	cypherConstraintSource,
	cypherConstraintDefinition,
	cypherConstraintAPIKey,
	cypherIndexKeyRevoked,
	cypherConstraintAudit,
	cypherIndexAuditAt,
	cypherConstraintGap,
	cypherConstraintModelVersion,
	cypherConstraintPairSession,
	cypherIndexPairSessionCaller,
	cypherConstraintSeries,
	cypherConstraintSession,
	cypherConstraintRateCount,
	cypherIndexRateCountWindow,
	cypherConstraintCall,
	cypherConstraintCallLedger,
	cypherIndexCallApproval,
	cypherConstraintWrapperApproval,
	cypherIndexNoticeTopic,
	cypherIndexDefinitionSpec,
	cypherIndexToolStatus,
	cypherIndexToolUpdated,
	cypherIndexRevision,
	cypherIndexUsageSession,
	cypherIndexUsageAt,
	cypherIndexUsageOrdinal,
	cypherIndexUsageUser,
	cypherIndexToolText,
}

// EnsureSchema creates the uniqueness constraints, the property indexes and
// the full-text index when missing, and waits until they are online. The
// vector indexes need the embedder's dimension: EnsureEmbedder creates them.
// It is idempotent.
func (s *Store) EnsureSchema(ctx context.Context) error {
	for _, q := range schemaStatements {
		if err := s.runWrite(ctx, q, nil); err != nil {
			return wrapErr("ensure schema", err)
		}
	}
	return s.awaitIndexes(ctx, "ensure schema")
}

func (s *Store) awaitIndexes(ctx context.Context, op string) error {
	if err := s.runWrite(ctx, cypherAwaitIndexes, map[string]any{"seconds": int64(s.awaitSeconds)}); err != nil {
		return wrapErr(op+": await indexes", err)
	}
	return nil
}

// runWrite runs one statement in its own write transaction.
func (s *Store) runWrite(ctx context.Context, q string, params map[string]any) error {
	return s.r.write(ctx, func(tx txRunner) error {
		_, err := tx.run(ctx, q, params)
		return err
	})
}

// Reset deletes every node of the database and drops every constraint and
// index (including those of other applications sharing the database), then
// recreates Toolsmith's schema. It exists for tests and for rebuilding a store
// with a different embedder; it is not part of graph.Store.
func (s *Store) Reset(ctx context.Context) error {
	if err := s.runWrite(ctx, cypherDropAllNodes, nil); err != nil {
		return wrapErr("reset: delete nodes", err)
	}
	for _, step := range []struct{ show, dropFmt string }{
		{cypherShowConstraints, cypherDropConstraintFmt},
		{cypherShowIndexes, cypherDropIndexFmt},
	} {
		var names []string
		err := s.r.read(ctx, func(tx txRunner) error {
			recs, err := tx.run(ctx, step.show, nil)
			if err != nil {
				return err
			}
			names = names[:0]
			for _, r := range recs {
				n, err := getString(r, "name")
				if err != nil {
					return err
				}
				names = append(names, n)
			}
			return nil
		})
		if err != nil {
			return wrapErr("reset: list schema", err)
		}
		for _, n := range names {
			if err := s.runWrite(ctx, fmt.Sprintf(step.dropFmt, quoteName(n)), nil); err != nil {
				return wrapErr(fmt.Sprintf("reset: drop %q", n), err)
			}
		}
	}
	s.infoMu.Lock()
	s.info = graph.EmbedderInfo{}
	s.infoMu.Unlock()
	s.meanMu.Lock()
	s.mean, s.meanAt = nil, time.Time{}
	s.meanMu.Unlock()
	return s.EnsureSchema(ctx)
}

// ---- embedder ----

// EnsureEmbedder records info on first call and creates the two vector
// indexes with its dimension; a later call with a different model or
// dimension returns graph.ErrEmbedderMismatch.
func (s *Store) EnsureEmbedder(ctx context.Context, info graph.EmbedderInfo) error {
	if info.Model == "" || info.Dimension <= 0 {
		return fmt.Errorf("neo4j: ensure embedder %q/%d: %w", info.Model, info.Dimension, fault.ErrInvalid)
	}
	var cur graph.EmbedderInfo
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherEnsureEmbedder, map[string]any{"model": info.Model, "dimension": int64(info.Dimension)})
		if err != nil {
			return err
		}
		if len(recs) != 1 {
			return fmt.Errorf("embedder meta: %d records", len(recs))
		}
		cur, err = decodeEmbedder(recs[0])
		return err
	})
	if err != nil {
		return wrapErr("ensure embedder", err)
	}
	if cur != info {
		return fmt.Errorf("neo4j: store was built with embedder %q (dimension %d) but %q (dimension %d) was requested; reindex the store: %w",
			cur.Model, cur.Dimension, info.Model, info.Dimension, graph.ErrEmbedderMismatch)
	}
	// Idempotent (IF NOT EXISTS), so a store whose indexes were dropped
	// gets them back on the next start.
	for _, q := range vectorIndexStatements(info.Dimension) {
		if err := s.runWrite(ctx, q, nil); err != nil {
			return wrapErr("ensure embedder: vector index", err)
		}
	}
	if err := s.awaitIndexes(ctx, "ensure embedder"); err != nil {
		return err
	}
	s.infoMu.Lock()
	s.info = info
	s.infoMu.Unlock()
	return nil
}

func decodeEmbedder(r record) (graph.EmbedderInfo, error) {
	model, err := getString(r, "model")
	if err != nil {
		return graph.EmbedderInfo{}, err
	}
	dim, err := getInt(r, "dimension")
	if err != nil {
		return graph.EmbedderInfo{}, err
	}
	return graph.EmbedderInfo{Model: model, Dimension: int(dim)}, nil
}

// Embedder returns the recorded embedder, or fault.ErrNotFound.
func (s *Store) Embedder(ctx context.Context) (graph.EmbedderInfo, error) {
	s.infoMu.RLock()
	info := s.info
	s.infoMu.RUnlock()
	if info.Model != "" {
		return info, nil
	}
	found := false
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherGetEmbedder, nil)
		if err != nil {
			return err
		}
		found = len(recs) > 0
		if found {
			info, err = decodeEmbedder(recs[0])
		}
		return err
	})
	if err != nil {
		return graph.EmbedderInfo{}, wrapErr("embedder", err)
	}
	if !found || info.Model == "" {
		return graph.EmbedderInfo{}, fmt.Errorf("neo4j: embedder: %w", fault.ErrNotFound)
	}
	// The recorded embedder never changes short of Reset, so caching is safe.
	s.infoMu.Lock()
	s.info = info
	s.infoMu.Unlock()
	return info, nil
}

// checkDim validates a vector against the recorded dimension.
func (s *Store) checkDim(ctx context.Context, op string, v []float32) error {
	info, err := s.Embedder(ctx)
	if errors.Is(err, fault.ErrNotFound) {
		return fmt.Errorf("neo4j: %s: no embedder recorded (call EnsureEmbedder): %w", op, graph.ErrDimension)
	}
	if err != nil {
		return err
	}
	if len(v) != info.Dimension {
		return fmt.Errorf("neo4j: %s: vector has %d dimensions, store has %d: %w", op, len(v), info.Dimension, graph.ErrDimension)
	}
	return nil
}

// filterParams renders the pushed-down fields of f as the parameters of
// filterWhere.
func filterParams(f graph.Filter, params map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	st := f.Statuses
	if len(st) == 0 {
		st = []string{graph.StatusActive}
	}
	params["statuses"] = st
	params["categories"] = strs(f.Categories)
	params["ids"] = strs(f.IDs)
	params["modules"] = strs(f.Modules)
	return params
}

// allowedSummary decodes a row's "summary" and says whether f.Allow lets
// the caller see it (the rows a statement returns have passed the filter's
// pushed-down fields already).
func allowedSummary(r record, f graph.Filter) (graph.ToolSummary, bool, error) {
	sum, err := getSummary(r, "summary")
	if err != nil {
		return graph.ToolSummary{}, false, err
	}
	return sum, allow(f, sum), nil
}

// allow applies f.Allow to a copy of sum, so a careless callback cannot
// change what the store returns.
func allow(f graph.Filter, sum graph.ToolSummary) bool {
	if f.Allow == nil {
		return true
	}
	c := graph.CloneSummary(sum)
	return f.Allow(&c)
}
