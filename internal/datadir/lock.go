package datadir

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// LockFile is the lock's file name inside the data dir.
const LockFile = "toolsmith.lock"

// Holder describes the process that holds a data dir.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	// Addrs are the holder's listen addresses by what they serve
	// ("API": "127.0.0.1:8080").
	Addrs map[string]string `json:"addrs,omitempty"`
}

// String is the holder as an error message shows it.
func (h Holder) String() string {
	if h.PID == 0 {
		return "another process (toolsmith api or worker replicas, which share a dir and do not record themselves, or one that has not recorded itself yet)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d", h.PID)
	var parts []string
	if h.Command != "" {
		parts = append(parts, h.Command)
	}
	for _, k := range slices.Sorted(maps.Keys(h.Addrs)) {
		if h.Addrs[k] != "" {
			parts = append(parts, k+" "+h.Addrs[k])
		}
	}
	if !h.Since.IsZero() {
		parts = append(parts, "since "+h.Since.UTC().Format(time.RFC3339))
	}
	if len(parts) > 0 {
		b.WriteString(" (" + strings.Join(parts, "; ") + ")")
	}
	return b.String()
}

// ErrLocked is wrapped by the LockedError of a data dir another process
// holds.
var ErrLocked = errors.New("data dir in use")

// LockedError reports a data dir another process holds.
type LockedError struct {
	Dir    string
	Holder Holder
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("data dir %s is in use by %s", e.Dir, e.Holder)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// Lock is a held data dir lock.
type Lock struct {
	f      *os.File
	shared bool // the record is not this holder's to empty
}

// Acquire creates dir when missing, takes its lock without waiting and
// records h (PID, Since default to this process and now). A dir another
// process holds, exclusively or shared, is a *LockedError naming that
// process (when it recorded itself).
func Acquire(dir string, h Holder) (*Lock, error) {
	return acquire(dir, h, false)
}

// AcquireShared takes dir's lock shared with other AcquireShared holders
// (API replicas and workers on one SQLite file, which SQLite itself
// coordinates) but not with an Acquire holder (dev, which owns everything
// in the dir). Shared holders do not record themselves: several share the
// one record. A dir held exclusively is a *LockedError naming the holder.
func AcquireShared(dir string) (*Lock, error) {
	return acquire(dir, Holder{}, true)
}

func acquire(dir string, h Holder, shared bool) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("datadir: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("datadir: open %s: %w", path, err)
	}
	held, err := tryLock(f, shared)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("datadir: lock %s: %w", path, err)
	}
	if !held {
		other := readHolder(f)
		_ = f.Close()
		return nil, &LockedError{Dir: dir, Holder: other}
	}
	if shared {
		return &Lock{f: f, shared: true}, nil
	}
	if h.PID == 0 {
		h.PID = os.Getpid()
	}
	if h.Since.IsZero() {
		h.Since = time.Now()
	}
	if err := write(f, h); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("datadir: record the holder in %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Release empties the record and lets the lock go (closing the file
// releases it). It is safe to call more than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	var terr error
	if !l.shared {
		terr = l.f.Truncate(0)
	}
	cerr := l.f.Close()
	l.f = nil
	return errors.Join(terr, cerr)
}

func write(f *os.File, h Holder) error {
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(raw, '\n'), 0); err != nil {
		return err
	}
	return f.Sync()
}

// readHolder reads the record of the process holding f's lock; a record
// not written yet (or unreadable) is the zero Holder.
func readHolder(f *os.File) Holder {
	var h Holder
	raw := make([]byte, 64<<10)
	n, _ := f.ReadAt(raw, 0)
	_ = json.Unmarshal(raw[:n], &h)
	return h
}
