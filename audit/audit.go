// Package audit is Toolsmith's append-only audit log: every mutating call,
// every tool execution, every approval decision and every refused
// credential, with who, what, when, outcome and request id. Events are
// stored in the graph store (graph.Audit), so they survive restarts, and
// are read back with filters and paging. Every edge records through the
// same Log, so REST, MCP and console calls are audited alike.
package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Recorder is what an edge needs to audit a call.
type Recorder interface {
	Record(ctx context.Context, e graph.AuditEvent) error
}

// Log records and reads audit events.
type Log struct {
	store graph.Audit
	now   func() time.Time

	// The batch writer of RecordLater, started on first use.
	once    sync.Once
	pending chan graph.AuditEvent
	flushes chan chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

// Batching of RecordLater: events are written together when this many are
// waiting or this long after the first.
const (
	batchSize  = 256
	batchDelay = 20 * time.Millisecond
)

// New returns a log over store.
func New(store graph.Audit) *Log {
	if store == nil {
		panic("audit: nil store")
	}
	return &Log{store: store, now: time.Now}
}

// writeTimeout bounds one synchronous audit write.
const writeTimeout = 10 * time.Second

// Record stores one event, filling ID and At when empty, the actor from
// the principal in ctx when Actor is empty and the request id from ctx
// (WithRequestID) when RequestID is empty. The write is detached from
// ctx's cancellation (bounded by its own timeout): a caller that went away
// has still had its call made, and the record of it must not be lost.
func (l *Log) Record(ctx context.Context, e graph.AuditEvent) error {
	e = l.fill(ctx, e)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	if err := l.store.AppendAudit(wctx, []graph.AuditEvent{e}); err != nil {
		return fmt.Errorf("audit: record %s: %w", e.Action, err)
	}
	return nil
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id that events recorded
// under it get (so a write-ahead record made below the edge pairs with the
// call's own record).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// fill completes an event as Record does.
func (l *Log) fill(ctx context.Context, e graph.AuditEvent) graph.AuditEvent {
	if e.At.IsZero() {
		e.At = l.now().UTC()
	}
	if e.ID == "" {
		e.ID = NewID(e.At)
	}
	if e.Actor == "" && e.Method == "" {
		if p, _, ok := identity.FromContext(ctx); ok {
			e.Actor, e.ActorName, e.Method = p.Subject, p.Name, p.Method
		}
	}
	if e.RequestID == "" {
		e.RequestID, _ = ctx.Value(requestIDKey{}).(string)
	}
	if e.Outcome == "" {
		e.Outcome = graph.AuditSuccess
	}
	if len(e.Detail) > 2000 {
		e.Detail = e.Detail[:2000] + "…"
	}
	return e
}

// RecordLater queues an event and returns at once; a background writer
// appends queued events in batches (up to 256, or 20 ms after the first),
// so a read-only call does not wait for a store write. Query and Close
// flush the queue first. When the queue is full it records synchronously;
// nothing is dropped. Mutations and executions use Record.
func (l *Log) RecordLater(ctx context.Context, e graph.AuditEvent) error {
	l.once.Do(l.start)
	e = l.fill(ctx, e)
	select {
	case <-l.stopped:
		return l.Record(ctx, e)
	default:
	}
	select {
	case l.pending <- e:
		return nil
	default:
		return l.Record(ctx, e)
	}
}

func (l *Log) start() {
	l.pending = make(chan graph.AuditEvent, 4*batchSize)
	l.flushes = make(chan chan struct{})
	l.stop = make(chan struct{})
	l.stopped = make(chan struct{})
	go l.write()
}

// write is the batch writer.
func (l *Log) write() {
	defer close(l.stopped)
	var batch []graph.AuditEvent
	var timer <-chan time.Time
	flush := func() {
		if len(batch) > 0 {
			// The batch's events were accepted already: a store error is
			// retried once, then the events are written one by one.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := l.store.AppendAudit(ctx, batch); err != nil {
				for _, e := range batch {
					_ = l.store.AppendAudit(ctx, []graph.AuditEvent{e})
				}
			}
			cancel()
			batch = batch[:0]
		}
		timer = nil
	}
	drain := func() {
		for {
			select {
			case e := <-l.pending:
				batch = append(batch, e)
			default:
				return
			}
		}
	}
	for {
		select {
		case e := <-l.pending:
			batch = append(batch, e)
			if len(batch) >= batchSize {
				flush()
			} else if timer == nil {
				timer = time.After(batchDelay)
			}
		case <-timer:
			flush()
		case done := <-l.flushes:
			drain()
			flush()
			close(done)
		case <-l.stop:
			drain()
			flush()
			return
		}
	}
}

// Flush writes every queued event before it returns.
func (l *Log) Flush(ctx context.Context) {
	l.once.Do(l.start)
	done := make(chan struct{})
	select {
	case l.flushes <- done:
		select {
		case <-done:
		case <-ctx.Done():
		}
	case <-l.stopped:
	case <-ctx.Done():
	}
}

// Close flushes the queue and stops the batch writer.
func (l *Log) Close() {
	l.once.Do(l.start)
	select {
	case <-l.stopped:
	default:
		close(l.stop)
		<-l.stopped
	}
}

// Query reads events, newest first. Bad filters are fault.ErrMalformed
// naming the field.
func (l *Log) Query(ctx context.Context, q graph.AuditQuery) (graph.AuditPage, error) {
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return graph.AuditPage{}, fault.Malformed("until", "must be after since")
	}
	if q.Before != "" && !idRe.MatchString(q.Before) {
		return graph.AuditPage{}, fault.Malformed("before", "must be the next cursor of a previous page (an event id such as 1764115200000000000-1a2b3c4d), got %q", q.Before)
	}
	l.Flush(ctx)
	if q.Limit <= 0 {
		q.Limit = 100
	}
	if q.Limit > 1000 {
		q.Limit = 1000
	}
	page, err := l.store.AuditEvents(ctx, q)
	if err != nil {
		return graph.AuditPage{}, fmt.Errorf("audit: query: %w", err)
	}
	return page, nil
}

// QueryAs reads events as caller may see them: an owner reads the log
// whole; anyone else reads every event, but an event about a tool the
// caller may not execute names it access.HiddenTool (in Tool and in
// Detail), and a filter on such a tool finds nothing. An event whose
// caller named a tool id no tool has (a REST route's :toolId, an MCP
// call's tool) reads access.HiddenTool too: its 404 and a hidden tool's
// are alike on purpose, so its audit record must not tell them apart,
// and a filter on such an id finds none of those events either (only
// those about a review, key or source of that id). An event's
// Tool that is not a tool (a key, a review, a run, a session) is shown as
// it is. The log keeps who did what; only the names of tools the reader
// may not run are left out of the reading.
func (l *Log) QueryAs(ctx context.Context, caller access.Caller, q graph.AuditQuery) (graph.AuditPage, error) {
	if caller.SeesEveryTool() {
		return l.Query(ctx, q)
	}
	tools, _ := l.store.(access.ToolGetter)
	seen := map[string]bool{}    // tool ids read: hidden or not
	unknown := map[string]bool{} // ids no tool has
	hidden := func(id string) (bool, error) {
		if h, ok := seen[id]; ok {
			return h, nil
		}
		h := true // nothing can vouch for the id: hide it
		if tools != nil {
			t, err := tools.GetTool(ctx, id)
			switch {
			case errors.Is(err, fault.ErrNotFound):
				h, unknown[id] = false, true // not a tool's id
			case err != nil:
				return false, fmt.Errorf("audit: read tool %q: %w", id, err)
			default:
				h = !caller.Allows(&t.ToolSummary)
			}
		}
		seen[id] = h
		return h, nil
	}
	if q.Tool != "" {
		h, err := hidden(q.Tool)
		if err != nil {
			return graph.AuditPage{}, err
		}
		if h {
			// The filters are still checked; the page is the one an id
			// no tool has would give.
			q.Limit = 1
			if _, err := l.Query(ctx, q); err != nil {
				return graph.AuditPage{}, err
			}
			return graph.AuditPage{Items: []graph.AuditEvent{}}, nil
		}
	}
	var page graph.AuditPage
	var err error
	if q.Tool != "" && unknown[q.Tool] {
		page, err = l.queryNotNamingTool(ctx, q)
	} else {
		page, err = l.Query(ctx, q)
	}
	if err != nil {
		return page, err
	}
	for _, e := range page.Items {
		if e.Tool != "" {
			if _, err := hidden(e.Tool); err != nil {
				return graph.AuditPage{}, err
			}
		}
	}
	redact := map[string]bool{}
	for id, h := range seen {
		if h {
			redact[id] = true
		}
	}
	for i := range page.Items {
		e := &page.Items[i]
		if unknown[e.Tool] && namesTool(*e) {
			e.Detail = access.RedactText(e.Detail, map[string]bool{e.Tool: true})
			e.Tool = access.HiddenTool
		}
		if len(redact) == 0 {
			continue
		}
		if redact[e.Tool] {
			e.Tool = access.HiddenTool
		}
		e.Detail = access.RedactText(e.Detail, redact)
	}
	return page, nil
}

// queryNotNamingTool answers a filter on an id no tool has with its
// events that do not name a tool (namesTool): a review, key or source
// with that id. Those that do are left out, as a filter on a hidden
// tool finds nothing of them. It reads the store's pages on until it has
// a page's worth; Next is the cursor after the last event it kept.
func (l *Log) queryNotNamingTool(ctx context.Context, q graph.AuditQuery) (graph.AuditPage, error) {
	limit := graph.AuditLimit(q.Limit)
	out := graph.AuditPage{Items: []graph.AuditEvent{}}
	for {
		page, err := l.Query(ctx, q)
		if err != nil {
			return graph.AuditPage{}, err
		}
		for _, e := range page.Items {
			if namesTool(e) {
				continue
			}
			if len(out.Items) == limit {
				// One more is left: the page is full and has a next.
				out.Next = out.Items[limit-1].ID
				return out, nil
			}
			out.Items = append(out.Items, e)
		}
		if page.Next == "" {
			return out, nil
		}
		q.Before = page.Next
	}
}

// namesTool reports whether an event's Tool is a tool id as its caller
// gave it: a REST route's :toolId, or an MCP call's tool (call_tool,
// kb.get_document). Other events name a review, key, source or run there.
func namesTool(e graph.AuditEvent) bool {
	return strings.Contains(e.Route, "/:toolId") || strings.HasPrefix(e.Action, "mcp.")
}

// idRe is the form of NewID's ids.
var idRe = regexp.MustCompile(`^[0-9]{19}-[0-9a-f]{8}$`)

// NewID returns an event id that sorts by time: 19 zero-padded digits of
// Unix nanoseconds, a dash and 8 random hex digits.
func NewID(at time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%019d-%s", at.UnixNano(), hex.EncodeToString(b[:]))
}

// Action names for REST routes: the route's resource path with its
// parameters dropped and the method's verb, e.g. "tools.register".
func Action(method, route string) string {
	route = strings.TrimPrefix(route, "/api/v1/")
	var parts []string
	for _, p := range strings.Split(route, "/") {
		if p == "" || strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			continue
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		parts = []string{"api"}
	}
	name := strings.Join(parts, ".")
	switch method {
	case "PUT", "PATCH":
		name += ".update"
	case "DELETE":
		if !strings.HasSuffix(name, "invalidate") {
			name += ".delete"
		}
	}
	return name
}
