package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Limit classes.
const (
	Search  = "search"
	Execute = "execute"
	Verbs   = "verbs"
)

// Default per-caller limits, requests per minute (a key may set its own).
const (
	DefaultSearchPerMinute  = 600
	DefaultExecutePerMinute = 120
	DefaultVerbsPerMinute   = 60
)

// Config are the server's default limits per class, requests per minute
// per caller: 0 takes the default, a negative value means unlimited.
type Config struct {
	SearchPerMinute  int
	ExecutePerMinute int
	VerbsPerMinute   int
}

// Window is the length of one counting window.
const Window = time.Minute

// storeTimeout bounds one count in the store; past it (or on any store
// error) the call is counted in this process's memory instead.
const storeTimeout = time.Second

// Limiter is a sliding-window counter per (class, caller): a call is
// allowed when
//
//	previous window's count × (share of the previous window still in the last minute) + this window's count
//
// stays within the limit. The counts live in a graph.RateCounts: the store
// shared by every replica (Share), else this process's memory.
//
// Leases. To spare a store round trip per call, a replica counts
// LeaseSize(limit) calls of a caller at once (only as many as fit under
// the limit) and admits the rest of them locally, within the same window.
//
// Bound. The counts in the store are exact across replicas (adds are
// atomic; what does not fit, or a refused call, is given back), and a
// lease is counted before its calls are made, so N replicas together
// never allow more than one process would: at most the limit in any one
// clock minute, and at most twice the limit in any 60 s span (only when a
// whole minute's calls come at the end of one window; the token bucket
// this replaced, whose burst was one minute's worth, allowed the same).
// Calls spread evenly get the limit, less what leases hold unused: each
// replica may refuse up to LeaseSize(limit)-1 calls a minute too early
// (11 of 600 by default). While the store fails, each replica counts on
// its own, so N replicas allow up to N times the limit.
//
// Memory: a replica keeps only the leases of the current window; windows
// older than the previous one are deleted from the store (or memory) once
// per window.
type Limiter struct {
	cfg       Config
	onLimited func(class string)
	onError   func(error)
	now       func() time.Time

	local  graph.MemoryRateCounts // without a store, or while it fails
	shared graph.RateCounts

	mu      sync.Mutex
	expired int64             // the last window whose predecessors were expired
	leases  map[string]leased // calls counted in the store, not yet made
}

// New returns a limiter with cfg's defaults counting in memory; onLimited,
// when not nil, is told of every refusal (metrics).
func New(cfg Config, onLimited func(class string)) *Limiter {
	return &Limiter{cfg: cfg, onLimited: onLimited, now: time.Now}
}

// Share makes the limiter count in store, shared by every process over
// it; onError, when not nil, is told of each store failure (the call is
// then counted in memory). Call it before serving.
func (l *Limiter) Share(store graph.RateCounts, onError func(error)) *Limiter {
	l.shared, l.onError = store, onError
	return l
}

// Error is a refusal: the class's limit of who is reached for RetryAfter.
// It wraps fault.ErrLimit.
type Error struct {
	Class      string
	Who        string
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("rate limit of the %s class reached for %s; retry in %s: %v", e.Class, e.Who, e.RetryAfter.Round(time.Millisecond), fault.ErrLimit)
}

// Unwrap makes errors.Is(err, fault.ErrLimit) hold.
func (e *Error) Unwrap() error { return fault.ErrLimit }

// Take counts one call of class for p (an anonymous caller is counted by
// its address addr). It returns nil, or an *Error when the limit is
// reached. An unknown class is not limited.
func (l *Limiter) Take(class string, p identity.Principal, addr string) error {
	if l == nil {
		return nil
	}
	perMinute, def := 0, 0
	switch class {
	case Search:
		perMinute, def = p.Limits.Search, orDefault(l.cfg.SearchPerMinute, DefaultSearchPerMinute)
	case Execute:
		perMinute, def = p.Limits.Execute, orDefault(l.cfg.ExecutePerMinute, DefaultExecutePerMinute)
	case Verbs:
		perMinute, def = p.Limits.Verbs, orDefault(l.cfg.VerbsPerMinute, DefaultVerbsPerMinute)
	default:
		return nil
	}
	if perMinute == 0 {
		perMinute = def
	}
	if perMinute < 0 {
		return nil
	}
	who := p.Subject
	if who == "" {
		who = "ip:" + addr
	}
	key := class + "|" + who
	if len(key) > 200 {
		sum := sha256.Sum256([]byte(who))
		key = class + "|sha256:" + hex.EncodeToString(sum[:])
	}
	now := l.now()
	window := now.UnixNano() / int64(Window)
	elapsed := float64(now.UnixNano()-window*int64(Window)) / float64(Window)
	counts := l.counts(window)
	if l.fromLease(key, window) {
		return nil
	}
	// Take a lease of n calls at once (1 without a store): n-1 later calls
	// of this caller in this window then pass without a store round trip.
	n := 1
	if l.shared != nil {
		n = LeaseSize(perMinute)
	}
	cur, prev, err := l.add(counts, key, window, n)
	if err != nil {
		return nil // unreachable: keys are valid and memory does not fail
	}
	// room: how many of the n fit under the limit now. A lease admitted
	// now stays within it later in the window: the previous window's
	// weight only falls.
	room := int(math.Floor(float64(perMinute) - float64(prev)*(1-elapsed) - float64(cur-int64(n)) + 1e-9))
	take := min(max(room, 0), n)
	if take < n {
		_, _, _ = l.add(counts, key, window, take-n) // what does not fit does not count
	}
	if take > 0 {
		l.lease(key, window, take-1)
		return nil
	}
	cur = cur - int64(n) + 1 // as if this one call had been counted
	if l.onLimited != nil {
		l.onLimited(class)
	}
	if p.Subject == "" {
		who = "this anonymous client"
	}
	return &Error{Class: class, Who: who, RetryAfter: retryAfter(perMinute, cur, prev, elapsed)}
}

// LeaseSize is how many calls a replica counts in the store at once for
// a caller with limit calls per minute: one per 50 of the limit (12 for
// the default 600 searches a minute, 1 for limits up to 50).
func LeaseSize(limit int) int { return max(1, limit/50) }

// fromLease takes one call from the caller's lease of this window.
func (l *Limiter) fromLease(key string, window int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls, ok := l.leases[key]
	if !ok || ls.window != window || ls.left <= 0 {
		return false
	}
	ls.left--
	l.leases[key] = ls
	return true
}

// lease keeps the unused calls of a lease for this window, beside what
// is left of the caller's earlier lease: concurrent calls of one caller
// may each have taken one, and every call counted in the store must stay
// usable, or the caller is refused before its limit.
func (l *Limiter) lease(key string, window int64, left int) {
	if left <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leases == nil {
		l.leases = map[string]leased{}
	}
	if ls, ok := l.leases[key]; ok && ls.window == window {
		left += ls.left
	}
	l.leases[key] = leased{window: window, left: left}
}

type leased struct {
	window int64
	left   int
}

// counts returns where this window counts, expiring older windows (and
// leases) once per window.
func (l *Limiter) counts(window int64) graph.RateCounts {
	var c graph.RateCounts = &l.local
	if l.shared != nil {
		c = l.shared
	}
	l.mu.Lock()
	due := l.expired != window
	l.expired = window
	if due {
		for k, ls := range l.leases {
			if ls.window < window {
				delete(l.leases, k) // a lease ends with its window
			}
		}
	}
	l.mu.Unlock()
	if due {
		// Windows before the previous one no longer weigh in any decision.
		_, _ = l.local.ExpireRateCounts(context.Background(), window-1)
		if l.shared != nil {
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			if _, err := l.shared.ExpireRateCounts(ctx, window-1); err != nil && l.onError != nil {
				l.onError(err)
			}
			cancel()
		}
	}
	return c
}

// add adds delta in c, or in memory when c is the store and it fails.
func (l *Limiter) add(c graph.RateCounts, key string, window int64, delta int) (int64, int64, error) {
	if c != graph.RateCounts(&l.local) {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		cur, prev, err := c.AddRateCount(ctx, key, window, delta)
		cancel()
		if err == nil {
			return cur, prev, nil
		}
		if l.onError != nil {
			l.onError(err)
		}
		if delta < 0 {
			return cur, prev, nil // a give-back the store missed stays counted: stricter, never looser
		}
	}
	return l.local.AddRateCount(context.Background(), key, window, delta)
}

// retryAfter is how long until a call would be allowed again if no other
// came: cur (which counts the refused call) and prev are the window
// counts, elapsed the share of the current window gone.
func retryAfter(limit int, cur, prev int64, elapsed float64) time.Duration {
	lim := float64(limit)
	var at float64 // in windows from the start of the current one
	if float64(cur) <= lim && prev > 0 {
		// This window has room: wait for the previous one's weight to fall.
		at = 1 - (lim-float64(cur))/float64(prev)
	} else {
		// This window is full: into the next, where it weighs as prev did.
		at = 1
		if cur > 1 {
			at += max(0, 1-(lim-1)/float64(cur-1))
		}
	}
	d := time.Duration((at - elapsed) * float64(Window))
	return max(d, time.Millisecond)
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
