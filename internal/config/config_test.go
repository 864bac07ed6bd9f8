package config_test

import (
	"errors"
	"flag"
	"io"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/toolsmith/toolsmith/internal/config"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseDefaults(t *testing.T) {
	cfg, rest, err := config.Parse("dev", config.FlagsServe|config.FlagsDemo, []string{"extra"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The relative default is made absolute once, against the working
	// directory, so nothing later can join it onto another directory.
	dataDir, err := filepath.Abs(config.DefaultDataDir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != dataDir || cfg.HTTPAddr != "127.0.0.1:8080" || cfg.Store != "sqlite" || cfg.Embedder != "use-lite" || cfg.NoDemo {
		t.Fatalf("defaults: %+v", cfg)
	}
	if want := filepath.Join(dataDir, "models", "use-lite-0.2.0"); cfg.ModelDir != want {
		t.Fatalf("model dir %q, want %q", cfg.ModelDir, want)
	}
	if cfg.StorePath() != filepath.Join(dataDir, "toolsmith.db") {
		t.Fatalf("store path %q", cfg.StorePath())
	}
	if len(rest) != 1 || rest[0] != "extra" {
		t.Fatalf("rest %v", rest)
	}
}

func TestParsePrecedence(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(config.Config) bool
	}{
		{"env sets data dir and model dir follows", nil, map[string]string{"TOOLSMITH_DATA_DIR": "/d"},
			func(c config.Config) bool {
				return c.DataDir == "/d" && c.ModelDir == filepath.Join("/d", "models", "use-lite-0.2.0")
			}},
		{"flag beats env", []string{"--http-addr", "127.0.0.1:9"}, map[string]string{"TOOLSMITH_HTTP_ADDR": "127.0.0.1:7"},
			func(c config.Config) bool { return c.HTTPAddr == "127.0.0.1:9" }},
		{"explicit model dir env", nil, map[string]string{"TOOLSMITH_MODEL_DIR": "/m"},
			func(c config.Config) bool { return c.ModelDir == "/m" }},
		{"bool env", nil, map[string]string{"TOOLSMITH_NO_DEMO": "true"},
			func(c config.Config) bool { return c.NoDemo }},
		// --trusted-proxies is parsed once, here: the server takes the
		// parsed proxies as they are.
		{"trusted proxies", []string{"--trusted-proxies", "10.0.0.5, 172.30.80.0/24"}, nil,
			func(c config.Config) bool {
				p := c.Auth.TrustedProxies
				return p.Trusts(netip.MustParseAddr("10.0.0.5")) && p.Trusts(netip.MustParseAddr("172.30.80.9")) &&
					!p.Trusts(netip.MustParseAddr("10.0.0.6")) && p.String() == "10.0.0.5/32,172.30.80.0/24"
			}},
		{"trusted proxies from env", nil, map[string]string{"TOOLSMITH_TRUSTED_PROXIES": "::1"},
			func(c config.Config) bool { return c.Auth.TrustedProxies.Trusts(netip.MustParseAddr("::1")) }},
		{"no trusted proxies", nil, nil,
			func(c config.Config) bool { return !c.Auth.TrustedProxies.Trusts(netip.MustParseAddr("127.0.0.1")) }},
		{"neo4j from env", []string{"--store=neo4j"}, map[string]string{"TOOLSMITH_NEO4J_URI": "neo4j://h:7687", "TOOLSMITH_NEO4J_PASSWORD": "pw"},
			func(c config.Config) bool {
				return c.Store == "neo4j" && c.Neo4j.URI == "neo4j://h:7687" && c.Neo4j.Password == "pw" && c.Neo4j.User == "neo4j"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := config.Parse("dev", config.FlagsServe|config.FlagsDemo, tt.args, env(tt.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Fatalf("unexpected config %+v", cfg)
			}
		})
	}
}

func TestParseErrorsNameTheFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"neo4j without uri", []string{"--store", "neo4j"}, nil, []string{"--neo4j-uri", "TOOLSMITH_NEO4J_URI"}},
		{"bad neo4j scheme", []string{"--store", "neo4j", "--neo4j-uri", "http://x"}, nil, []string{"--neo4j-uri"}},
		{"bad trusted proxy", []string{"--trusted-proxies", "10.0.0.1, proxy.local"}, nil, []string{"--trusted-proxies", `"proxy.local"`}},
		{"unknown store", []string{"--store", "mongo"}, nil, []string{"--store", `"mongo"`}},
		{"unknown embedder", []string{"--embedder", "bert"}, nil, []string{"--embedder"}},
		{"ollama without model", []string{"--embedder", "ollama"}, nil, []string{"--embedder-model"}},
		{"bad url", []string{"--embedder", "openai", "--embedder-model", "m", "--embedder-url", "ftp://x"}, nil, []string{"--embedder-url", "--embedder-api-key"}},
		{"bad addr", []string{"--http-addr", "localhost"}, nil, []string{"--http-addr"}},
		{"bad port", []string{"--http-addr", "localhost:http"}, nil, []string{"--http-addr"}},
		{"bad level", []string{"--log-level", "loud"}, nil, []string{"--log-level"}},
		{"bad env bool", nil, map[string]string{"TOOLSMITH_NO_DEMO": "maybe"}, []string{"TOOLSMITH_NO_DEMO", "--no-demo"}},
		{"unknown flag", []string{"--nope"}, nil, []string{"nope"}},
		{"two problems at once", []string{"--store", "x", "--embedder", "y"}, nil, []string{"--store", "--embedder"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := config.Parse("dev", config.FlagsServe|config.FlagsDemo, tt.args, env(tt.env), io.Discard)
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("err %v, want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
		})
	}
}

func TestFlagGroups(t *testing.T) {
	// model fetch accepts --model-dir but not --store.
	if _, _, err := config.Parse("model fetch", config.FlagsModel, []string{"--model-dir", "/m"}, nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.Parse("model fetch", config.FlagsModel, []string{"--store", "sqlite"}, nil, io.Discard); !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("--store on model fetch: %v", err)
	}
	// api has no --no-demo.
	if _, _, err := config.Parse("api", config.FlagsServe, []string{"--no-demo"}, nil, io.Discard); !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("--no-demo on api: %v", err)
	}
	// Env variables of flags a command lacks are ignored.
	if _, _, err := config.Parse("api", config.FlagsServe, nil, env(map[string]string{"TOOLSMITH_NO_DEMO": "maybe"}), io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.Parse("api", config.FlagsServe, []string{"-h"}, nil, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
}

func TestLevel(t *testing.T) {
	c := config.Default()
	c.LogLevel = "debug"
	if l, err := c.Level(); err != nil || l.String() != "DEBUG" {
		t.Fatalf("%v %v", l, err)
	}
}

func TestParseInterspersedAndHelp(t *testing.T) {
	tests := []struct {
		name string
		args []string
		rest []string
		addr string
	}{
		{"flag after argument", []string{"ID", "--temporal-addr", "h:1"}, []string{"ID"}, "h:1"},
		{"flag before argument", []string{"--temporal-addr=h:2", "ID"}, []string{"ID"}, "h:2"},
		{"double dash ends flags", []string{"ID", "--", "--temporal-addr"}, []string{"ID", "--temporal-addr"}, config.DefaultTemporalAddr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, rest, err := config.Parse("x", config.FlagsTemporal, tt.args, nil, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Temporal.Addr != tt.addr || strings.Join(rest, " ") != strings.Join(tt.rest, " ") {
				t.Fatalf("addr %q rest %q, want %q %q", cfg.Temporal.Addr, rest, tt.addr, tt.rest)
			}
		})
	}
	for _, h := range []string{"-h", "--help"} {
		if _, _, err := config.Parse("x", config.FlagsTemporal, []string{h}, nil, io.Discard); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%s: %v, want flag.ErrHelp", h, err)
		}
	}
}

func TestBindLoadLeavesOtherFlagsAlone(t *testing.T) {
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "a command's own flag")
	b := config.Bind(fs, config.FlagsModel)
	if err := fs.Parse([]string{"DIR", "--log-level", "warn"}); err != nil {
		t.Fatal(err)
	}
	// TOOLSMITH_JSON is not a configuration variable: it must not be read.
	cfg, err := b.Load(env(map[string]string{"TOOLSMITH_JSON": "true", "TOOLSMITH_LOG_LEVEL": "error", "TOOLSMITH_DATA_DIR": "/d"}))
	if err != nil {
		t.Fatal(err)
	}
	if *asJSON || cfg.LogLevel != "warn" || cfg.DataDir != "/d" || fs.Arg(0) != "DIR" {
		t.Fatalf("json %v data dir %q args %v", *asJSON, cfg.DataDir, fs.Args())
	}
	if u := fs.Lookup("data-dir").Usage; !strings.Contains(u, "[env TOOLSMITH_DATA_DIR]") {
		t.Fatalf("help does not name the variable: %q", u)
	}
}

// TestLoadResolvesRelativeDirsOnce: a relative --data-dir (and
// --model-dir) becomes absolute against the working directory at load, so
// a later join onto another directory cannot double it.
func TestLoadResolvesRelativeDirsOnce(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	wd, err := filepath.EvalSymlinks(wd)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Parse("dev", config.FlagsServe, []string{"--data-dir", "state/.toolsmith"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "state", ".toolsmith"); cfg.DataDir != want {
		t.Fatalf("data dir %q, want %q", cfg.DataDir, want)
	}
	if want := filepath.Join(wd, "state", ".toolsmith", "models", "use-lite-0.2.0"); cfg.ModelDir != want {
		t.Fatalf("model dir %q, want %q", cfg.ModelDir, want)
	}
	cfg, _, err = config.Parse("dev", config.FlagsServe, []string{"--model-dir", "weights"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(wd, "weights"); cfg.ModelDir != want {
		t.Fatalf("model dir %q, want %q", cfg.ModelDir, want)
	}
	again := cfg
	if err := again.Resolve(); err != nil || again.DataDir != cfg.DataDir || again.ModelDir != cfg.ModelDir {
		t.Fatalf("Resolve is not idempotent: %q %q (%v)", again.DataDir, again.ModelDir, err)
	}
}
