package modules

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestConfigSources(t *testing.T) {
	cfg := NewConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Var(Flag{Config: &cfg}, "module", "NAME=URL")
	if err := fs.Parse([]string{"--module", "currency=http://127.0.0.1:9001/", "--module", "units=http://127.0.0.1:9002"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.AddList("research=http://research:8000, currency=http://fx:8000"); err != nil {
		t.Fatal(err)
	}
	cfg.SetSlow("deployer, garmin,,deployer")
	path := filepath.Join(t.TempDir(), "modules.json")
	if err := os.WriteFile(path, []byte(`{"modules":{"deployer":"https://deploy.internal"},"slowModules":["claude_code"],"defaultTimeout":"10s","slowTimeout":"3m"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cfg.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"currency": "http://fx:8000", "units": "http://127.0.0.1:9002", "research": "http://research:8000", "deployer": "https://deploy.internal"}
	if len(cfg.Modules) != len(want) {
		t.Fatalf("modules = %v", cfg.Modules)
	}
	for k, v := range want {
		if cfg.Modules[k] != v {
			t.Errorf("%s = %q, want %q", k, cfg.Modules[k], v)
		}
	}
	if got := (Flag{Config: &cfg}).String(); got != "currency=http://fx:8000,deployer=https://deploy.internal,research=http://research:8000,units=http://127.0.0.1:9002" {
		t.Errorf("Flag.String = %q", got)
	}
	for mod, d := range map[string]time.Duration{"deployer": 3 * time.Minute, "garmin": 3 * time.Minute, "claude_code": 3 * time.Minute, "units": 10 * time.Second} {
		if got := cfg.TimeoutFor(mod); got != d {
			t.Errorf("TimeoutFor(%s) = %v, want %v", mod, got, d)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigDefaults(t *testing.T) {
	var zero Config
	if zero.TimeoutFor("x") != 30*time.Second {
		t.Fatal("default timeout is not 30s")
	}
	zero.SetSlow("x")
	if zero.TimeoutFor("x") != 120*time.Second {
		t.Fatal("slow timeout is not 120s")
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		do   func(*Config) error
		kind error
	}{
		{"no equals", func(c *Config) error { return c.Add("currency") }, fault.ErrMalformed},
		{"empty url", func(c *Config) error { return c.Add("currency=") }, fault.ErrMalformed},
		{"bad name", func(c *Config) error { return c.Add("Currency!=http://x") }, fault.ErrInvalid},
		{"bad scheme", func(c *Config) error { return c.Add("currency=ftp://x") }, fault.ErrInvalid},
		{"no host", func(c *Config) error { return c.Add("currency=http://") }, fault.ErrInvalid},
		{"env list", func(c *Config) error { return c.AddList("a=http://a,b") }, fault.ErrMalformed},
		{"file unknown field", func(c *Config) error { return c.LoadJSON([]byte(`{"modulez":{}}`)) }, fault.ErrMalformed},
		{"file bad duration", func(c *Config) error { return c.LoadJSON([]byte(`{"defaultTimeout":"soon"}`)) }, fault.ErrInvalid},
		{"validate", func(c *Config) error {
			c.Modules = map[string]string{"ok": "http://x", "BAD": "nope"}
			return c.Validate()
		}, fault.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			err := tc.do(&cfg)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
		})
	}
	cfg := NewConfig()
	if err := cfg.LoadFile(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
