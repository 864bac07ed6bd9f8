package main

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"time"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/templates"
	"github.com/toolsmith/toolsmith/tool"
)

// runAirlockCheck onboards every spec under a directory with automatic
// approval — a path that exists for this check only, never for the service,
// where every external tool waits for a person — and prints, per spec,
// whether it loaded, its warnings, operations and tools, whether the
// wrapper built and its generated test passed, then totals; --json adds one
// summary object as the last line.
func runAirlockCheck(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("toolsmith airlock check", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print a JSON summary object as the last line")
	limit := fs.Int("limit", 0, "check only the first N specs (0 = all)")
	timeout := fs.Duration("timeout", 4*time.Minute, "time limit to build and test one wrapper")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: toolsmith airlock check [--json] [--limit N] [--timeout D] DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("airlock check: want one DIR argument, got %d: %w", fs.NArg(), config.ErrInvalid)
	}
	if *limit < 0 || *timeout <= 0 {
		return fmt.Errorf("airlock check: --limit must be ≥ 0 and --timeout > 0: %w", config.ErrInvalid)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("airlock check: building wrappers needs the Go toolchain on PATH: %w", err)
	}
	reqs, err := codegen.BuildRequires(ctx, goCmd)
	if err != nil {
		return fmt.Errorf("airlock check: %w", err)
	}
	g, err := codegen.New(templates.FS)
	if err != nil {
		return err
	}
	ob := &airlock.Onboarder{Generator: g, Requires: reqs, Timeout: *timeout, Validate: validateManifest}
	fmt.Fprintf(e.stderr, "airlock check: generated tests run in sandbox %q\n", codegen.Sandbox())
	_, err = airlock.Check(ctx, ob, fs.Arg(0), airlock.CheckOptions{JSON: *asJSON, Limit: *limit}, e.stdout, e.stderr)
	return err
}

// validateManifest applies the registry's rules to a produced manifest.
func validateManifest(m *tool.Manifest) error {
	tool.Normalize(m)
	return tool.Validate(m)
}
