package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/airlock/review"
	apiairlock "github.com/toolsmith/toolsmith/api/airlock"
	"github.com/toolsmith/toolsmith/api/verbs"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/templates"
	"github.com/toolsmith/toolsmith/worker"
	"github.com/toolsmith/toolsmith/workflows"
)

// ScanScheduleID is the schedule that rescans every tool source.
const ScanScheduleID = "toolsmith-sources-scan"

// airlockParts is the airlock as wired in a process.
type airlockParts struct {
	notes      *airlock.NotificationLog
	health     *airlock.HealthChecker
	activities *activities.Airlock
	runtime    *airlock.Runtime
	defs       graph.Definitions
	files      *airlock.Files
	// review is nil without a Temporal client.
	review *review.Service
}

// newAirlock builds the airlock: spec and wrapper files under
// <data-dir>/airlock, the source scanner, the onboarding pipeline (which
// builds wrappers with the Go toolchain found on PATH) and the runtime that
// executes approved wrappers under their policies. Without a Go toolchain
// scanning and review still work; approvals then fail with a clear reason.
func newAirlock(ctx context.Context, cfg config.Config, sys *system, c client.Client, log *slog.Logger) (*airlockParts, error) {
	defs := sys.store
	// Approvals are shared through the store (Files.Shared): a worker
	// without an approved wrapper rebuilds it from the spec and policy.
	files := &airlock.Files{Root: filepath.Join(cfg.DataDir, "airlock"), Shared: sys.store}
	gen, err := codegen.New(templates.FS)
	if err != nil {
		return nil, err
	}
	ob := &airlock.Onboarder{Generator: gen, Validate: validateManifest}
	if goCmd, err := exec.LookPath("go"); err != nil {
		log.Warn("airlock: no Go toolchain on PATH; approved specs cannot be built into wrappers", "err", err)
	} else if ob.Requires, err = codegen.BuildRequires(ctx, goCmd); err != nil {
		log.Warn("airlock: wrapper dependencies unavailable; approved specs cannot be built", "err", err)
	}
	// Notifications live in the store, listed by every replica; a
	// notifications file an earlier version kept moves into it once.
	notes := airlock.NewNotificationLog(sys.store)
	if n, err := airlock.ImportNotificationFile(ctx, filepath.Join(files.Root, "notifications.jsonl"), sys.store); err != nil {
		return nil, err
	} else if n > 0 {
		log.Info("airlock: imported the notifications file into the store", "notifications", n)
	}
	// The ledger is the store, shared by every worker and API replica. A
	// ledger file an earlier version kept in the data dir moves into it
	// once, so its calls keep counting.
	if n, err := airlock.ImportLedgerFile(ctx, filepath.Join(files.Root, "ledger.jsonl"), sys.store); err != nil {
		return nil, err
	} else if n > 0 {
		log.Info("airlock: imported the ledger file into the store", "calls", n)
	}
	var ledger airlock.Ledger = sys.store
	notifier := logNotifier{log: log, next: notes}
	health := &airlock.HealthChecker{Files: files, Prober: &airlock.Prober{}, Tools: sys.store, Notifier: notifier}
	parts := &airlockParts{
		files:   files,
		defs:    defs,
		notes:   notes,
		health:  health,
		runtime: &airlock.Runtime{Files: files, Executor: &airlock.Executor{Ledger: ledger, Notifier: notifier}, Builder: ob},
		activities: &activities.Airlock{
			Health:      health,
			Scanner:     &airlock.Scanner{Fetcher: &airlock.Fetcher{}, Files: files, Definitions: defs, Embedder: sys.model},
			Onboarding:  &airlock.Onboarding{Onboarder: ob, Files: files, Definitions: defs, Registrar: airlock.RegistryRegistrar{Registry: sys.registry}, Catalogue: sys.store},
			Files:       files,
			Definitions: defs,
		},
	}
	if c != nil {
		parts.activities.Reviews = worker.Reviews(c, "", cfg.ReviewTimeout)
		// The review lifecycle the API routes and the console share.
		parts.review = review.New(c, defs, review.Config{Namespace: cfg.Temporal.Namespace, ReviewTimeout: cfg.ReviewTimeout})
	}
	parts.activities.Gaps = sys.store
	return parts, nil
}

// routes returns the airlock's HTTP routes (the process has a Temporal
// client, so a review service).
func (p *airlockParts) routes() *apiairlock.Handler {
	return apiairlock.New(p.review).WithOperations(p.notes, p.health)
}

// HealthScheduleID is the schedule that probes onboarded APIs.
const HealthScheduleID = "toolsmith-airlock-health"

// ensureScanSchedule rescans every source hourly, probes every onboarded
// API every 15 minutes and, when enabled, proposes external definitions
// for recurring gaps every --gap-discovery-every.
func ensureScanSchedule(ctx context.Context, c client.Client, cfg config.Config) error {
	err := verbs.EnsureIntervalSchedule(ctx, c, ScanScheduleID, time.Hour, &client.ScheduleWorkflowAction{
		ID: "sources-scan-scheduled", Workflow: workflows.ScanSourcesWorkflow, TaskQueue: workflows.TaskQueue,
		Args: []any{workflows.ScanInput{ReviewTimeout: cfg.ReviewTimeout}},
	})
	if err != nil {
		return err
	}
	err = verbs.EnsureIntervalSchedule(ctx, c, HealthScheduleID, 15*time.Minute, &client.ScheduleWorkflowAction{
		ID: "airlock-health-scheduled", Workflow: workflows.HealthCheckWorkflow, TaskQueue: workflows.TaskQueue,
	})
	if err != nil {
		return err
	}
	if cfg.GapDiscovery.MinCount <= 0 {
		// Off (the default): a schedule left by an earlier configuration goes.
		if err := c.ScheduleClient().GetHandle(ctx, GapDiscoveryScheduleID).Delete(ctx); err != nil {
			var nf *serviceerror.NotFound
			if !errors.As(err, &nf) {
				return fmt.Errorf("remove the gap discovery schedule: %w", err)
			}
		}
		return nil
	}
	return verbs.EnsureIntervalSchedule(ctx, c, GapDiscoveryScheduleID, cfg.GapDiscovery.Every, &client.ScheduleWorkflowAction{
		ID: "gap-discovery-scheduled", Workflow: workflows.GapDiscoveryWorkflow, TaskQueue: workflows.TaskQueue,
		Args: []any{workflows.GapDiscoveryInput{MinCount: cfg.GapDiscovery.MinCount, MinScore: cfg.GapDiscovery.MinScore}},
	})
}

// GapDiscoveryScheduleID is the schedule of gap-driven discovery (only
// with --gap-discovery-min-count).
const GapDiscoveryScheduleID = "toolsmith-gap-discovery"

// logNotifier logs each notification and keeps it for GET /api/v1/notifications.
type logNotifier struct {
	log  *slog.Logger
	next airlock.Notifier
}

func (n logNotifier) Notify(ctx context.Context, note airlock.Notification) error {
	n.log.Warn("notification", "kind", note.Kind, "subject", note.Subject, "message", note.Message)
	return n.next.Notify(ctx, note)
}
