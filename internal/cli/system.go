package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api/admin"
	"github.com/toolsmith/toolsmith/api/httpx"
	apiretrieval "github.com/toolsmith/toolsmith/api/retrieval"
	"github.com/toolsmith/toolsmith/api/tools"
	"github.com/toolsmith/toolsmith/audit"
	"github.com/toolsmith/toolsmith/embed"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/neo4j"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/memtrim"
	"github.com/toolsmith/toolsmith/metrics"
	"github.com/toolsmith/toolsmith/ratelimit"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
)

// system is the domain side of the process: store, embedder, registry and
// retrieval, built once and shared by every component.
type system struct {
	cfg       config.Config
	log       *slog.Logger
	store     graph.Store
	model     embed.Model
	registry  *registry.Service
	retrieval *retrieval.Service
	// retrain keeps the learned ranking model's versions in the store; nil
	// when it could not be built.
	retrain *retrain.Service
	// Identity and operations: keys, the authenticator, the audit log and
	// the process's metrics, shared by every edge.
	keys    *identity.KeyService
	auth    *identity.Authenticator
	audit   *audit.Log
	metrics *metrics.Metrics
	// limiter holds the per-caller rate limits REST and MCP both take from.
	limiter *ratelimit.Limiter
	// proxies are the reverse proxies every edge believes about a
	// client's address (--trusted-proxies).
	proxies identity.Proxies
	// trim returns freed heap pages to the OS once work has gone quiet
	// (after batch registrations, query embeddings and rankings).
	trim *memtrim.Trimmer
	// loads lowers the collector's target while the start-up's background
	// loads run (the text index, the MCP catalogue, the token estimates),
	// then arms the trim.
	loads *memtrim.Loads
	// sampler keeps the operations time series in the store.
	sampler *analytics.Sampler
	// caches hands the admins' cache invalidations to every replica.
	caches *cacheBroadcast

	hooksMu sync.RWMutex
	hooks   []func(toolID string)
}

// trimmingObserver records search metrics and, after a query embedding
// (the allocation-heavy part of a search) or a ranking that the result
// cache did not answer, arms the memory trim: when searches stop for a
// moment, the freed pages go back to the OS. Rankings count on their own:
// a repeated verb's query embedding is cached, but each run's recorded use
// clears the result cache, so the verb ranks again every time.
type trimmingObserver struct {
	*metrics.Metrics
	trim    *memtrim.Trimmer
	sampler *analytics.Sampler
}

func (o trimmingObserver) Embedding(d time.Duration) {
	o.Metrics.Embedding(d)
	o.trim.Soon()
}

func (o trimmingObserver) Search(strategy string, d time.Duration, cacheHit bool) {
	o.Metrics.Search(strategy, d, cacheHit)
	if o.sampler != nil {
		o.sampler.Search(strategy, d, cacheHit)
	}
	if !cacheHit {
		o.trim.Soon()
	}
}

// startupGCPercent is GOGC while the start-up's background loads run (see
// memtrim.Loads): at 100,000 tools the heap then peaks near 1.5 times the
// live heap instead of at the soft memory limit.
const startupGCPercent = 50

// toolChanged runs after every registry write: the retrieval caches that
// may hold the tool are invalidated, then every hook (the MCP catalogue).
func (s *system) toolChanged(id string) {
	s.retrieval.Invalidate(id)
	s.hooksMu.RLock()
	defer s.hooksMu.RUnlock()
	for _, h := range s.hooks {
		s.runHook(h, id)
	}
}

// runHook runs one hook, logging a panic instead of passing it on: the
// write the hook follows is already stored, so failing the request (or a
// batch) that made it would report a stored tool as not stored.
func (s *system) runHook(h func(string), id string) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("a hook after a registry write failed", "tool", id, "panic", r)
		}
	}()
	h(id)
}

// onToolChange adds a hook toolChanged runs.
func (s *system) onToolChange(h func(toolID string)) {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	s.hooks = append(s.hooks, h)
}

// openSystem builds the embedder (fetching the built-in one's weights on
// first use, with progress on progress), opens the store and checks that
// the store was built with this embedder.
func openSystem(ctx context.Context, cfg config.Config, log *slog.Logger, progress io.Writer) (*system, error) {
	model, err := openEmbedder(ctx, cfg, progress)
	if err != nil {
		return nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkEmbedder(ctx, cfg, store, model); err != nil {
		store.Close()
		return nil, err
	}
	log.Info("system open", "store", cfg.Store, "embedder", model.Name(), "dimension", model.Dimension())
	sys := &system{cfg: cfg, log: log, store: store, model: model, metrics: metrics.New()}
	sys.limiter = ratelimit.New(ratelimit.Config{SearchPerMinute: cfg.Auth.RateSearch, ExecutePerMinute: cfg.Auth.RateExecute,
		VerbsPerMinute: cfg.Auth.RateVerbs}, sys.metrics.RateLimited).Share(store, onceAMinute(func(err error) {
		log.Warn("rate limits: the store failed; counting in this process until it answers", "err", err)
	}))
	sys.proxies = cfg.Auth.TrustedProxies // parsed once, by the configuration
	if err := sys.openIdentity(ctx); err != nil {
		store.Close()
		return nil, err
	}
	sys.trim = memtrim.New(2 * time.Second)
	sys.loads = memtrim.NewLoads(startupGCPercent, sys.trim.Soon)
	sys.metrics.WatchTrims(sys.trim.Runs)
	sys.sampler = analytics.NewSampler(store, nil, graph.DefaultRetention)
	rank := retrieval.Options{Observer: trimmingObserver{sys.metrics, sys.trim, sys.sampler}}
	sys.retrieval = retrieval.New(store, model, rank)
	sys.caches = newCacheBroadcast(store, sys.retrieval)
	// The promoted ranking model (if any) applies from the first search:
	// a restart keeps what was promoted.
	if rs, err := retrain.New(store, model, sys.retrieval, rank); err == nil {
		sys.retrain = rs
		if err := rs.Load(ctx); err != nil {
			log.Warn("ranking model not loaded; ranking as configured", "err", err)
		} else if m := sys.retrieval.Model(); m != nil {
			log.Info("ranking model loaded", "version", m.Version)
		}
	}
	// Every registry write invalidates the retrieval caches that may hold the tool.
	sys.registry = registry.New(store, model, registry.WithOnChange(sys.toolChanged),
		registry.WithAfterBatch(func(int) { sys.trim.Soon() }))
	sys.metrics.WatchGroups(sys.groupCounts, 15*time.Second)
	return sys, nil
}

// openIdentity builds the key service, the authenticator (with OIDC when
// an issuer is configured) and the audit log over the store.
func (s *system) openIdentity(ctx context.Context) error {
	s.keys = identity.NewKeyService(s.store)
	s.audit = audit.New(s.store)
	s.auth = &identity.Authenticator{Keys: s.keys}
	if a := s.cfg.Auth; a.OIDCIssuer != "" {
		o, err := identity.NewOIDC(ctx, identity.OIDCConfig{
			Issuer: a.OIDCIssuer, Audience: a.OIDCAudience, JWKSURL: a.OIDCJWKSURL,
			LevelClaim: a.OIDCLevelClaim, RolesClaim: a.OIDCRolesClaim, GroupsClaim: a.OIDCGroupsClaim,
			DefaultLevel: a.OIDCDefaultLevel, MaxLevel: a.OIDCMaxLevel,
		})
		if err != nil {
			return fmt.Errorf("--oidc-issuer: %w", err)
		}
		s.auth.Tokens = o
		s.log.Info("OIDC bearer tokens accepted", "issuer", a.OIDCIssuer, "audience", a.OIDCAudience)
	}
	return nil
}

// groupCounts counts active tools per group for agent_tool_group_availability.
func (s *system) groupCounts(ctx context.Context) (map[string]int, error) {
	counts := map[string]int{}
	after := ""
	for {
		page, err := s.store.ListTools(ctx, graph.ListQuery{After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, t := range page.Items {
			groups := t.Groups
			if len(groups) == 0 {
				groups = []string{access.DefaultGroup}
			}
			for _, g := range groups {
				counts[g]++
			}
		}
		if page.Next == "" {
			return counts, nil
		}
		after = page.Next
	}
}

// mounters lists every feature's HTTP routes; a new feature adds a line.
func (s *system) mounters() []httpx.Mounter {
	return []httpx.Mounter{
		tools.New(s.registry),
		apiretrieval.New(s.retrieval).WithBroadcast(s.caches),
		admin.New(s.keys, s.audit),
	}
}

// Close releases the store.
func (s *system) Close() error {
	s.trim.Stop()
	if s.audit != nil {
		s.audit.Close() // writes the queued audit events first
	}
	if err := s.store.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// openStore opens the configured graph store.
func openStore(ctx context.Context, cfg config.Config) (graph.Store, error) {
	switch cfg.Store {
	case config.StoreNeo4j:
		st, err := neo4j.Open(ctx, neo4j.Config{URI: cfg.Neo4j.URI, User: cfg.Neo4j.User, Password: cfg.Neo4j.Password, Database: cfg.Neo4j.Database})
		if err != nil {
			return nil, fmt.Errorf("open neo4j store at %s: %w", cfg.Neo4j.URI, err)
		}
		return st, nil
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		st, err := sqlite.Open(cfg.StorePath(), sqlite.Options{})
		if err != nil {
			return nil, fmt.Errorf("open sqlite store %s: %w", cfg.StorePath(), err)
		}
		return st, nil
	}
}

// checkEmbedder records the embedder in a fresh store and refuses a store
// built with another model or dimension, saying what to do about it.
func checkEmbedder(ctx context.Context, cfg config.Config, store graph.Store, model embed.Model) error {
	want := graph.EmbedderInfo{Model: model.Name(), Dimension: model.Dimension()}
	err := store.EnsureEmbedder(ctx, want)
	if err == nil {
		return nil
	}
	if !errors.Is(err, graph.ErrEmbedderMismatch) {
		return fmt.Errorf("record embedder in store: %w", err)
	}
	where := "the store at " + cfg.StorePath()
	if cfg.Store == config.StoreNeo4j {
		where = "the Neo4j store at " + cfg.Neo4j.URI
	}
	have, herr := store.Embedder(ctx)
	built := "another embedder"
	if herr == nil {
		built = fmt.Sprintf("embedder %q (dimension %d)", have.Model, have.Dimension)
	}
	return fmt.Errorf("%s was built with %s, but this run uses %q (dimension %d); vectors of different models cannot be mixed. "+
		"Start with the embedder the store was built with (--embedder, --embedder-model), "+
		"or reindex: use another --data-dir (or an empty database) and register the tools again: %w",
		where, built, want.Model, want.Dimension, err)
}

// followRanking keeps this process's ranking on the promoted model version
// (retrain.Service.Follow): a promotion or rollback made by another
// process (a worker's scheduled retrain, another replica's admin route)
// applies here within retrain.DefaultFollowEvery.
func followRanking(ctx context.Context, g *group, sys *system, log *slog.Logger) {
	if sys.retrain == nil {
		return
	}
	g.Go(ctx, "ranking model", func(ctx context.Context) error {
		sys.retrain.Follow(ctx, retrain.DefaultFollowEvery, func(err error) {
			log.Warn("ranking model: reading the promoted version failed; keeping the one applied", "err", err)
		})
		return nil
	})
}

// followStore keeps this process's indexes and caches on the store's
// writes made by other processes (graph.Follow): another API replica's or
// a worker's registration, re-description or status change is searchable,
// or gone, here within about graph.FollowEvery (docs/storage.md states the
// bound), and each changed tool goes through toolChanged as this
// process's own registry writes do (retrieval caches, MCP catalogue).
func followStore(ctx context.Context, g *group, sys *system, log *slog.Logger) {
	g.Go(ctx, "store follower", func(ctx context.Context) error {
		graph.Follow(ctx, sys.store, graph.FollowEvery, func(ids []string) {
			for _, id := range ids {
				sys.toolChanged(id)
			}
		}, onceAMinute(func(err error) {
			log.Warn("following the store's writes failed; retrying every second", "err", err)
		}))
		return nil
	})
	// An admin's cache invalidation on another replica clears this one's
	// cache within the same bound.
	g.Go(ctx, "cache invalidation follower", func(ctx context.Context) error {
		sys.caches.follow(ctx, graph.FollowEvery, onceAMinute(func(err error) {
			log.Warn("following the cache invalidations failed; retrying every second", "err", err)
		}))
		return nil
	})
}

// onceAMinute calls f with the first error of each minute and drops the
// others, so a failing store does not log once per request.
func onceAMinute(f func(error)) func(error) {
	var mu sync.Mutex
	var last time.Time
	return func(err error) {
		mu.Lock()
		due := time.Since(last) >= time.Minute
		if due {
			last = time.Now()
		}
		mu.Unlock()
		if due {
			f(err)
		}
	}
}
