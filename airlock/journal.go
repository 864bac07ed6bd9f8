package airlock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// appendLine appends one JSON value as a line to a file, synced, so a
// record survives a crash right after the call it describes.
func appendLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readLines decodes every line of a JSON-lines file; a missing file is empty.
func readLines(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := each(sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// FileLedger is a Ledger kept in memory and journalled to a JSON-lines
// file, so every call of an onboarded tool stays recorded across restarts
// and budgets and quotas keep counting.
type FileLedger struct {
	path string
	mem  MemoryLedger
}

// OpenFileLedger loads the journal at path (created on first write).
func OpenFileLedger(path string) (*FileLedger, error) {
	l := &FileLedger{path: path}
	byID := map[int64]CallRecord{}
	err := readLines(path, func(b []byte) error {
		var r CallRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		byID[r.ID] = r // a completion line replaces the reservation
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("airlock: load ledger %s: %w", path, err)
	}
	ids := make([]int64, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		l.mem.records = append(l.mem.records, byID[id])
	}
	return l, nil
}

// Add implements Ledger.
func (l *FileLedger) Add(ctx context.Context, r CallRecord) (CallRecord, error) {
	r, err := l.mem.Add(ctx, r)
	if err != nil {
		return r, err
	}
	return r, appendLine(l.path, r)
}

// Complete implements Ledger.
func (l *FileLedger) Complete(ctx context.Context, r CallRecord) error {
	if err := l.mem.Complete(ctx, r); err != nil {
		return err
	}
	return appendLine(l.path, r)
}

// Count implements Ledger.
func (l *FileLedger) Count(ctx context.Context, approvalID string, since time.Time) (int, float64, error) {
	return l.mem.Count(ctx, approvalID, since)
}

// Records returns every call record.
func (l *FileLedger) Records() []CallRecord { return l.mem.Records() }

// NotificationLog keeps notifications for people to read
// (GET /api/v1/notifications), journalled to a JSON-lines file.
type NotificationLog struct {
	path  string
	mu    sync.Mutex
	items []Notification
}

// OpenNotificationLog loads the log at path.
func OpenNotificationLog(path string) (*NotificationLog, error) {
	n := &NotificationLog{path: path}
	err := readLines(path, func(b []byte) error {
		var x Notification
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		n.items = append(n.items, x)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("airlock: load notifications %s: %w", path, err)
	}
	return n, nil
}

// Notify implements Notifier.
func (n *NotificationLog) Notify(_ context.Context, x Notification) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if x.At.IsZero() {
		x.At = time.Now().UTC()
	}
	if err := appendLine(n.path, x); err != nil {
		return fmt.Errorf("airlock: notify: %w", err)
	}
	n.items = append(n.items, x)
	return nil
}

// List returns the newest notifications first, at most limit (0: all).
func (n *NotificationLog) List(limit int) []Notification {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Notification, 0, len(n.items))
	for i := len(n.items) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, n.items[i])
	}
	return out
}
