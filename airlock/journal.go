package airlock

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/toolsmith/toolsmith/graph"
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

// ImportLedgerFile moves the calls of a ledger file, the JSON-lines
// journal each process kept before the ledger moved into the store, into
// ledger, so nothing counted before is lost: rate, quota and budgets keep
// counting those calls. The import is keyed by the file's content hash, so
// a file imported before (a crash between the import and the rename) is
// not counted twice; the file is then renamed to <path>.imported. A
// missing file imports nothing. It returns how many calls it imported.
func ImportLedgerFile(ctx context.Context, path string, ledger graph.CallLedger) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("airlock: import ledger %s: %w", path, err)
	}
	byID := map[int64]CallRecord{}
	err = readLines(path, func(b []byte) error {
		var r CallRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		byID[r.ID] = r // a completion line replaces the reservation
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("airlock: import ledger %s: %w", path, err)
	}
	ids := make([]int64, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	recs := make([]CallRecord, 0, len(ids))
	for _, id := range ids {
		recs = append(recs, byID[id])
	}
	sum := sha256.Sum256(data)
	n := 0
	if len(recs) > 0 {
		fresh, err := ledger.ImportCalls(ctx, "ledger.jsonl#"+hex.EncodeToString(sum[:]), recs)
		if err != nil {
			return 0, fmt.Errorf("airlock: import ledger %s: %w", path, err)
		}
		if fresh {
			n = len(recs)
		}
	}
	// Another process over the same data dir may have moved it already.
	if err := os.Rename(path, path+".imported"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return n, fmt.Errorf("airlock: import ledger %s: %w", path, err)
	}
	return n, nil
}

// NotificationTopic is the store topic (graph.Notices) of the airlock's
// notifications.
const NotificationTopic = "airlock.notifications"

// NotificationKeep is how many notifications the store keeps: the newest.
const NotificationKeep = 1000

// NotificationLog keeps notifications for people to read
// (GET /api/v1/notifications, the console's notifications page) in the
// store, so a notification raised by any worker or API replica is listed
// by every replica. The store keeps the newest NotificationKeep.
type NotificationLog struct {
	store graph.Notices
}

// NewNotificationLog returns the log kept in store.
func NewNotificationLog(store graph.Notices) *NotificationLog {
	if store == nil {
		panic("airlock: nil notices store")
	}
	return &NotificationLog{store: store}
}

// Notify implements Notifier.
func (n *NotificationLog) Notify(ctx context.Context, x Notification) error {
	if x.At.IsZero() {
		x.At = time.Now().UTC()
	}
	b, err := json.Marshal(x)
	if err != nil {
		return fmt.Errorf("airlock: notify: %w", err)
	}
	if _, err := n.store.PostNotice(ctx, graph.Notice{Topic: NotificationTopic, At: x.At, Data: b}, NotificationKeep); err != nil {
		return fmt.Errorf("airlock: notify: %w", err)
	}
	return nil
}

// List returns the newest notifications first, at most limit (<= 0: 100,
// at most 10000).
func (n *NotificationLog) List(ctx context.Context, limit int) ([]Notification, error) {
	got, err := n.store.LatestNotices(ctx, NotificationTopic, limit)
	if err != nil {
		return nil, fmt.Errorf("airlock: list notifications: %w", err)
	}
	out := make([]Notification, 0, len(got))
	for _, g := range got {
		var x Notification
		if err := json.Unmarshal(g.Data, &x); err != nil {
			return nil, fmt.Errorf("airlock: list notifications: decode notice %d: %w", g.Seq, err)
		}
		out = append(out, x)
	}
	return out, nil
}

// ImportNotificationFile moves the notifications of a file, the
// JSON-lines journal each process kept before notifications moved into
// the store, into notices (the newest NotificationKeep of them), keyed by
// the file's content hash like ImportLedgerFile, and renames the file to
// <path>.imported. A missing file imports nothing. It returns how many
// notifications it imported.
func ImportNotificationFile(ctx context.Context, path string, notices graph.Notices) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("airlock: import notifications %s: %w", path, err)
	}
	var ns []graph.Notice
	err = readLines(path, func(b []byte) error {
		var x Notification
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		ns = append(ns, graph.Notice{Topic: NotificationTopic, At: x.At, Data: slices.Clone(b)})
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("airlock: import notifications %s: %w", path, err)
	}
	if len(ns) > NotificationKeep {
		ns = ns[len(ns)-NotificationKeep:]
	}
	sum := sha256.Sum256(data)
	n := 0
	if len(ns) > 0 {
		fresh, err := notices.ImportNotices(ctx, "notifications.jsonl#"+hex.EncodeToString(sum[:]), ns, NotificationKeep)
		if err != nil {
			return 0, fmt.Errorf("airlock: import notifications %s: %w", path, err)
		}
		if fresh {
			n = len(ns)
		}
	}
	if err := os.Rename(path, path+".imported"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return n, fmt.Errorf("airlock: import notifications %s: %w", path, err)
	}
	return n, nil
}
