// Command toolsmith is Toolsmith's single binary and its one composition
// root: it parses the configuration (flags with TOOLSMITH_* environment
// fallbacks, see internal/config), builds the store, the embedder, the
// registry and the HTTP API, and runs them until SIGINT or SIGTERM.
//
// Subcommands:
//
//	toolsmith dev          the whole system in one process on embedded defaults
//	toolsmith api          the API against a configured store (sqlite or neo4j) and an external Temporal
//	toolsmith worker       the Temporal worker against an external Temporal
//	toolsmith model fetch  fetch the built-in embedder's weights and exit
//	toolsmith airlock check  onboard every spec under a directory (corpus check)
//	toolsmith airlock approve|reject  decide a pending review (a Temporal signal)
//	toolsmith eval         measure retrieval quality on a MetaTool-format set
//	toolsmith healthcheck  probe a URL or TCP address (for container health checks)
//	toolsmith version      print the version
//
// Each subcommand lives in its own file; adding one is a new file plus a line
// in the commands table below.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/toolsmith/toolsmith/internal/config"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// command is one subcommand. Its name may have several words ("model fetch").
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands is the command table, in the order usage lists them.
func commands() []command {
	return []command{
		{"dev", "run the whole system in one process on embedded defaults (SQLite, built-in embedder, demo catalogue)", runDev},
		{"api", "serve the HTTP API against a configured store (--store sqlite|neo4j) and an external Temporal", runAPI},
		{"worker", "run the Temporal worker against an external Temporal and the configured store", runWorker},
		{"model fetch", "fetch the built-in USE-Lite embedder's weights into --model-dir and exit", runModelFetch},
		{"airlock approve", "approve a pending review (signal): REVIEW_ID --policy JSON [--wait D]", runAirlockApprove},
		{"airlock reject", "reject a pending review (signal): REVIEW_ID --reason TEXT", runAirlockReject},
		{"airlock check", "onboard every OpenAPI spec under DIR with automatic approval (a check, never the service) and report", runAirlockCheck},
		{"eval", "measure retrieval quality on a MetaTool-format set (Recall@k, NDCG, MRR, latency)", runEval},
		{"healthcheck", "exit 0 when --url answers 200 or --tcp accepts a connection (container health checks)", runHealthcheck},
		{"version", "print the version and exit", runVersion},
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

// run dispatches args to a command and returns the process exit code.
func run(ctx context.Context, args []string, e *env) int {
	cmd, rest, ok := lookup(args)
	if !ok {
		if len(args) > 0 && args[0] != "help" && args[0] != "-h" && args[0] != "--help" {
			fmt.Fprintf(e.stderr, "toolsmith: unknown command %q\n\n", strings.Join(args, " "))
			usage(e.stderr)
			return exitUsage
		}
		usage(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	err := cmd.run(ctx, e, rest)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, config.ErrInvalid):
		fmt.Fprintf(e.stderr, "toolsmith %s: %v\n", cmd.name, err)
		return exitUsage
	default:
		fmt.Fprintf(e.stderr, "toolsmith %s: %v\n", cmd.name, err)
		return exitError
	}
}

// lookup finds the command whose (possibly multi-word) name prefixes args,
// preferring the longest.
func lookup(args []string) (command, []string, bool) {
	var best command
	bestWords := 0
	for _, c := range commands() {
		words := strings.Fields(c.name)
		if len(words) <= bestWords || len(args) < len(words) {
			continue
		}
		match := true
		for i, w := range words {
			match = match && args[i] == w
		}
		if match {
			best, bestWords = c, len(words)
		}
	}
	if bestWords == 0 {
		return command{}, nil, false
	}
	return best, args[bestWords:], true
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "toolsmith %s: ask for a capability by intent.\n\nUsage:\n", version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  toolsmith %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'toolsmith <command> -h' for its flags; every flag also reads %s<NAME> from the environment.\n", config.EnvPrefix)
}
