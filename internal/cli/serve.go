package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/api"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/retrieval"
)

// serveOptions configure serve.
type serveOptions struct {
	// ready is the process's readiness; the API's /healthz follows it.
	ready *readiness
	// setup runs once the API listens, before the process reports ready
	// (dev loads the demo catalogue here). Long-lived components are
	// started on g.
	setup func(ctx context.Context, g *group) error
	// urls adds lines to the ready banner beside the API's.
	urls func(base string) []string
	// mounters add routes beside the system's (the Temporal-backed ones).
	mounters []httpx.Mounter
	// handlers are served outside /api/v1 (the MCP endpoint).
	handlers []api.Handler
}

// addrFree reports a --http-addr another process listens on, by listening
// on it once (and closing at once): serve listens for real later, once
// everything it serves is open.
func addrFree(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", addr, err)
	}
	return ln.Close()
}

// serve listens on the configured address, serves the API with the
// system's routes, runs setup, prints where everything is and then runs
// until ctx ends (SIGINT/SIGTERM) or a component fails, shutting every
// component down gracefully.
func serve(ctx context.Context, e *env, sys *system, log *slog.Logger, opts serveOptions) error {
	if opts.ready == nil {
		opts.ready = newReadiness()
	}
	if err := ensureOwnerKey(ctx, e, sys); err != nil {
		return err
	}
	if _, set := e.lookupEnv("GOMEMLIMIT"); !set && sys.cfg.MemoryLimit > 0 {
		debug.SetMemoryLimit(sys.cfg.MemoryLimit)
		log.Info("memory limit", "bytes", sys.cfg.MemoryLimit, "flag", "--memory-limit")
	}
	ln, err := net.Listen("tcp", sys.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on --http-addr %s: %w", sys.cfg.HTTPAddr, err)
	}
	// The address the banner shows is the one clients are told about (a
	// 401's resource_metadata URL), whatever Host header they send.
	base := "http://" + displayAddr(ln.Addr())
	a := sys.cfg.Auth
	srv := api.New(api.Options{
		BaseURL: base,
		Logger:  log, Ready: opts.ready.check, Version: version,
		Auth: sys.auth, Audit: sys.audit, Metrics: sys.metrics,
		Limits:   api.Limits{MaxBodyBytes: a.MaxBodyBytes},
		Limiter:  sys.limiter, // the rate limits, shared with the MCP edge
		Proxies:  sys.proxies,
		Handlers: opts.handlers,
	}, append(sys.mounters(), opts.mounters...)...)
	g, gctx := newGroup(ctx, log)
	g.Go(gctx, "http", func(ctx context.Context) error { return srv.Serve(ctx, ln) })
	followRanking(gctx, g, sys, log)
	followStore(gctx, g, sys, log)
	if opts.setup != nil {
		if err := opts.setup(gctx, g); err != nil {
			g.cancel()
			if werr := g.Wait(); werr != nil {
				log.Error("shutdown after failed start-up", "err", werr)
			}
			return err
		}
	}
	if err := opts.ready.check(); err != nil && gctx.Err() == nil {
		log.Warn("started but not ready", "reason", err)
	}
	if gctx.Err() == nil {
		printBanner(e.stdout, base, opts.urls)
		if e.onReady != nil {
			e.onReady(base)
		}
	}
	<-gctx.Done()
	opts.ready.stop()
	log.Info("shutting down")
	return g.Wait()
}

// displayAddr turns a listener address into one a browser can open: an
// unspecified host (0.0.0.0, ::) becomes 127.0.0.1.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	host := tcp.IP.String()
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

func printBanner(w io.Writer, base string, extra func(string) []string) {
	fmt.Fprintf(w, "\nToolsmith %s is ready.\n", version)
	fmt.Fprintf(w, "  API      %s/api/v1\n", base)
	fmt.Fprintf(w, "  Tools    %s/api/v1/tools\n", base)
	fmt.Fprintf(w, "  Health   %s/healthz\n", base)
	if extra != nil {
		for _, l := range extra(base) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	fmt.Fprintln(w, "Press Ctrl+C to stop.")
}

// warmUp ranks one query before the server reports ready, so the first
// planner's search does not pay for loading the embedder, the usage memory
// and the index mirrors (Rank, not Search: nothing enters the result
// cache).
func warmUp(ctx context.Context, sys *system) error {
	if sys.retrieval == nil {
		return nil
	}
	owner := access.Caller{Level: "owner", Groups: []string{access.Wildcard}}
	_, _, err := sys.retrieval.Rank(ctx, retrieval.Query{Text: "warm up the search path", Caller: owner})
	if err != nil {
		return fmt.Errorf("search warm-up: %w", err)
	}
	// The manifests' token estimates, which a search's context assembly
	// needs for every visible tool, fill after ready, not before.
	end := sys.loads.Begin()
	go func() {
		defer end() // a burst of work like any other: its garbage's pages go back
		if err := sys.retrieval.WarmCatalogue(ctx, owner); err != nil && ctx.Err() == nil {
			sys.log.Warn("search warm-up: the catalogue's token estimates", "err", err)
		}
		// So is the store's background load (the SQLite text index): its
		// garbage goes back once it ends, not at the next search.
		if l, ok := sys.store.(interface{ Loaded() <-chan struct{} }); ok {
			select {
			case <-l.Loaded():
			case <-ctx.Done():
			}
		}
	}()
	// Loading the model and the catalogue leaves garbage the size of the
	// live heap; hand its pages back before reporting ready.
	debug.FreeOSMemory()
	return nil
}
