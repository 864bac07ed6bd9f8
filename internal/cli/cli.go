package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/toolsmith/toolsmith/internal/config"
)

// cobraCommand builds one subcommand: its Use (the table name's last word,
// then its arguments), Args, flags and RunE. The table supplies Short.
type cobraCommand func(e *env) *cobra.Command

// errUsageShown ends a command line that named no command: the usage is
// already printed, and the exit code is exitUsage.
var errUsageShown = errors.New("usage shown")

// run parses args, runs the command they name and returns the process exit
// code.
func run(ctx context.Context, args []string, e *env) int {
	root := newRoot(e)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if cmd == nil {
		cmd = root
	}
	return exitCode(e, cmd, err)
}

// exitCode reports err on stderr and maps it to an exit code: help is a
// clean exit, configuration and usage errors (config.ErrInvalid) exit 2.
func exitCode(e *env, cmd *cobra.Command, err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsageShown):
		return exitUsage
	case errors.Is(err, config.ErrInvalid):
		fmt.Fprintf(e.stderr, "%s: %v\nRun '%s --help' for usage.\n", cmd.CommandPath(), err, cmd.CommandPath())
		return exitUsage
	default:
		fmt.Fprintf(e.stderr, "%s: %v\n", cmd.CommandPath(), err)
		return exitError
	}
}

// newRoot builds the command tree from the commands table.
func newRoot(e *env) *cobra.Command {
	cmds := commands(e.devTemporal != nil)
	name := "toolsmith"
	if e.devTemporal == nil {
		name = "toolsmith-server" // the production binary (cmd/toolsmith-server)
	}
	root := &cobra.Command{
		Use:           name,
		Short:         "Toolsmith: ask for a capability by intent",
		Long:          rootLong(name, cmds),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          unknownCommand,
		RunE: func(c *cobra.Command, _ []string) error {
			_ = c.Help()
			return errUsageShown
		},
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %w", err, config.ErrInvalid)
	})
	for _, c := range cmds {
		attach(root, c, e)
	}
	// cobra's completion command names its shells as subcommands; an
	// unknown one ("completion nosh") printed the help and exited 0.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Args = unknownCommand
			c.RunE = func(c *cobra.Command, _ []string) error {
				_ = c.Help()
				return errUsageShown
			}
		}
	}
	return root
}

// rootLong is the root help: every command with its summary, in columns.
func rootLong(name string, cmds []command) string {
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ask for a capability by intent.\n\nCommands:\n", name, version)
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %s %-*s  %s\n", name, width, c.name, c.summary)
	}
	fmt.Fprintf(&b, "  %s %-*s  %s\n", name, width, "completion", "print a shell completion script (bash, zsh, fish, powershell)")
	fmt.Fprintf(&b, "\nFlags may come before or after arguments. Every configuration flag also reads %s<NAME> from the\n"+
		"environment (--data-dir: %s); a flag wins over its variable, which wins over the default.", config.EnvPrefix, config.EnvName("data-dir"))
	return b.String()
}

// attach adds a table line to the tree under root, creating the group
// commands of a several-word name ("airlock" for "airlock check").
func attach(root *cobra.Command, c command, e *env) {
	words := strings.Fields(c.name)
	parent := root
	for _, w := range words[:len(words)-1] {
		parent = groupCommand(parent, w)
	}
	name := words[len(words)-1]
	var cmd *cobra.Command
	switch impl := c.impl.(type) {
	case cobraCommand:
		cmd = impl(e)
	case func(context.Context, *env, []string) error:
		cmd = &cobra.Command{
			Use:                name + " [flags] [args]",
			DisableFlagParsing: true,
			RunE:               func(cc *cobra.Command, args []string) error { return impl(cc.Context(), e, args) },
		}
	default:
		panic(fmt.Sprintf("commands table: %q has an implementation of type %T", c.name, c.impl))
	}
	if cmd.Name() != name {
		panic(fmt.Sprintf("commands table: %q builds a command named %q", c.name, cmd.Name()))
	}
	cmd.Short = c.summary
	parent.AddCommand(cmd)
}

// groupCommand returns parent's group command named name, creating it: a command
// that only holds subcommands and refuses unknown ones.
func groupCommand(parent *cobra.Command, name string) *cobra.Command {
	for _, c := range parent.Commands() {
		if c.Name() == name {
			return c
		}
	}
	short, ok := groupSummaries[name]
	if !ok {
		short = name + " subcommands"
	}
	g := &cobra.Command{
		Use:   name + " COMMAND",
		Short: short,
		Args:  unknownCommand,
		RunE: func(c *cobra.Command, _ []string) error {
			_ = c.Help()
			return errUsageShown
		},
	}
	parent.AddCommand(g)
	return g
}

// groupSummaries describe the group commands.
var groupSummaries = map[string]string{
	"model":   "the built-in embedder's weights (fetch)",
	"airlock": "onboard external APIs: check a corpus, approve or reject a review",
}

// unknownCommand is the Args of commands that hold subcommands: an argument
// is a command name that does not exist.
func unknownCommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return fmt.Errorf("unknown command %q for %q: %w", args[0], c.CommandPath(), config.ErrInvalid)
}

// noArgs is the Args of commands that take no positional argument.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q: %w", args, config.ErrInvalid)
	}
	return nil
}

// exactArgs is the Args of commands that take n positional arguments,
// described by what (e.g. "a review id").
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("want %s, got %d arguments %q: %w", what, len(args), args, config.ErrInvalid)
		}
		return nil
	}
}

// newConfigCommand builds a command whose flags are the given configuration
// groups and that takes no argument; run gets the loaded configuration.
func newConfigCommand(use string, groups config.Flags, run func(ctx context.Context, e *env, cfg config.Config) error) cobraCommand {
	return func(e *env) *cobra.Command {
		c := &cobra.Command{Use: use, Args: noArgs}
		b := config.Bind(c.Flags(), groups)
		c.RunE = func(c *cobra.Command, _ []string) error {
			cfg, err := b.Load(e.lookupEnv)
			if err != nil {
				return err
			}
			return run(c.Context(), e, cfg)
		}
		return c
	}
}
