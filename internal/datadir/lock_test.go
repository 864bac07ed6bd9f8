package datadir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/internal/datadir"
)

// TestSecondLockNamesTheHolder: while one Lock holds a dir, a second is a
// LockedError naming the holder's pid, command and addresses; once released,
// the dir can be locked again.
func TestSecondLockNamesTheHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := datadir.Acquire(dir, datadir.Holder{Command: "toolsmith dev", Addrs: map[string]string{"API": "127.0.0.1:8080", "Temporal": "127.0.0.1:7233"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = datadir.Acquire(dir, datadir.Holder{Command: "toolsmith dev"})
	var locked *datadir.LockedError
	if !errors.As(err, &locked) || !errors.Is(err, datadir.ErrLocked) {
		t.Fatalf("second lock: err = %v, want a LockedError", err)
	}
	if locked.Holder.PID != os.Getpid() || locked.Dir != dir {
		t.Fatalf("holder %+v of %s", locked.Holder, locked.Dir)
	}
	for _, want := range []string{dir, "pid " + strconv.Itoa(os.Getpid()), "toolsmith dev", "API 127.0.0.1:8080", "Temporal 127.0.0.1:7233", "since "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := datadir.Acquire(dir, datadir.Holder{Command: "toolsmith dev"})
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if err := again.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestStaleFileDoesNotBlock: a lock file left by a process that died
// (its record still there, its lock gone with it) does not block a start.
func TestStaleFileDoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, datadir.LockFile), []byte(`{"pid": 99999999, "command": "toolsmith dev"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := datadir.Acquire(dir, datadir.Holder{Command: "toolsmith dev"})
	if err != nil {
		t.Fatalf("a stale lock file blocked: %v", err)
	}
	_ = l.Release()
}

// TestSharedLocks: shared holders coexist; an exclusive lock is refused
// while they hold the dir, and a shared one while an exclusive holder
// does, naming it.
func TestSharedLocks(t *testing.T) {
	dir := t.TempDir()
	a, err := datadir.AcquireShared(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := datadir.AcquireShared(dir)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	if _, err := datadir.Acquire(dir, datadir.Holder{Command: "toolsmith dev"}); !errors.Is(err, datadir.ErrLocked) {
		t.Fatalf("exclusive beside shared holders: %v", err)
	}
	_ = a.Release()
	_ = b.Release()
	ex, err := datadir.Acquire(dir, datadir.Holder{Command: "toolsmith dev"})
	if err != nil {
		t.Fatalf("exclusive once the shared holders left: %v", err)
	}
	defer ex.Release()
	if _, err := datadir.AcquireShared(dir); !errors.Is(err, datadir.ErrLocked) || !strings.Contains(err.Error(), "toolsmith dev") {
		t.Fatalf("shared while dev holds the dir: %v", err)
	}
}
