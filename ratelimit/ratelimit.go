package ratelimit

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

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

// maxBuckets bounds memory: past it the buckets start afresh (they refill
// within a minute anyway).
const maxBuckets = 50_000

// Limiter holds one token bucket per (class, caller, rate). It is safe for
// concurrent use.
type Limiter struct {
	cfg       Config
	onLimited func(class string)
	mu        sync.Mutex
	m         map[string]*rate.Limiter
}

// New returns a limiter with cfg's defaults; onLimited, when not nil, is
// told of every refusal (metrics).
func New(cfg Config, onLimited func(class string)) *Limiter {
	return &Limiter{cfg: cfg, onLimited: onLimited}
}

// Error is a refusal: the class's bucket of who is empty for RetryAfter.
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

// Take takes one token of class from p's bucket (an anonymous caller's is
// its address addr). It returns nil, or an *Error when the bucket is empty.
// An unknown class is not limited.
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
	lim := l.bucket(class+"|"+who+"|"+strconv.Itoa(perMinute), perMinute)
	now := time.Now()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		if l.onLimited != nil {
			l.onLimited(class)
		}
		if p.Subject == "" {
			who = "this anonymous client"
		}
		return &Error{Class: class, Who: who, RetryAfter: d}
	}
	return nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (l *Limiter) bucket(key string, perMinute int) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) > maxBuckets {
		l.m = map[string]*rate.Limiter{}
	}
	lim, ok := l.m[key]
	if !ok {
		lim = rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)
		l.m[key] = lim
	}
	return lim
}
