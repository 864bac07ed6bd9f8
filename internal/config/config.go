// Package config is the typed configuration of the toolsmith binary: one
// Config struct, its defaults, its Validate method (every error names the
// flag and its TOOLSMITH_* environment variable), and the parsing of
// command-line flags with environment fallbacks. Flags win over the
// environment, which wins over defaults. The environment is passed in as a
// lookup function, so nothing here reads the process environment directly.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/toolsmith/toolsmith/identity"
)

// EnvPrefix prefixes the environment variable of every flag: --data-dir is
// TOOLSMITH_DATA_DIR.
const EnvPrefix = "TOOLSMITH_"

// Store kinds.
const (
	StoreSQLite = "sqlite"
	StoreNeo4j  = "neo4j"
)

// Embedder kinds.
const (
	EmbedderUSELite = "use-lite"
	EmbedderHashing = "hashing"
	EmbedderOllama  = "ollama"
	EmbedderOpenAI  = "openai"
)

// Defaults.
const (
	DefaultDataDir  = "./.toolsmith"
	DefaultHTTPAddr = "127.0.0.1:8080"
	DefaultLogLevel = "info"
	// ModelSubdir is where, under the data dir, the built-in embedder's
	// weights live unless --model-dir says otherwise.
	ModelSubdir = "models/use-lite-0.2.0"
	// StoreFile is the SQLite store's file name inside the data dir.
	StoreFile = "toolsmith.db"
	// DefaultTemporalAddr is the Temporal frontend (dev listens, others dial).
	DefaultTemporalAddr = "127.0.0.1:7233"
	// DefaultUIAddr is where dev serves the Temporal Web UI.
	DefaultUIAddr = "127.0.0.1:8233"
	// DefaultNamespace is the Temporal namespace.
	DefaultNamespace = "default"
)

// ErrInvalid is wrapped by every Validate and parse error. It is the
// command line's usage error (the CLI prints the usage and exits 2), a kind
// of its own beside fault.ErrInvalid: a request's invalid input must not
// make a command print its usage.
var ErrInvalid = errors.New("invalid configuration")

// Neo4j holds the connection settings of the Neo4j store.
type Neo4j struct {
	URI      string
	User     string
	Password string
	Database string
}

// Config is everything the toolsmith binary can be told.
type Config struct {
	// DataDir holds the SQLite store and, by default, the model weights;
	// absolute once Resolve has run (Load and Parse run it).
	DataDir string
	// HTTPAddr is the API's listen address.
	HTTPAddr string
	// NoDemo skips loading the demo catalogue on first start (dev only).
	NoDemo bool
	// Store is sqlite or neo4j.
	Store string
	// Neo4j configures the neo4j store.
	Neo4j Neo4j
	// Embedder is use-lite, hashing, ollama or openai.
	Embedder string
	// EmbedderModel names the provider's model (ollama, openai).
	EmbedderModel string
	// EmbedderURL is the provider's base URL (ollama, openai-compatible).
	EmbedderURL string
	// EmbedderAPIKey authenticates to the openai provider.
	EmbedderAPIKey string
	// ModelDir holds the built-in embedder's weights; empty means
	// <DataDir>/models/use-lite-0.2.0 (see Resolve).
	ModelDir string
	// LogLevel is debug, info, warn or error.
	LogLevel string

	// Temporal says where workflows run. dev listens on TemporalAddr (an
	// in-process server) and serves the Web UI on UIAddr; api and worker
	// dial TemporalAddr and link runs to UIURL.
	Temporal Temporal
	// Modules routes tool execution: module name → base URL.
	Modules []string
	// ModulesFile is a JSON file of modules (see modules.LoadFile).
	ModulesFile string
	// SlowModules get the slow timeout (120 s instead of 30 s).
	SlowModules string
	// ModuleRefresh is the period of the module discovery schedule.
	ModuleRefresh time.Duration
	// LLM decomposes novel verbs; provider none disables decomposition.
	LLM LLM
	// SubstituteThreshold is the similarity a match needs to substitute a
	// novel verb, on top of the default rule's other bars; 0 means the
	// embedder's default rule alone.
	SubstituteThreshold float64
	// ReviewTimeout bounds how long an airlock review waits for a decision.
	ReviewTimeout time.Duration
	// GapDiscovery proposes external definitions for recurring gaps (off
	// while MinCount is 0).
	GapDiscovery GapDiscovery
	// AnalyticsEvery is the period of the scheduled analytics.
	AnalyticsEvery time.Duration
	// MemoryLimit is the Go runtime's soft memory limit in bytes
	// (runtime/debug.SetMemoryLimit; 0: none). GOMEMLIMIT, when set, wins.
	MemoryLimit int64
	// Auth configures OIDC bearer tokens, rate limits and body size.
	Auth Auth
}

// GapDiscovery configures gap-driven discovery: a schedule that, for each
// open gap asked at least MinCount times, searches the definitions of the
// registered sources and proposes the best one scoring at least MinScore
// for review (a person still approves).
type GapDiscovery struct {
	MinCount int
	MinScore float64
	Every    time.Duration
}

// Auth holds the authentication and limit settings of the API.
type Auth struct {
	// OIDC bearer tokens (off while OIDCIssuer is empty).
	OIDCIssuer, OIDCAudience, OIDCJWKSURL           string
	OIDCLevelClaim, OIDCRolesClaim, OIDCGroupsClaim string
	OIDCDefaultLevel, OIDCMaxLevel                  string
	// Default per-caller rate limits per minute (0: built-in default, <0: none).
	RateSearch, RateExecute, RateVerbs int
	// MaxBodyBytes bounds request bodies (0: 8 MiB).
	MaxBodyBytes int64
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client, parsed once from --trusted-proxies (addresses or CIDR
	// prefixes, comma-separated); the zero value: the connection's peer is
	// the client.
	TrustedProxies identity.Proxies
}

// Temporal holds the Temporal connection settings.
type Temporal struct {
	Addr      string
	UIAddr    string
	UIURL     string
	Namespace string
	// TLS (external clusters): client certificate and key, CA, server name.
	TLSCert, TLSKey, TLSCA, TLSServerName string
}

// LLM holds the language-model settings (see package llm).
type LLM struct {
	Provider, URL, Model, APIKey string
	// BuildTokenBudget bounds the tokens one build from scratch may spend
	// (BuildToolWorkflow, every round together).
	BuildTokenBudget int
}

// Default returns the configuration used when nothing is set.
func Default() Config {
	return Config{
		DataDir:        DefaultDataDir,
		HTTPAddr:       DefaultHTTPAddr,
		Store:          StoreSQLite,
		Neo4j:          Neo4j{User: "neo4j", Database: "neo4j"},
		Embedder:       EmbedderUSELite,
		LogLevel:       DefaultLogLevel,
		Temporal:       Temporal{Addr: DefaultTemporalAddr, UIAddr: DefaultUIAddr, Namespace: DefaultNamespace},
		ModuleRefresh:  10 * time.Minute,
		LLM:            LLM{Provider: "none", BuildTokenBudget: 40000},
		ReviewTimeout:  7 * 24 * time.Hour,
		GapDiscovery:   GapDiscovery{MinScore: 0.5, Every: time.Hour},
		AnalyticsEvery: 24 * time.Hour,
		MemoryLimit:    450 << 20,
	}
}

// StorePath is the SQLite store file inside the data dir.
func (c Config) StorePath() string { return filepath.Join(c.DataDir, StoreFile) }

// Resolve fills derived defaults (ModelDir from DataDir) and makes DataDir
// and ModelDir absolute against the working directory, once, at start-up:
// every later path is joined onto an absolute directory, so no component
// that runs a command in a directory of its own (the airlock's go build)
// can resolve a relative data dir a second time. Resolve is idempotent.
func (c *Config) Resolve() error {
	for _, d := range []struct {
		flag string
		dir  *string
	}{{"data-dir", &c.DataDir}, {"model-dir", &c.ModelDir}} {
		if strings.TrimSpace(*d.dir) == "" {
			continue
		}
		abs, err := filepath.Abs(*d.dir)
		if err != nil {
			return invalid(d.flag, "cannot be made absolute (%q): %v", *d.dir, err)
		}
		*d.dir = abs
	}
	if c.ModelDir == "" && strings.TrimSpace(c.DataDir) != "" {
		c.ModelDir = filepath.Join(c.DataDir, filepath.FromSlash(ModelSubdir))
	}
	return nil
}

// Level parses LogLevel.
func (c Config) Level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return 0, invalid("log-level", "must be debug, info, warn or error, got %q", c.LogLevel)
	}
	return l, nil
}

// Validate checks the configuration; each problem names its flag and
// environment variable, and all problems are reported together.
func (c Config) Validate() error {
	var errs []error
	if strings.TrimSpace(c.DataDir) == "" {
		errs = append(errs, invalid("data-dir", "must not be empty"))
	}
	if c.Auth.OIDCIssuer != "" && c.Auth.OIDCAudience == "" {
		errs = append(errs, invalid("oidc-audience", "is required with --oidc-issuer: tokens for other clients must be refused"))
	}
	if c.Auth.OIDCIssuer != "" && !hasScheme(c.Auth.OIDCIssuer, "https", "http") {
		errs = append(errs, invalid("oidc-issuer", "must be an http(s) URL, got %q", c.Auth.OIDCIssuer))
	}
	if c.Auth.MaxBodyBytes < 0 {
		errs = append(errs, invalid("max-body-bytes", "must not be negative"))
	}
	if _, port, err := splitHostPort(c.HTTPAddr); err != nil {
		errs = append(errs, invalid("http-addr", "must be host:port, got %q: %v", c.HTTPAddr, err))
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		errs = append(errs, invalid("http-addr", "port must be a number between 0 and 65535, got %q", port))
	}
	switch c.Store {
	case StoreSQLite:
	case StoreNeo4j:
		if c.Neo4j.URI == "" {
			errs = append(errs, invalid("neo4j-uri", "is required with --store=neo4j"))
		} else if !hasScheme(c.Neo4j.URI, "neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc") {
			errs = append(errs, invalid("neo4j-uri", "must start with neo4j://, neo4j+s://, bolt:// or bolt+s://, got %q", c.Neo4j.URI))
		}
		if c.Neo4j.User == "" {
			errs = append(errs, invalid("neo4j-user", "is required with --store=neo4j"))
		}
	default:
		errs = append(errs, invalid("store", "must be %s or %s, got %q", StoreSQLite, StoreNeo4j, c.Store))
	}
	switch c.Embedder {
	case EmbedderUSELite:
	case EmbedderHashing:
	case EmbedderOllama:
		if c.EmbedderModel == "" {
			errs = append(errs, invalid("embedder-model", "is required with --embedder=ollama (e.g. nomic-embed-text)"))
		}
	case EmbedderOpenAI:
		if c.EmbedderModel == "" {
			errs = append(errs, invalid("embedder-model", "is required with --embedder=openai (e.g. text-embedding-3-small)"))
		}
		if c.EmbedderAPIKey == "" {
			errs = append(errs, invalid("embedder-api-key", "is required with --embedder=openai"))
		}
	default:
		errs = append(errs, invalid("embedder", "must be one of %s, %s, %s or %s, got %q", EmbedderUSELite, EmbedderHashing, EmbedderOllama, EmbedderOpenAI, c.Embedder))
	}
	if c.EmbedderURL != "" && !hasScheme(c.EmbedderURL, "http", "https") {
		errs = append(errs, invalid("embedder-url", "must be an http:// or https:// URL, got %q", c.EmbedderURL))
	}
	if _, err := c.Level(); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := splitHostPort(c.Temporal.Addr); err != nil {
		errs = append(errs, invalid("temporal-addr", "must be host:port, got %q: %v", c.Temporal.Addr, err))
	}
	if c.Temporal.UIAddr != "" {
		if _, _, err := splitHostPort(c.Temporal.UIAddr); err != nil {
			errs = append(errs, invalid("ui-addr", "must be host:port or empty (no UI), got %q: %v", c.Temporal.UIAddr, err))
		}
	}
	if c.Temporal.UIURL != "" && !hasScheme(c.Temporal.UIURL, "http", "https") {
		errs = append(errs, invalid("ui-url", "must be an http:// or https:// URL, got %q", c.Temporal.UIURL))
	}
	if strings.TrimSpace(c.Temporal.Namespace) == "" {
		errs = append(errs, invalid("temporal-namespace", "must not be empty"))
	}
	if (c.Temporal.TLSCert == "") != (c.Temporal.TLSKey == "") {
		errs = append(errs, invalid("temporal-tls-cert", "and --temporal-tls-key go together"))
	}
	if c.ModuleRefresh < time.Minute {
		errs = append(errs, invalid("module-refresh", "must be at least 1m, got %s", c.ModuleRefresh))
	}
	if c.SubstituteThreshold < 0 || c.SubstituteThreshold > 1 {
		errs = append(errs, invalid("substitute-threshold", "must be between 0 and 1, got %g", c.SubstituteThreshold))
	}
	if c.ReviewTimeout < time.Minute {
		errs = append(errs, invalid("review-timeout", "must be at least 1m, got %s", c.ReviewTimeout))
	}
	if c.GapDiscovery.MinCount < 0 {
		errs = append(errs, invalid("gap-discovery-min-count", "must be ≥ 0 (0: off), got %d", c.GapDiscovery.MinCount))
	}
	if c.GapDiscovery.MinScore <= 0 || c.GapDiscovery.MinScore > 1 {
		errs = append(errs, invalid("gap-discovery-min-score", "must be in (0, 1], got %g", c.GapDiscovery.MinScore))
	}
	if c.MemoryLimit != 0 && c.MemoryLimit < 64<<20 {
		errs = append(errs, invalid("memory-limit", "must be 0 (none) or at least 64 MiB, got %d bytes", c.MemoryLimit))
	}
	if c.AnalyticsEvery < time.Minute {
		errs = append(errs, invalid("analytics-every", "must be at least 1m, got %s", c.AnalyticsEvery))
	}
	if c.GapDiscovery.Every < time.Minute {
		errs = append(errs, invalid("gap-discovery-every", "must be at least 1m, got %s", c.GapDiscovery.Every))
	}
	switch strings.ToLower(c.LLM.Provider) {
	case "", "none":
	case "openai", "ollama":
		if c.LLM.Model == "" {
			errs = append(errs, invalid("llm-model", "is required with --llm-provider=%s", c.LLM.Provider))
		}
	default:
		errs = append(errs, invalid("llm-provider", "must be none, openai or ollama, got %q", c.LLM.Provider))
	}
	if c.LLM.BuildTokenBudget < 1000 {
		errs = append(errs, invalid("build-token-budget", "must be at least 1000, got %d", c.LLM.BuildTokenBudget))
	}
	if c.LLM.URL != "" && !hasScheme(c.LLM.URL, "http", "https") {
		errs = append(errs, invalid("llm-url", "must be an http:// or https:// URL, got %q", c.LLM.URL))
	}
	return errors.Join(errs...)
}

func splitHostPort(addr string) (string, string, error) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return "", "", errors.New("missing port")
	}
	host, port := addr[:i], addr[i+1:]
	if strings.HasPrefix(host, "[") != strings.HasSuffix(host, "]") {
		return "", "", errors.New("unbalanced brackets")
	}
	if port == "" {
		return "", "", errors.New("missing port")
	}
	return host, port, nil
}

func hasScheme(u string, schemes ...string) bool {
	scheme, rest, ok := strings.Cut(u, "://")
	return ok && rest != "" && slices.Contains(schemes, strings.ToLower(scheme))
}

// EnvName returns the environment variable of a flag: "neo4j-uri" →
// "TOOLSMITH_NEO4J_URI".
func EnvName(flagName string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func invalid(flagName, format string, args ...any) error {
	return fmt.Errorf("config: --%s (%s) %s: %w", flagName, EnvName(flagName), fmt.Sprintf(format, args...), ErrInvalid)
}

// Flags selects which groups of flags a subcommand accepts.
type Flags uint

// Flag groups.
const (
	// FlagsServe: data dir, HTTP address, store, embedder, log level.
	FlagsServe Flags = 1 << iota
	// FlagsDemo: --no-demo.
	FlagsDemo
	// FlagsModel: --model-dir and --data-dir only (model fetch).
	FlagsModel
	// FlagsTemporal: Temporal address, namespace, UI and TLS.
	FlagsTemporal
	// FlagsWorker: modules, LLM, substitution threshold, review timeout.
	FlagsWorker
)

// listFlag appends each value (itself possibly comma-separated) to a list,
// so --module a=u --module b=v and TOOLSMITH_MODULES=a=u,b=v both work.
type listFlag struct{ list *[]string }

func (l listFlag) String() string {
	if l.list == nil {
		return ""
	}
	return strings.Join(*l.list, ",")
}

func (l listFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l.list = append(*l.list, p)
		}
	}
	return nil
}

// Type names the value in help output.
func (l listFlag) Type() string { return "NAME=URL" }

// proxiesFlag parses --trusted-proxies once, as it is set (from the
// command line or its variable), into the identity.Proxies the server
// uses: an entry that is neither an IP address nor a CIDR prefix is the
// flag's error, naming the entry.
type proxiesFlag struct{ p *identity.Proxies }

func (f proxiesFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

func (f proxiesFlag) Set(v string) error {
	p, err := identity.ParseProxies(strings.Split(v, ","))
	if err != nil {
		return fmt.Errorf("must list IP addresses or CIDR prefixes: %w", err)
	}
	*f.p = p
	return nil
}

// Type names the value in help output.
func (proxiesFlag) Type() string { return "ADDRS" }

// envAliases are the standard variables some flags also read when neither
// the flag nor its TOOLSMITH_* variable is set.
var envAliases = map[string]string{
	"temporal-addr":      "TEMPORAL_ADDRESS",
	"temporal-namespace": "TEMPORAL_NAMESPACE",
	"llm-api-key":        "OPENAI_API_KEY",
}

// Register adds the selected flags to fs, bound to c, with c's current
// values as defaults. Each flag's help names its environment variable.
func (c *Config) Register(fs *pflag.FlagSet, groups Flags) {
	before := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
	if groups&(FlagsServe|FlagsModel) != 0 {
		fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory holding the SQLite store and, by default, the model weights")
		fs.StringVar(&c.ModelDir, "model-dir", c.ModelDir, "directory of the built-in USE-Lite embedder's weights (default <data-dir>/"+ModelSubdir+")")
		fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error")
	}
	if groups&FlagsServe != 0 {
		fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "HTTP listen address")
		fs.StringVar(&c.Store, "store", c.Store, "graph store: sqlite or neo4j")
		fs.StringVar(&c.Neo4j.URI, "neo4j-uri", c.Neo4j.URI, "Neo4j URI, e.g. neo4j://127.0.0.1:7687 (with --store=neo4j)")
		fs.StringVar(&c.Neo4j.User, "neo4j-user", c.Neo4j.User, "Neo4j user")
		fs.StringVar(&c.Neo4j.Password, "neo4j-password", c.Neo4j.Password, "Neo4j password (prefer the environment variable)")
		fs.StringVar(&c.Neo4j.Database, "neo4j-database", c.Neo4j.Database, "Neo4j database")
		fs.StringVar(&c.Embedder, "embedder", c.Embedder, "embedder: use-lite, hashing, ollama or openai")
		fs.StringVar(&c.EmbedderModel, "embedder-model", c.EmbedderModel, "embedding model name for ollama/openai")
		fs.StringVar(&c.EmbedderURL, "embedder-url", c.EmbedderURL, "embedding provider base URL for ollama/openai")
		fs.StringVar(&c.EmbedderAPIKey, "embedder-api-key", c.EmbedderAPIKey, "API key for --embedder=openai (prefer the environment variable)")
	}
	if groups&FlagsServe != 0 {
		fs.StringVar(&c.Auth.OIDCIssuer, "oidc-issuer", c.Auth.OIDCIssuer, "accept OIDC/JWT bearer tokens from this issuer URL (empty: API keys only)")
		fs.StringVar(&c.Auth.OIDCAudience, "oidc-audience", c.Auth.OIDCAudience, "audience (client id) OIDC tokens must carry")
		fs.StringVar(&c.Auth.OIDCJWKSURL, "oidc-jwks-url", c.Auth.OIDCJWKSURL, "JWKS URL of the issuer's signing keys (empty: OIDC discovery)")
		fs.StringVar(&c.Auth.OIDCLevelClaim, "oidc-level-claim", c.Auth.OIDCLevelClaim, "claim holding the level guest|user|admin|owner (default toolsmith_level)")
		fs.StringVar(&c.Auth.OIDCRolesClaim, "oidc-roles-claim", c.Auth.OIDCRolesClaim, "claim holding the roles (default roles)")
		fs.StringVar(&c.Auth.OIDCGroupsClaim, "oidc-groups-claim", c.Auth.OIDCGroupsClaim, "claim holding the allowed tool groups (default groups)")
		fs.StringVar(&c.Auth.OIDCDefaultLevel, "oidc-default-level", c.Auth.OIDCDefaultLevel, "level of a token without the level claim (default user)")
		fs.StringVar(&c.Auth.OIDCMaxLevel, "oidc-max-level", c.Auth.OIDCMaxLevel, "highest level a token may claim (default admin)")
		fs.IntVar(&c.Auth.RateSearch, "rate-search", c.Auth.RateSearch, "default searches per minute per caller (0: 600; negative: unlimited; a key may set its own)")
		fs.IntVar(&c.Auth.RateExecute, "rate-execute", c.Auth.RateExecute, "default executions per minute per caller (0: 120; negative: unlimited)")
		fs.IntVar(&c.Auth.RateVerbs, "rate-verbs", c.Auth.RateVerbs, "default verb fulfilments per minute per caller (0: 60; negative: unlimited)")
		fs.Int64Var(&c.Auth.MaxBodyBytes, "max-body-bytes", c.Auth.MaxBodyBytes, "largest request body accepted, in bytes (0: 8 MiB)")
		fs.Var(proxiesFlag{&c.Auth.TrustedProxies}, "trusted-proxies", "reverse proxies whose X-Forwarded-For names the client, as IP addresses or CIDR prefixes, comma-separated (empty: the peer is the client)")
		fs.Int64Var(&c.MemoryLimit, "memory-limit", c.MemoryLimit, "the Go runtime's soft memory limit in bytes (0: none; the GOMEMLIMIT environment variable wins)")
	}
	if groups&FlagsDemo != 0 {
		fs.BoolVar(&c.NoDemo, "no-demo", c.NoDemo, "do not load the demo catalogue on first start")
	}
	if groups&FlagsTemporal != 0 {
		fs.StringVar(&c.Temporal.Addr, "temporal-addr", c.Temporal.Addr, "Temporal frontend host:port (dev: where the in-process server listens; others: what they dial; also TEMPORAL_ADDRESS)")
		fs.StringVar(&c.Temporal.UIAddr, "ui-addr", c.Temporal.UIAddr, "where the development Temporal Web UI listens (toolsmith dev only; empty: no UI)")
		fs.StringVar(&c.Temporal.UIURL, "ui-url", c.Temporal.UIURL, "api/worker: base URL of the Temporal Web UI, for links to runs")
		fs.StringVar(&c.Temporal.Namespace, "temporal-namespace", c.Temporal.Namespace, "Temporal namespace (also TEMPORAL_NAMESPACE)")
		fs.StringVar(&c.Temporal.TLSCert, "temporal-tls-cert", c.Temporal.TLSCert, "client certificate (PEM) for a TLS Temporal cluster")
		fs.StringVar(&c.Temporal.TLSKey, "temporal-tls-key", c.Temporal.TLSKey, "client key (PEM) for a TLS Temporal cluster")
		fs.StringVar(&c.Temporal.TLSCA, "temporal-tls-ca", c.Temporal.TLSCA, "CA certificate (PEM) to verify the Temporal cluster")
		fs.StringVar(&c.Temporal.TLSServerName, "temporal-tls-server-name", c.Temporal.TLSServerName, "server name to verify the Temporal cluster's certificate against")
	}
	if groups&FlagsWorker != 0 {
		mods := listFlag{&c.Modules}
		fs.Var(mods, "module", "module routing NAME=URL (repeatable; modules answer GET /manifest and POST /execute)")
		fs.Var(mods, "modules", "modules as a comma-separated NAME=URL list")
		fs.StringVar(&c.ModulesFile, "modules-file", c.ModulesFile, "JSON file of modules {\"modules\": {NAME: URL}, \"slow\": [NAME]}")
		fs.StringVar(&c.SlowModules, "slow-modules", c.SlowModules, "comma-separated modules that get the 120 s timeout instead of 30 s")
		fs.DurationVar(&c.ModuleRefresh, "module-refresh", c.ModuleRefresh, "period of the module discovery schedule")
		fs.StringVar(&c.LLM.Provider, "llm-provider", c.LLM.Provider, "language model for decomposition: none, openai (any OpenAI-compatible server) or ollama")
		fs.StringVar(&c.LLM.URL, "llm-url", c.LLM.URL, "language model base URL (openai: including /v1)")
		fs.StringVar(&c.LLM.Model, "llm-model", c.LLM.Model, "language model name")
		fs.StringVar(&c.LLM.APIKey, "llm-api-key", c.LLM.APIKey, "language model API key (prefer the environment; also OPENAI_API_KEY)")
		fs.IntVar(&c.LLM.BuildTokenBudget, "build-token-budget", c.LLM.BuildTokenBudget, "tokens one build of a tool from scratch may spend, all rounds together")
		fs.Float64Var(&c.SubstituteThreshold, "substitute-threshold", c.SubstituteThreshold, "similarity a close match needs to substitute a novel verb (0: the embedder's calibrated rule; set, it replaces the rule's threshold and its margins stay)")
		fs.DurationVar(&c.ReviewTimeout, "review-timeout", c.ReviewTimeout, "how long an airlock review waits for approve/reject before it ends")
		fs.IntVar(&c.GapDiscovery.MinCount, "gap-discovery-min-count", c.GapDiscovery.MinCount, "propose external definitions for review when a gap (a verb nothing fulfilled) recurs this many times (0: off)")
		fs.Float64Var(&c.GapDiscovery.MinScore, "gap-discovery-min-score", c.GapDiscovery.MinScore, "similarity a definition needs to be proposed for a gap")
		fs.DurationVar(&c.AnalyticsEvery, "analytics-every", c.AnalyticsEvery, "period of the scheduled analytics (success rates, stale tools, trending queries, gaps; ranking's popularity)")
		fs.DurationVar(&c.GapDiscovery.Every, "gap-discovery-every", c.GapDiscovery.Every, "period of the gap-driven discovery schedule")
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !before[f.Name] {
			f.Usage += " [env " + EnvName(f.Name) + "]"
		}
	})
}

// Binding is a flag set bound to a Config by Bind: parse the flag set
// (cobra does it for a command), then call Load.
type Binding struct {
	fs  *pflag.FlagSet
	cfg *Config
}

// Bind registers the selected groups of flags on fs, bound to a Config
// that starts from Default. A command built with cobra binds its own flag
// set (cmd.Flags()) and calls Load in its RunE.
func Bind(fs *pflag.FlagSet, groups Flags) *Binding {
	cfg := Default()
	b := &Binding{fs: fs, cfg: &cfg}
	cfg.Register(fs, groups)
	return b
}

// Load returns the configuration once the flag set is parsed: every bound
// flag not given on the command line takes its TOOLSMITH_* variable (or its
// standard alias) from lookupEnv, then derived defaults are resolved and the
// result validated. Errors wrap ErrInvalid and name the flag and variable.
func (b *Binding) Load(lookupEnv func(string) (string, bool)) (Config, error) {
	var errs []error
	b.fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || lookupEnv == nil || !b.owns(f) {
			return
		}
		v, ok := lookupEnv(EnvName(f.Name))
		if !ok {
			if alias, has := envAliases[f.Name]; has {
				v, ok = lookupEnv(alias)
			}
		}
		if !ok {
			return
		}
		if err := b.fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("config: %s=%q for --%s: %v: %w", EnvName(f.Name), v, f.Name, err, ErrInvalid))
		}
	})
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	cfg := *b.cfg
	if err := cfg.Resolve(); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// owns reports whether f is one of the configuration's flags (and not, say,
// a command's own --json or cobra's --help, which have no variable).
func (b *Binding) owns(f *pflag.Flag) bool {
	return strings.HasSuffix(f.Usage, "[env "+EnvName(f.Name)+"]")
}

// Parse parses args into a configuration that starts from Default, takes
// TOOLSMITH_* variables from lookupEnv for every flag not given on the
// command line, resolves derived defaults and validates the result. Flags
// may come before, between or after positional arguments; "--" ends the
// flags. Usage and flag errors are written to out. The returned error wraps
// ErrInvalid or is flag.ErrHelp. It serves commands that parse their own
// arguments; a cobra command uses Bind and Load instead.
func Parse(name string, groups Flags, args []string, lookupEnv func(string) (string, bool), out io.Writer) (Config, []string, error) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(out)
	b := Bind(fs, groups)
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage of %s:\n%s", name, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return Config{}, nil, flag.ErrHelp
		}
		return Config{}, nil, fmt.Errorf("config: %v: %w", err, ErrInvalid)
	}
	cfg, err := b.Load(lookupEnv)
	if err != nil {
		return Config{}, nil, err
	}
	return cfg, fs.Args(), nil
}
