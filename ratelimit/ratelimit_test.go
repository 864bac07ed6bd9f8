package ratelimit_test

import (
	"errors"
	"testing"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/ratelimit"
)

func TestTake(t *testing.T) {
	var limited []string
	l := ratelimit.New(ratelimit.Config{SearchPerMinute: 1, VerbsPerMinute: -1}, func(c string) { limited = append(limited, c) })
	anon := identity.Anonymous()
	if err := l.Take(ratelimit.Search, anon, "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	err := l.Take(ratelimit.Search, anon, "10.0.0.1")
	var le *ratelimit.Error
	if !errors.Is(err, fault.ErrLimit) || !errors.As(err, &le) || le.Class != ratelimit.Search || le.RetryAfter <= 0 {
		t.Fatalf("second search from one address: %v", err)
	}
	if err := l.Take(ratelimit.Search, anon, "10.0.0.2"); err != nil {
		t.Errorf("another anonymous address has its own bucket: %v", err)
	}
	key := identity.Principal{Subject: "key:k1", Limits: identity.Limits{Search: 2}}
	for i := 0; i < 2; i++ {
		if err := l.Take(ratelimit.Search, key, "10.0.0.1"); err != nil {
			t.Fatalf("a key's own limit of 2, call %d: %v", i+1, err)
		}
	}
	for i := 0; i < 5; i++ {
		if err := l.Take(ratelimit.Verbs, key, ""); err != nil {
			t.Fatalf("negative default is unlimited: %v", err)
		}
	}
	if len(limited) != 1 || limited[0] != ratelimit.Search {
		t.Errorf("onLimited calls %v, want [search]", limited)
	}
}
