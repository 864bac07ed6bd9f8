package cli

import (
	"errors"
	"fmt"

	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/datadir"
)

// lockDataDir takes the data dir for this dev process: dev owns everything
// in it (the store, Temporal's history, the airlock's wrappers and ledger),
// so a second process on the same dir is refused, naming the first.
func lockDataDir(cfg config.Config) (*datadir.Lock, error) {
	return acquireDataDir(cfg, datadir.Holder{
		Command: "toolsmith dev",
		Addrs:   map[string]string{"API": cfg.HTTPAddr, "Temporal": cfg.Temporal.Addr, "Web UI": cfg.Temporal.UIAddr},
	}, " and free ports with --http-addr, --temporal-addr and --ui-addr")
}

// lockStore takes the data dir for a process that opens the store in it
// (api, worker, keys without --url). With --store sqlite the lock is
// shared: API replicas and workers may open one SQLite file (WAL mode; a
// busy timeout for the writer lock; each follows the others' writes, see
// docs/storage.md), but not while dev holds the dir, which owns everything
// in it, and dev is refused while they run. A nil lock (nothing to
// release) with --store neo4j, where the store is a server.
func lockStore(cfg config.Config, command string) (*datadir.Lock, error) {
	if cfg.Store == config.StoreNeo4j {
		return nil, nil
	}
	lock, err := datadir.AcquireShared(cfg.DataDir)
	if errors.Is(err, datadir.ErrLocked) {
		return nil, fmt.Errorf("--data-dir: %w: %s cannot share it; stop that process, or give this one a data dir of its own with --data-dir (%s); or use --store neo4j, a server more than one process may share",
			err, command, config.EnvName("data-dir"))
	}
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", cfg.DataDir, err)
	}
	return lock, nil
}

// acquireDataDir takes cfg.DataDir's lock for h; a dir another process
// holds is an error naming that process and the ways out (more adds one).
func acquireDataDir(cfg config.Config, h datadir.Holder, more string) (*datadir.Lock, error) {
	lock, err := datadir.Acquire(cfg.DataDir, h)
	if errors.Is(err, datadir.ErrLocked) {
		return nil, fmt.Errorf("--data-dir: %w: stop that process, or give this one a data dir of its own with --data-dir (%s)%s", err, config.EnvName("data-dir"), more)
	}
	if err != nil {
		return nil, fmt.Errorf("--data-dir %s: %w", cfg.DataDir, err)
	}
	return lock, nil
}
