package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with
// -ldflags "-X github.com/toolsmith/toolsmith/internal/cli.version=…".
var version = "dev"

// command is one line of the commands table. Its name may have several
// words ("model fetch"); impl is a cobraCommand or an old-style
// func(context.Context, *env, []string) error (see the package comment).
// A dev command exists only in the binary that has the in-process Temporal
// server (env.devTemporal set): dev itself, and the measurements that run
// it or that production has no use for.
type command struct {
	name    string
	summary string
	impl    any
	dev     bool
}

// commands is the command table of a binary, in the order usage lists
// them: every line when withDev, else the lines not marked dev.
func commands(withDev bool) []command {
	all := []command{
		{"dev", "run the whole system in one process on embedded defaults (SQLite, built-in embedder, demo catalogue)", cobraCommand(newDevCommand), true},
		{"api", "serve the HTTP API against a configured store (--store sqlite|neo4j) and an external Temporal", cobraCommand(newAPICommand), false},
		{"worker", "run the Temporal worker against an external Temporal and the configured store", cobraCommand(newWorkerCommand), false},
		{"model fetch", "fetch the built-in USE-Lite embedder's weights into --model-dir and exit", cobraCommand(newModelFetchCommand), false},
		{"airlock approve", "approve a pending review (signal): REVIEW_ID --policy JSON [--wait D]", cobraCommand(newAirlockApproveCommand), false},
		{"airlock reject", "reject a pending review (signal): REVIEW_ID --reason TEXT", cobraCommand(newAirlockRejectCommand), false},
		{"airlock check", "onboard every OpenAPI spec under DIR with automatic approval (a check, never the service) and report", cobraCommand(newAirlockCheckCommand), false},
		{"airlock prefetch", "fill the Go module cache with what generated wrappers need, so approvals build offline (worker images)", cobraCommand(newAirlockPrefetchCommand), false},
		{"keys create", "create an API key and print its secret (last line): --owner NAME --level L [--role R] [--url URL]", cobraCommand(newKeysCreateCommand), false},
		{"keys list", "list API keys (never their secrets) [--url URL]", cobraCommand(newKeysListCommand), false},
		{"keys revoke", "revoke an API key: KEY_ID [--url URL]", cobraCommand(newKeysRevokeCommand), false},
		{"mcp", "serve a running Toolsmith's MCP tools on stdio (for MCP clients): --url URL [--key-file F]", cobraCommand(newMCPCommand), false},
		{"bench", "load N tools into a fresh system through its HTTP API and measure registration, search, fulfilment, memory and restart", cobraCommand(newLoadBenchCommand), true},
		{"eval", "measure retrieval quality on a MetaTool-format set (Recall@k, NDCG, MRR, latency)", runEval, true},
		{"healthcheck", "exit 0 when --url answers 200 or --tcp accepts a connection (container health checks)", cobraCommand(newHealthcheckCommand), false},
		{"version", "print the version and exit", cobraCommand(newVersionCommand), false},
	}
	if withDev {
		return all
	}
	var prod []command
	for _, c := range all {
		if !c.dev {
			prod = append(prod, c)
		}
	}
	return prod
}

// env is what Main hands every command: its streams, the environment and,
// for tests, a hook called once the API serves.
type env struct {
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)
	// onReady, when set, is called with the API's base URL ("http://host:port")
	// once the system is ready.
	onReady func(baseURL string)
	// devTemporal starts the in-process Temporal server; nil in the
	// production binary, which then has no dev commands.
	devTemporal DevTemporalStarter
}

// Main runs the command line os.Args names, on the process's streams and
// environment, until SIGINT or SIGTERM, and returns the exit code. dev is
// the in-process Temporal server's starter (cmd/toolsmith) or nil
// (cmd/toolsmith-server).
func Main(dev DevTemporalStarter) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv, devTemporal: dev})
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)
