// Command toolsmith is Toolsmith's single binary and its one composition
// root: it parses the configuration (flags with TOOLSMITH_* environment
// fallbacks, see internal/config), builds the store, the embedder, the
// registry and the HTTP API, and runs them until SIGINT or SIGTERM.
//
// Subcommands:
//
//	toolsmith dev                     the whole system in one process on embedded defaults
//	toolsmith api                     the API against a configured store (sqlite or neo4j) and an external Temporal
//	toolsmith worker                  the Temporal worker against an external Temporal
//	toolsmith model fetch             fetch the built-in embedder's weights and exit
//	toolsmith airlock check DIR       onboard every spec under a directory (corpus check)
//	toolsmith airlock approve|reject  decide a pending review (a Temporal signal)
//	toolsmith mcp --url URL           an MCP server on stdio bridged to a running Toolsmith
//	toolsmith keys create|list|revoke  manage API keys in the data dir's store or through --url
//	toolsmith eval                    measure retrieval quality on a MetaTool-format set
//	toolsmith healthcheck             probe a URL or TCP address (for container health checks)
//	toolsmith version                 print the version
//	toolsmith completion SHELL        print a shell completion script (bash, zsh, fish, powershell)
//
// The command line is parsed by github.com/spf13/cobra (see cli.go): flags
// may come before or after arguments, "--flag" and "-h"/"--help" work on
// every command and subcommand, and `toolsmith completion` writes shell
// completion. Each subcommand lives in its own file and has one line in the
// commands table below; a name of several words ("model fetch") nests.
//
// A table line's third field is either of two kinds:
//
//   - A cobraCommand, func(*env) *cobra.Command: the command declares its
//     flags on cmd.Flags() and cobra parses them. Configuration flags come
//     from config.Bind(cmd.Flags(), groups), read in RunE with
//     binding.Load(e.lookupEnv), which applies the flag > TOOLSMITH_*
//     variable > default precedence and validates. See newServeCommand
//     (dev.go) and newModelFetchCommand (model.go).
//   - An old-style func(ctx context.Context, e *env, args []string) error
//     that parses its own arguments (flag.FlagSet, or config.Parse, which
//     also accepts flags after arguments). cobra hands it the raw arguments
//     and treats flag.ErrHelp as a clean exit; `toolsmith eval` is one.
//
// Converting an old-style command is a few lines: wrap it as
//
//	func newKeysCommand(e *env) *cobra.Command {
//		c := &cobra.Command{Use: "keys", Args: noArgs}
//		b := config.Bind(c.Flags(), config.FlagsServe) // or none
//		owner := c.Flags().String("owner", "", "…")    // the command's own flags
//		c.RunE = func(c *cobra.Command, args []string) error {
//			cfg, err := b.Load(e.lookupEnv)
//			if err != nil {
//				return err
//			}
//			return keys(c.Context(), e, cfg, *owner) // the old body, minus parsing
//		}
//		return c
//	}
//
// and change the table line's third field from runKeys to cobraCommand(newKeysCommand).
// Errors wrapping config.ErrInvalid exit 2, others 1.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// command is one line of the commands table. Its name may have several
// words ("model fetch"); impl is a cobraCommand or an old-style
// func(context.Context, *env, []string) error (see the package comment).
type command struct {
	name    string
	summary string
	impl    any
}

// commands is the command table, in the order usage lists them.
func commands() []command {
	return []command{
		{"dev", "run the whole system in one process on embedded defaults (SQLite, built-in embedder, demo catalogue)", cobraCommand(newDevCommand)},
		{"api", "serve the HTTP API against a configured store (--store sqlite|neo4j) and an external Temporal", cobraCommand(newAPICommand)},
		{"worker", "run the Temporal worker against an external Temporal and the configured store", cobraCommand(newWorkerCommand)},
		{"model fetch", "fetch the built-in USE-Lite embedder's weights into --model-dir and exit", cobraCommand(newModelFetchCommand)},
		{"airlock approve", "approve a pending review (signal): REVIEW_ID --policy JSON [--wait D]", cobraCommand(newAirlockApproveCommand)},
		{"airlock reject", "reject a pending review (signal): REVIEW_ID --reason TEXT", cobraCommand(newAirlockRejectCommand)},
		{"airlock check", "onboard every OpenAPI spec under DIR with automatic approval (a check, never the service) and report", cobraCommand(newAirlockCheckCommand)},
		{"airlock prefetch", "fill the Go module cache with what generated wrappers need, so approvals build offline (worker images)", cobraCommand(newAirlockPrefetchCommand)},
		{"keys create", "create an API key and print its secret (last line): --owner NAME --level L [--role R] [--url URL]", cobraCommand(newKeysCreateCommand)},
		{"keys list", "list API keys (never their secrets) [--url URL]", cobraCommand(newKeysListCommand)},
		{"keys revoke", "revoke an API key: KEY_ID [--url URL]", cobraCommand(newKeysRevokeCommand)},
		{"mcp", "serve a running Toolsmith's MCP tools on stdio (for MCP clients): --url URL [--key-file F]", cobraCommand(newMCPCommand)},
		{"bench", "load N tools into a fresh system through its HTTP API and measure registration, search, fulfilment, memory and restart", cobraCommand(newLoadBenchCommand)},
		{"eval", "measure retrieval quality on a MetaTool-format set (Recall@k, NDCG, MRR, latency)", runEval},
		{"healthcheck", "exit 0 when --url answers 200 or --tcp accepts a connection (container health checks)", cobraCommand(newHealthcheckCommand)},
		{"version", "print the version and exit", cobraCommand(newVersionCommand)},
	}
}

// env is what main hands every command: its streams, the environment and,
// for tests, a hook called once the API serves.
type env struct {
	stdout, stderr io.Writer
	lookupEnv      func(string) (string, bool)
	// onReady, when set, is called with the API's base URL ("http://host:port")
	// once the system is ready.
	onReady func(baseURL string)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], &env{stdout: os.Stdout, stderr: os.Stderr, lookupEnv: os.LookupEnv}))
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)
