package modules

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Default timeouts of a module call: 30 s, or 120 s for a module marked slow.
const (
	DefaultTimeout = 30 * time.Second
	SlowTimeout    = 120 * time.Second
)

// EnvModules is the environment variable holding NAME=URL,NAME=URL pairs.
const EnvModules = "TOOLSMITH_MODULES"

var moduleName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Config says where each module lives and how long its calls may take.
type Config struct {
	// Modules maps a module name ("currency") to its base URL ("http://127.0.0.1:9001").
	Modules map[string]string `json:"modules"`
	// Slow lists modules whose calls get SlowTimeout instead of DefaultTimeout.
	Slow []string `json:"slowModules,omitempty"`
	// DefaultTimeout bounds a call to a normal module; 0 means 30 s.
	DefaultTimeout time.Duration `json:"-"`
	// SlowTimeout bounds a call to a slow module; 0 means 120 s.
	SlowTimeout time.Duration `json:"-"`
}

// NewConfig returns an empty Config with the default timeouts.
func NewConfig() Config {
	return Config{Modules: map[string]string{}, DefaultTimeout: DefaultTimeout, SlowTimeout: SlowTimeout}
}

// TimeoutFor returns the call timeout of a module.
func (c Config) TimeoutFor(module string) time.Duration {
	if slices.Contains(c.Slow, module) {
		if c.SlowTimeout > 0 {
			return c.SlowTimeout
		}
		return SlowTimeout
	}
	if c.DefaultTimeout > 0 {
		return c.DefaultTimeout
	}
	return DefaultTimeout
}

// Names returns the configured module names, sorted.
func (c Config) Names() []string {
	names := make([]string, 0, len(c.Modules))
	for n := range c.Modules {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Validate checks module names, URLs and timeouts; every problem names its field.
func (c Config) Validate() error {
	v := &fault.ValidationError{}
	for _, name := range c.Names() {
		if !moduleName.MatchString(name) {
			v.Add("modules."+name, "module name must match %s", moduleName)
		}
		if err := checkURL(c.Modules[name]); err != nil {
			v.Add("modules."+name, "%v", err)
		}
	}
	for i, s := range c.Slow {
		if !moduleName.MatchString(s) {
			v.Add(fmt.Sprintf("slowModules[%d]", i), "module name must match %s", moduleName)
		}
	}
	if c.DefaultTimeout < 0 {
		v.Add("defaultTimeout", "must not be negative")
	}
	if c.SlowTimeout < 0 {
		v.Add("slowTimeout", "must not be negative")
	}
	return v.Err()
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q must be http or https", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("URL %q has no host", raw)
	}
	return nil
}

// Add records one module, as given by --module NAME=URL. A repeated name
// replaces the earlier URL (later sources override earlier ones).
func (c *Config) Add(pair string) error {
	name, raw, ok := strings.Cut(strings.TrimSpace(pair), "=")
	name, raw = strings.TrimSpace(name), strings.TrimSpace(raw)
	if !ok || name == "" || raw == "" {
		return fault.Malformed("module", "expected NAME=URL, got %q", pair)
	}
	if !moduleName.MatchString(name) {
		return fault.Invalid("module", "module name %q must match %s", name, moduleName)
	}
	if err := checkURL(raw); err != nil {
		return fault.Invalid("module", "module %q: %v", name, err)
	}
	if c.Modules == nil {
		c.Modules = map[string]string{}
	}
	c.Modules[name] = strings.TrimRight(raw, "/")
	return nil
}

// AddList records the comma-separated NAME=URL pairs of TOOLSMITH_MODULES.
func (c *Config) AddList(list string) error {
	var errs []error
	for _, pair := range strings.Split(list, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		if err := c.Add(pair); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("modules: %s: %w", EnvModules, err)
	}
	return nil
}

// SetSlow records the comma-separated list of --slow-modules a,b.
func (c *Config) SetSlow(list string) {
	c.Slow = nil
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(c.Slow, s) {
			c.Slow = append(c.Slow, s)
		}
	}
}

// fileConfig is the JSON shape of a modules config file.
type fileConfig struct {
	Modules        map[string]string `json:"modules"`
	SlowModules    []string          `json:"slowModules"`
	DefaultTimeout string            `json:"defaultTimeout"`
	SlowTimeout    string            `json:"slowTimeout"`
}

// LoadFile merges a JSON config file into c:
//
//	{"modules": {"currency": "http://127.0.0.1:9001"}, "slowModules": ["deployer"],
//	 "defaultTimeout": "30s", "slowTimeout": "120s"}
//
// Unknown fields are errors, so a typo does not silently drop a module.
func (c *Config) LoadFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("modules: read config %q: %w", path, err)
	}
	return c.LoadJSON(b)
}

// LoadJSON is LoadFile for bytes already read.
func (c *Config) LoadJSON(b []byte) error {
	var fc fileConfig
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return fmt.Errorf("modules: parse config: %w", errors.Join(fault.ErrMalformed, err))
	}
	names := make([]string, 0, len(fc.Modules))
	for n := range fc.Modules {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := c.Add(n + "=" + fc.Modules[n]); err != nil {
			return fmt.Errorf("modules: config: %w", err)
		}
	}
	for _, s := range fc.SlowModules {
		if !slices.Contains(c.Slow, s) {
			c.Slow = append(c.Slow, s)
		}
	}
	for _, d := range []struct {
		field string
		raw   string
		dst   *time.Duration
	}{{"defaultTimeout", fc.DefaultTimeout, &c.DefaultTimeout}, {"slowTimeout", fc.SlowTimeout, &c.SlowTimeout}} {
		if d.raw == "" {
			continue
		}
		v, err := time.ParseDuration(d.raw)
		if err != nil || v <= 0 {
			return fmt.Errorf("modules: config: %w", fault.Invalid(d.field, "must be a positive duration such as 30s, got %q", d.raw))
		}
		*d.dst = v
	}
	return nil
}

// Flag adapts Config to flag.Value for the repeatable --module NAME=URL flag.
type Flag struct{ Config *Config }

// String lists the configured modules as NAME=URL pairs.
func (f Flag) String() string {
	if f.Config == nil {
		return ""
	}
	parts := make([]string, 0, len(f.Config.Modules))
	for _, n := range f.Config.Names() {
		parts = append(parts, n+"="+f.Config.Modules[n])
	}
	return strings.Join(parts, ",")
}

// Set adds one NAME=URL pair.
func (f Flag) Set(s string) error { return f.Config.Add(s) }
