package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/toolsmith/toolsmith/internal/config"
)

// newLogger returns the process logger: text records on w at cfg's level.
func newLogger(cfg config.Config, w io.Writer) (*slog.Logger, error) {
	level, err := cfg.Level()
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), nil
}

// readiness tracks what the process still waits for before it can serve:
// each part (demo catalogue, Temporal server, worker, …) is named by wait
// and cleared by done. check is the API's readiness function.
type readiness struct {
	mu       sync.Mutex
	waiting  []string
	stopping bool
}

func newReadiness(parts ...string) *readiness { return &readiness{waiting: slices.Clone(parts)} }

func (r *readiness) wait(part string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.waiting, part) {
		r.waiting = append(r.waiting, part)
	}
}

func (r *readiness) done(part string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = slices.DeleteFunc(r.waiting, func(p string) bool { return p == part })
}

// stop marks the process as shutting down: not ready any more.
func (r *readiness) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopping = true
}

func (r *readiness) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.stopping:
		return errors.New("shutting down")
	case len(r.waiting) > 0:
		return fmt.Errorf("waiting for %s", strings.Join(r.waiting, ", "))
	}
	return nil
}

// group runs the process's long-lived components (HTTP server, later the
// Temporal server and worker) until its context ends or one of them
// returns; the first to return cancels the others. Wait returns the first
// error.
type group struct {
	cancel context.CancelFunc
	log    *slog.Logger
	wg     sync.WaitGroup
	once   sync.Once
	err    error
}

func newGroup(ctx context.Context, log *slog.Logger) (*group, context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	return &group{cancel: cancel, log: log}, ctx
}

// Go starts a component. f must return when ctx is cancelled; returning
// earlier, even with nil, stops the whole group (a component that ends on
// its own is a failure of the process).
func (g *group) Go(ctx context.Context, name string, f func(context.Context) error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		err := f(ctx)
		if err == nil && ctx.Err() == nil {
			err = fmt.Errorf("%s stopped unexpectedly", name)
		}
		if err != nil {
			g.log.Error("component failed", "component", name, "err", err)
			g.once.Do(func() { g.err = fmt.Errorf("%s: %w", name, err) })
		} else {
			g.log.Debug("component stopped", "component", name)
		}
		g.cancel()
	}()
}

// Wait waits for every component and returns the first failure.
func (g *group) Wait() error {
	g.wg.Wait()
	g.cancel()
	return g.err
}

// openCommand builds a serving command's logger and opens the system; the
// caller closes sys.
func openCommand(ctx context.Context, e *env, cfg config.Config) (*slog.Logger, *system, error) {
	log, err := newLogger(cfg, e.stderr)
	if err != nil {
		return nil, nil, err
	}
	sys, err := openSystem(ctx, cfg, log, e.stderr)
	if err != nil {
		return nil, nil, err
	}
	return log, sys, nil
}

// openSharedCommand is openCommand for a process that shares the data dir
// with others (api, worker): it takes the shared lock first (lockStore).
// done closes the system and then releases the lock.
func openSharedCommand(ctx context.Context, e *env, cfg config.Config, command string) (*slog.Logger, *system, func(), error) {
	lock, err := lockStore(cfg, command)
	if err != nil {
		return nil, nil, nil, err
	}
	log, sys, err := openCommand(ctx, e, cfg)
	if err != nil {
		_ = lock.Release()
		return nil, nil, nil, err
	}
	return log, sys, func() {
		closeSystem(sys, log)
		_ = lock.Release()
	}, nil
}

// closeSystem closes the system, logging a failure (used in defers).
func closeSystem(sys *system, log *slog.Logger) {
	if err := sys.Close(); err != nil {
		log.Error("close", "err", err)
	}
}
