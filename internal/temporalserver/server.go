package temporalserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/toolsmith/toolsmith/internal/temporallog"
)

// Defaults for Options.
const (
	DefaultFrontendAddr = "127.0.0.1:7233"
	DefaultUIAddr       = "127.0.0.1:8233"
	DefaultNamespace    = "default"
	// DBFile is the SQLite file created under Options.DataDir.
	DBFile = "temporal.db"
)

const clusterName = "active"

// Options configures Start.
type Options struct {
	// DataDir holds DBFile so history survives a restart; empty keeps the
	// database in memory (tests).
	DataDir string
	// FrontendAddr is the gRPC address of the frontend, DefaultFrontendAddr
	// when empty. Port 0 picks a free port; Server.Addr reports it.
	FrontendAddr string
	// UIAddr is where the Web UI listens; empty starts no UI. Use
	// DefaultUIAddr for the usual port. Port 0 picks a free port.
	UIAddr string
	// Namespace is created at start, DefaultNamespace when empty.
	Namespace string
	// SearchAttributes are registered on Namespace, idempotently.
	SearchAttributes map[string]enumspb.IndexedValueType
	// Logger receives the server's records; nil logs warnings and errors
	// to stderr.
	Logger *slog.Logger
	// Verbose forwards the server's info records too; by default only
	// warnings and errors reach Logger.
	Verbose bool
	// DynamicConfig overrides or adds dynamic config values by key.
	DynamicConfig map[string]any
}

// Server is a running in-process Temporal server.
type Server struct {
	srv    temporal.Server
	ui     *uiserver.Server
	uiDone chan struct{}
	op     client.Client
	addr   string
	uiURL  string
	ns     string
	logger *slog.Logger
	// stopping quiets the server's shutdown warnings (see slogLogger).
	stopping atomic.Bool
	stopOnce sync.Once
}

// Start starts the server (and the UI when opts.UIAddr is set), waits until
// the frontend answers and registers the search attributes.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.FrontendAddr == "" {
		opts.FrontendAddr = DefaultFrontendAddr
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	host, port, err := resolveAddr(opts.FrontendAddr)
	if err != nil {
		return nil, fmt.Errorf("temporalserver: frontend address: %w", err)
	}
	s := &Server{addr: net.JoinHostPort(host, strconv.Itoa(port)), ns: opts.Namespace, logger: opts.Logger}
	// The server panics (frontend.NewHTTPAPIServer) when its frontend port
	// is taken, and the UI exits the process: prove both ports free first.
	if err := checkListen(RoleFrontend, s.addr); err != nil {
		return nil, err
	}
	uiAddr := opts.UIAddr
	if uiAddr != "" {
		uiHost, uiPort, err := resolveAddr(uiAddr)
		if err != nil {
			return nil, fmt.Errorf("temporalserver: ui address: %w", err)
		}
		// A port given is proved free now; port 0 is picked when the UI
		// starts, seconds later, so no other process can take it between.
		if !autoPort(uiAddr) {
			uiAddr = net.JoinHostPort(uiHost, strconv.Itoa(uiPort))
			if err := checkListen(RoleUI, uiAddr); err != nil {
				return nil, err
			}
		}
	}

	conf, err := buildConfig(opts, host, port)
	if err != nil {
		return nil, err
	}
	minLevel := slog.LevelWarn
	if opts.Verbose {
		minLevel = slog.LevelInfo
	}
	logger := slogLogger{log: opts.Logger.With("component", "temporal"), min: minLevel, stopping: &s.stopping}
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("temporalserver: authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("temporalserver: claim mapper: %w", err)
	}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for name, svc := range conf.Services {
		hosts[primitives.ServiceName(name)] = static.SingleLocalHost(net.JoinHostPort(host, strconv.Itoa(svc.RPC.GRPCPort)))
	}
	srv, err := newServer(conf,
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dynamicConfig(opts.DynamicConfig)),
	)
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("temporalserver: start: %w", err)
	}
	s.srv = srv

	if s.op, err = s.dialReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.registerSearchAttributes(ctx, opts.SearchAttributes); err != nil {
		s.Stop()
		return nil, err
	}
	if uiAddr != "" {
		if err := s.startUI(ctx, uiAddr); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// Addr is the frontend's host:port, for client.Options.HostPort.
func (s *Server) Addr() string { return s.addr }

// UIURL is the Web UI's base URL (http://host:port), empty without a UI.
func (s *Server) UIURL() string { return s.uiURL }

// Namespace is the namespace the server was started with.
func (s *Server) Namespace() string { return s.ns }

// Dial connects an SDK client to this server's namespace. The client's log
// goes to the server's logger at warn level; set opts.Logger to override.
// Callers close the client.
func (s *Server) Dial(ctx context.Context, opts client.Options) (client.Client, error) {
	opts.HostPort = s.addr
	if opts.Namespace == "" {
		opts.Namespace = s.ns
	}
	if opts.Logger == nil {
		opts.Logger = temporallog.Quiet(s.logger)
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("temporalserver: dial %s: %w", s.addr, err)
	}
	return c, nil
}

// Stop stops the UI and the server. It is safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.ui != nil {
			s.ui.Stop()
			<-s.uiDone
		}
		if s.op != nil {
			s.op.Close()
		}
		if s.srv != nil {
			s.stopping.Store(true)
			if err := s.srv.Stop(); err != nil {
				s.logger.Warn("temporalserver: stop", "error", err)
			}
		}
	})
}

// dialReady dials the frontend until it answers or ctx (at most 60 s) ends.
func (s *Server) dialReady(ctx context.Context) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
		c, err := s.Dial(dctx, client.Options{})
		dcancel()
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("temporalserver: frontend %s not ready: %w", s.addr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// registerSearchAttributes adds the attributes the namespace lacks. Existing
// attributes of the same type are left alone; one of another type is an
// error, since Temporal cannot change an attribute's type.
func (s *Server) registerSearchAttributes(ctx context.Context, want map[string]enumspb.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	ops := s.op.OperatorService()
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.ns})
	if err != nil {
		return fmt.Errorf("temporalserver: list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		got, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
		case got != typ:
			return fmt.Errorf("temporalserver: search attribute %q is %s, want %s: %w", name, got, typ, ErrSearchAttributeType)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: s.ns, SearchAttributes: missing}); err != nil {
		return fmt.Errorf("temporalserver: add search attributes: %w", err)
	}
	return nil
}

// ErrSearchAttributeType reports a search attribute already registered with
// a different type.
var ErrSearchAttributeType = errors.New("search attribute registered with another type")

// startUI starts the Web UI on addr (host:port; port 0 picks a free one
// now, just before the UI binds it) and waits until it answers.
func (s *Server) startUI(ctx context.Context, addr string) error {
	host, port, err := resolveAddr(addr)
	if err != nil {
		return fmt.Errorf("temporalserver: ui address: %w", err)
	}
	// The UI server exits the process (echo's Logger.Fatal) when it cannot
	// bind, so prove the port is still free (the frontend took seconds to
	// start) instead of letting it try.
	if err := checkListen(RoleUI, net.JoinHostPort(host, strconv.Itoa(port))); err != nil {
		return err
	}
	s.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: s.addr,
		EnableUI:            true,
		DefaultNamespace:    s.ns,
		CORS:                uiconfig.CORS{CookieInsecure: true},
		HideLogs:            true,
		DisableNewsFetch:    true,
	}))
	s.uiDone = make(chan struct{})
	go func() {
		defer close(s.uiDone)
		if err := s.ui.Start(); err != nil {
			s.logger.Error("temporalserver: ui stopped", "error", err)
		}
	}()
	s.uiURL = "http://" + net.JoinHostPort(host, strconv.Itoa(port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.uiURL+"/healthz", nil)
		if err != nil {
			return fmt.Errorf("temporalserver: ui health request: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("temporalserver: ui %s not ready: %w", s.uiURL, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func buildConfig(opts Options, host string, frontendPort int) (*config.Config, error) {
	httpPort, err := freePort(host)
	if err != nil {
		return nil, err
	}
	var conf config.Config
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = host
	sqlConf, err := prepareSQL(opts)
	if err != nil {
		return nil, err
	}
	conf.Persistence.DefaultStore = "sqlite-default"
	conf.Persistence.VisibilityStore = "sqlite-default"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite-default": {SQL: sqlConf}}
	frontend := net.JoinHostPort(host, strconv.Itoa(frontendPort))
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{clusterName: {
			Enabled:                true,
			InitialFailoverVersion: 1,
			RPCAddress:             frontend,
			HTTPAddress:            net.JoinHostPort(host, strconv.Itoa(httpPort)),
		}},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{}
	for _, name := range []string{"frontend", "history", "matching", "worker"} {
		var svc config.Service
		svc.RPC.BindOnIP = host
		if name == "frontend" {
			svc.RPC.GRPCPort = frontendPort
			svc.RPC.HTTPPort = httpPort
		} else if svc.RPC.GRPCPort, err = freePort(host); err != nil {
			return nil, err
		}
		conf.Services[name] = svc
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend
	return &conf, nil
}

// prepareSQL builds the SQLite config, creating the schema for a new file and
// the namespace (with the search attributes) when it does not exist yet.
func prepareSQL(opts Options) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if opts.DataDir == "" {
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		conf.DatabaseName = "toolsmith-" + strconv.FormatUint(rand.Uint64(), 36)
	} else {
		if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("temporalserver: data dir: %w", err)
		}
		conf.ConnectAttributes = map[string]string{"mode": "rwc"}
		conf.DatabaseName = filepath.Join(opts.DataDir, DBFile)
		if _, err := os.Stat(conf.DatabaseName); errors.Is(err, os.ErrNotExist) {
			if err := sqliteschema.SetupSchema(conf); err != nil {
				return nil, fmt.Errorf("temporalserver: schema %s: %w", conf.DatabaseName, err)
			}
		} else if err != nil {
			return nil, fmt.Errorf("temporalserver: stat %s: %w", conf.DatabaseName, err)
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, opts.Namespace, false, opts.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("temporalserver: namespace %q: %w", opts.Namespace, err)
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("temporalserver: create namespace %q: %w", opts.Namespace, err)
	}
	return conf, nil
}

func dynamicConfig(extra map[string]any) dynamicconfig.StaticClient {
	dc := dynamicconfig.StaticClient{
		// The default (20/s) adds ~50 ms to every task hand-off; a
		// one-activity workflow drops from ~100 ms to ~27 ms at 1000.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():  1000,
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8096,
		// Search attributes added through the operator service are usable
		// at once instead of after the cache refresh interval.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key():      true,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// One node, one worker: several task queue partitions only add
		// forwarding hops between partitions without a poller.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
	}
	for k, v := range extra {
		dc[dynamicconfig.MakeKey(k)] = v
	}
	return dc
}

// autoPort says whether addr asks for any free port (port 0).
func autoPort(addr string) bool {
	_, p, err := net.SplitHostPort(addr)
	return err == nil && p == "0"
}

// resolveAddr splits host:port, replacing port 0 by a free port.
func resolveAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port %q", addr, p)
	}
	if port == 0 {
		if port, err = freePort(host); err != nil {
			return "", 0, err
		}
	}
	return host, port, nil
}

// freePort picks a port for one of the server's listeners. A port the
// kernel hands out for ":0" comes from the ephemeral range that outgoing
// connections draw from too, so between this check and the service's own
// listen another socket can take it; Temporal's service is then left
// without a listener and crashes the process (its logger's Fatal does not
// exit here). So ports are drawn at random from below the usual ephemeral
// ranges (Linux 32768–60999, BSD and Windows 49152–65535), each checked
// free, and ":0" is the fallback.
func freePort(host string) (int, error) {
	for range 64 {
		p := freePortLow + rand.IntN(freePortSpan)
		if ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p))); err == nil {
			_ = ln.Close()
			return p, nil
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("temporalserver: free port on %s: %w", host, err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// freePort's range: 20000 to 31999.
const (
	freePortLow  = 20000
	freePortSpan = 12000
)

// Roles of the addresses the server listens on, in ListenError.
const (
	// RoleFrontend is Options.FrontendAddr (gRPC).
	RoleFrontend = "frontend"
	// RoleUI is Options.UIAddr (the Web UI).
	RoleUI = "ui"
)

// ListenError reports an address the server was told to listen on but
// cannot, most often because another process holds the port.
type ListenError struct {
	// Role is RoleFrontend or RoleUI.
	Role string
	// Addr is the host:port that could not be bound.
	Addr string
	Err  error
}

func (e *ListenError) Error() string {
	if e.InUse() {
		return fmt.Sprintf("temporalserver: %s address %s is already in use", e.Role, e.Addr)
	}
	return fmt.Sprintf("temporalserver: cannot listen on %s address %s: %v", e.Role, e.Addr, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// InUse reports whether another socket holds the address.
func (e *ListenError) InUse() bool { return errors.Is(e.Err, syscall.EADDRINUSE) }

// checkListen binds addr and lets it go again, or returns a ListenError.
func checkListen(role, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &ListenError{Role: role, Addr: addr, Err: err}
	}
	return ln.Close()
}

// newServer is temporal.NewServer, which builds (and binds) every service.
// A port taken between checkListen and here makes it panic rather than
// fail; that panic becomes the ListenError of the frontend, or an error
// naming the panic.
func newServer(conf *config.Config, opts ...temporal.ServerOption) (srv temporal.Server, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("temporalserver: new server panicked: %v", p)
			if lerr := checkListen(RoleFrontend, conf.PublicClient.HostPort); lerr != nil {
				err = fmt.Errorf("%w (%v)", lerr, err)
			}
			srv = nil
		}
	}()
	srv, err = temporal.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("temporalserver: new server: %w", err)
	}
	return srv, nil
}
