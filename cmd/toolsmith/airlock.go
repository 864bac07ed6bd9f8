package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/templates"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/workflows"
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

// runAirlockApprove approves a pending review by signalling its
// AirlockWorkflow on the configured Temporal (as the API does).
func runAirlockApprove(ctx context.Context, e *env, args []string) error {
	return airlockDecision(ctx, e, "approve", args)
}

// runAirlockReject rejects a pending review with a reason.
func runAirlockReject(ctx context.Context, e *env, args []string) error {
	return airlockDecision(ctx, e, "reject", args)
}

func airlockDecision(ctx context.Context, e *env, verb string, args []string) error {
	// Flags of this command come first, then the Temporal flags; the review
	// id is the one positional argument.
	fs := flag.NewFlagSet("toolsmith airlock "+verb, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	policyJSON := fs.String("policy", "{}", "approve: the policy as JSON, e.g. '{\"quotaPerDay\": 100, \"operations\": [\"listPets\"]}'")
	policyFile := fs.String("policy-file", "", "approve: a file holding the policy JSON")
	reason := fs.String("reason", "", "reject: why (required)")
	reviewer := fs.String("reviewer", "", "who decides (recorded in the outcome)")
	wait := fs.Duration("wait", 0, "wait up to this long for the review's outcome")
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: toolsmith airlock %s [flags] REVIEW_ID [-- temporal flags]\n", verb)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return fmt.Errorf("airlock %s: the review id (e.g. airlock-0123456789abcdef) is required: %w", verb, config.ErrInvalid)
	}
	id := fs.Arg(0)
	cfg, rest, err := config.Parse("toolsmith airlock "+verb, config.FlagsTemporal, fs.Args()[1:], e.lookupEnv, e.stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("airlock %s: unexpected arguments %q: %w", verb, rest, config.ErrInvalid)
	}
	var signal string
	var arg any
	switch verb {
	case "approve":
		raw := []byte(*policyJSON)
		if *policyFile != "" {
			if raw, err = os.ReadFile(*policyFile); err != nil {
				return fmt.Errorf("--policy-file: %w: %w", config.ErrInvalid, err)
			}
		}
		var p airlock.Policy
		if err := httpx.DecodeStrict(raw, &p); err != nil {
			return fmt.Errorf("--policy: %w: %w", config.ErrInvalid, err)
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("--policy: %w: %w", config.ErrInvalid, err)
		}
		signal, arg = workflows.SignalApprove, workflows.ApproveSignal{Reviewer: *reviewer, Policy: p}
	default:
		if strings.TrimSpace(*reason) == "" {
			return fmt.Errorf("--reason is required to reject: %w", config.ErrInvalid)
		}
		signal, arg = workflows.SignalReject, workflows.RejectSignal{Reviewer: *reviewer, Reason: *reason}
	}
	log, err := newLogger(cfg, e.stderr)
	if err != nil {
		return err
	}
	c, err := dialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SignalWorkflow(ctx, id, "", signal, arg); err != nil {
		return fmt.Errorf("signal %s to review %s: %w", signal, id, err)
	}
	fmt.Fprintf(e.stdout, "sent %s to %s\n", signal, id)
	if *wait <= 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, *wait)
	defer cancel()
	var out workflows.AirlockOutcome
	if err := c.GetWorkflow(wctx, id, "").Get(wctx, &out); err != nil {
		return fmt.Errorf("waiting for %s: %w", id, err)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(e.stdout, string(b))
	return nil
}
