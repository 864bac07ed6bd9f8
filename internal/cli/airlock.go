package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	"github.com/toolsmith/toolsmith/api/httpx"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/templates"
	"github.com/toolsmith/toolsmith/tool"
	"github.com/toolsmith/toolsmith/workflows"
)

// newAirlockCheckCommand is `toolsmith airlock check DIR`: it onboards
// every spec under a directory with automatic approval — a path that exists
// for this check only, never for the service, where every external tool
// waits for a person — and prints, per spec, whether it loaded, its
// warnings, operations and tools, whether the wrapper built and its
// generated test passed, then totals; --json adds one summary object as the
// last line, --explain the operations preflight left out and why, --repeat
// N runs it all N times and lists each spec whose outcome changed.
func newAirlockCheckCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "check DIR", Args: exactArgs(1, "one DIR argument")}
	asJSON := c.Flags().Bool("json", false, "print a JSON summary object as the last line")
	limit := c.Flags().Int("limit", 0, "check only the first N specs (0 = all)")
	timeout := c.Flags().Duration("timeout", 4*time.Minute, "time limit to build and test one wrapper")
	explain := c.Flags().Bool("explain", false, "list under each spec the operations preflight left out, and why")
	repeat := c.Flags().Int("repeat", 1, "run the whole check N times and report each spec whose outcome changed between runs")
	c.RunE = func(c *cobra.Command, args []string) error {
		if *limit < 0 || *timeout <= 0 || *repeat < 1 {
			return fmt.Errorf("airlock check: --limit must be ≥ 0, --repeat ≥ 1 and --timeout > 0: %w", config.ErrInvalid)
		}
		return runAirlockCheck(c.Context(), e, args[0], airlock.CheckOptions{JSON: *asJSON, Limit: *limit, Explain: *explain, Repeat: *repeat}, *timeout)
	}
	return c
}

func runAirlockCheck(ctx context.Context, e *env, dir string, opts airlock.CheckOptions, timeout time.Duration) error {
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
	ob := &airlock.Onboarder{Generator: g, Requires: reqs, Timeout: timeout, Validate: validateManifest}
	fmt.Fprintf(e.stderr, "airlock check: generated tests run in sandbox %q\n", codegen.Sandbox())
	_, err = airlock.Check(ctx, ob, dir, opts, e.stdout, e.stderr)
	return err
}

// newAirlockPrefetchCommand is `toolsmith airlock prefetch`: it fills the Go
// module cache with what generated wrappers need (online), so approvals can
// build wrappers offline later. A worker image runs it at build time.
func newAirlockPrefetchCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "prefetch", Args: noArgs}
	c.RunE = func(c *cobra.Command, _ []string) error {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			return fmt.Errorf("airlock prefetch: building wrappers needs the Go toolchain on PATH: %w", err)
		}
		g, err := codegen.New(templates.FS)
		if err != nil {
			return err
		}
		if err := codegen.Prefetch(c.Context(), g, goCmd, e.stderr); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, "the module cache holds what wrappers need: approvals build offline")
		return nil
	}
	return c
}

// validateManifest applies the registry's rules to a produced manifest.
func validateManifest(m *tool.Manifest) error {
	tool.Normalize(m)
	return tool.Validate(m)
}

// newAirlockApproveCommand is `toolsmith airlock approve REVIEW_ID`: it
// approves a pending review by signalling its AirlockWorkflow on the
// configured Temporal (as the API does).
func newAirlockApproveCommand(e *env) *cobra.Command { return newAirlockDecisionCommand(e, "approve") }

// newAirlockRejectCommand is `toolsmith airlock reject REVIEW_ID`: it
// rejects a pending review with a reason.
func newAirlockRejectCommand(e *env) *cobra.Command { return newAirlockDecisionCommand(e, "reject") }

// decision is what an airlock approve or reject command was told.
type decision struct {
	verb, policyJSON, policyFile, reason string
	wait                                 time.Duration
}

func newAirlockDecisionCommand(e *env, verb string) *cobra.Command {
	c := &cobra.Command{Use: verb + " REVIEW_ID", Args: exactArgs(1, "one review id (e.g. airlock-0123456789abcdef)")}
	d := decision{verb: verb}
	if verb == "approve" {
		c.Flags().StringVar(&d.policyJSON, "policy", "{}", "the policy as JSON, e.g. '{\"quotaPerDay\": 100, \"operations\": [\"listPets\"]}'")
		c.Flags().StringVar(&d.policyFile, "policy-file", "", "a file holding the policy JSON")
	} else {
		c.Flags().StringVar(&d.reason, "reason", "", "why (required)")
	}
	c.Flags().DurationVar(&d.wait, "wait", 0, "wait up to this long for the review's outcome")
	b := config.Bind(c.Flags(), config.FlagsTemporal)
	c.RunE = func(c *cobra.Command, args []string) error {
		cfg, err := b.Load(e.lookupEnv)
		if err != nil {
			return err
		}
		return airlockDecision(c.Context(), e, cfg, d, args[0])
	}
	return c
}

// operatorReviewer names who decides from the command line: whoever holds
// access to Temporal, as the operating system knows them. Nobody picks the
// name (the API records the authenticated identity the same way).
func operatorReviewer() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return "temporal-operator:" + name + "@" + host
}

func airlockDecision(ctx context.Context, e *env, cfg config.Config, d decision, id string) error {
	var p airlock.Policy
	switch d.verb {
	case "approve":
		raw := []byte(d.policyJSON)
		if d.policyFile != "" {
			var err error
			if raw, err = os.ReadFile(d.policyFile); err != nil {
				return fmt.Errorf("--policy-file: %w: %w", config.ErrInvalid, err)
			}
		}
		if err := httpx.DecodeStrict(raw, &p); err != nil {
			return fmt.Errorf("--policy: %w: %w", config.ErrInvalid, err)
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("--policy: %w: %w", config.ErrInvalid, err)
		}
	default:
		if strings.TrimSpace(d.reason) == "" {
			return fmt.Errorf("--reason is required to reject: %w", config.ErrInvalid)
		}
	}
	log, err := newLogger(cfg, e.stderr)
	if err != nil {
		return err
	}
	c, err := dialTemporal(ctx, cfg, log, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	return sendDecision(ctx, e.stdout, c, review.Config{Namespace: cfg.Temporal.Namespace}, d, p, id)
}

// sendDecision decides the review through the review service, as the API
// and the console do: an approval's policy is checked against the
// pending review (policy.operations[i] must name one of its operations)
// before the decision is sent, so a refused one leaves the review pending
// and the command fails with the API's message. With d.wait it prints
// the review's outcome.
func sendDecision(ctx context.Context, stdout io.Writer, t review.Temporal, rc review.Config, d decision, p airlock.Policy, id string) error {
	// No store: the operator who holds Temporal sees the whole outcome,
	// printed below from the workflow itself.
	svc := review.New(t, nil, rc)
	var err error
	if d.verb == "approve" {
		_, err = svc.Approve(ctx, id, operatorReviewer(), access.Caller{}, p, 0)
	} else {
		_, err = svc.Reject(ctx, id, operatorReviewer(), access.Caller{}, d.reason, 0)
	}
	if errors.Is(err, fault.ErrInvalid) {
		return fmt.Errorf("%s review %s: --policy: %w: %w", d.verb, id, config.ErrInvalid, err)
	}
	if err != nil {
		return fmt.Errorf("%s review %s: %w", d.verb, id, err)
	}
	fmt.Fprintf(stdout, "%s recorded by %s\n", d.verb, id)
	if d.wait <= 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, d.wait)
	defer cancel()
	var out workflows.AirlockOutcome
	if err := t.GetWorkflow(wctx, id, "").Get(wctx, &out); err != nil {
		return fmt.Errorf("waiting for %s: %w", id, err)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(stdout, string(b))
	return nil
}
