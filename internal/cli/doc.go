// Package cli is the command line of both Toolsmith binaries and their one
// composition root: it parses the configuration (flags with TOOLSMITH_*
// environment fallbacks, see internal/config), builds the store, the
// embedder, the registry and the HTTP API, and runs them until SIGINT or
// SIGTERM. cmd/toolsmith (everything, with the in-process Temporal server
// and its UI) and cmd/toolsmith-server (production: no in-process server)
// each call Main; only the first hands it a DevTemporalStarter, which adds
// the commands marked dev below.
//
// Subcommands:
//
//	toolsmith dev                     the whole system in one process on embedded defaults (dev)
//	toolsmith api                     the API against a configured store (sqlite or neo4j) and an external Temporal
//	toolsmith worker                  the Temporal worker against an external Temporal
//	toolsmith model fetch             fetch the built-in embedder's weights and exit
//	toolsmith airlock check DIR       onboard every spec under a directory (corpus check)
//	toolsmith airlock approve|reject  decide a pending review (a Temporal signal)
//	toolsmith mcp --url URL           an MCP server on stdio bridged to a running Toolsmith
//	toolsmith keys create|list|revoke  manage API keys in the data dir's store or through --url
//	toolsmith bench                   load N tools into a fresh dev system and measure it (dev)
//	toolsmith eval                    measure retrieval quality on a MetaTool-format set (dev)
//	toolsmith healthcheck             probe a URL or TCP address (for container health checks)
//	toolsmith version                 print the version
//	toolsmith completion SHELL        print a shell completion script (bash, zsh, fish, powershell)
//
// The command line is parsed by github.com/spf13/cobra (see cli.go): flags
// may come before or after arguments, "--flag" and "-h"/"--help" work on
// every command and subcommand, and `toolsmith completion` writes shell
// completion. Each subcommand lives in its own file and has one line in the
// commands table (commands.go); a name of several words ("model fetch") nests.
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
package cli
