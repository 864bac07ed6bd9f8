package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	"go.temporal.io/sdk/activity"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/build"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Error types of building a tool from scratch.
const (
	// ErrTypeBuildBudget: the build's token budget is spent. Non-retryable.
	ErrTypeBuildBudget = "BuildBudgetExceeded"
	// ErrTypeBuildFailed: the approved program no longer builds or passes
	// its tests. Non-retryable.
	ErrTypeBuildFailed = "BuildFailed"
)

// OriginBuilt is the manifest source origin of tools built from scratch;
// they run through the airlock runtime like onboarded wrappers.
const OriginBuilt = "built"

// DefaultBuildTokenBudget is a build's token budget when none is configured.
const DefaultBuildTokenBudget = 40000

// Build holds the activities of building a tool from scratch: a model
// writes the program, the wrappers' sandbox builds and tests it, and an
// approval registers it like an onboarded wrapper.
type Build struct {
	// Model is nil when no model is configured.
	Model llms.Model
	// ModelName is what the review shows as the model.
	ModelName string
	// TokenBudget is each build's token budget (0: DefaultBuildTokenBudget).
	TokenBudget int
	// WorkDir holds each build's rounds (default: a temp dir per round).
	WorkDir string
	// TestTimeout bounds building and testing one round (default 2 min).
	TestTimeout time.Duration
	// Files keeps approved programs' binaries and approvals, where the
	// airlock runtime finds them.
	Files     *airlock.Files
	Registrar airlock.ToolRegistrar
	Gaps      graph.Gaps
}

// WriteProgramInput is one round's question.
type WriteProgramInput struct {
	Request  build.Request  `json:"request"`
	Previous *build.Attempt `json:"previous,omitempty"`
	// TokensUsed is what the build's earlier rounds cost.
	TokensUsed int `json:"tokensUsed"`
}

// WriteProgramOutput is one round's answer. Invalid is set (and Program
// empty) when the answer was not a program: the workflow shows the model
// why in the next round.
type WriteProgramOutput struct {
	Program       build.Program `json:"program"`
	Invalid       string        `json:"invalid,omitempty"`
	Tokens        int           `json:"tokens"`
	Budget        int           `json:"budget"`
	Model         string        `json:"model"`
	PromptVersion string        `json:"promptVersion"`
}

func (b *Build) budget() int {
	if b.TokenBudget > 0 {
		return b.TokenBudget
	}
	return DefaultBuildTokenBudget
}

// WriteProgram asks the model for the round's program. No model is a
// non-retryable LLMUnavailable ("build needs a model"); a spent budget is a
// non-retryable BuildBudgetExceeded; a failed call is retried by the
// caller's policy (and bounded by its timeout).
func (b *Build) WriteProgram(ctx context.Context, in WriteProgramInput) (WriteProgramOutput, error) {
	out := WriteProgramOutput{Budget: b.budget(), Model: b.ModelName, PromptVersion: build.PromptVersion}
	if b.Model == nil {
		// The message is the reason after the workflow's "build needs a
		// model: " (no sentinel text for people to read).
		return out, benign(ErrTypeLLMUnavailable, "%s", build.NoModelHint)
	}
	left := out.Budget - in.TokensUsed
	if left <= 0 {
		return out, FailWithDetails(ErrTypeBuildBudget, out, "the build's token budget of %d is spent (%d used)", out.Budget, in.TokensUsed)
	}
	d, err := build.Write(ctx, b.Model, in.Request, in.Previous, left)
	out.Program, out.Tokens = d.Program, d.Tokens
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, build.ErrBudget):
		// The output rides along as details: the workflow records the
		// round, the model and what the answer cost.
		return out, FailWithDetails(ErrTypeBuildBudget, out, "the build's token budget of %d is spent: %d used before, and this answer cost %d",
			out.Budget, in.TokensUsed, d.Tokens)
	case errors.Is(err, build.ErrInvalidAnswer):
		out.Invalid = err.Error()
		return out, nil
	default:
		return out, fmt.Errorf("activities: write program for %s: %w", in.Request.Verb, err)
	}
}

// TestProgramInput is a round's program to build and test.
type TestProgramInput struct {
	BuildID string        `json:"buildId"`
	Round   int           `json:"round"`
	Program build.Program `json:"program"`
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// TestProgram checks the program's guard rails, then builds and tests it
// in the wrappers' sandbox. A refused, broken or failing program is a
// Report, not an error; an error means the sandbox itself failed (retried).
func (b *Build) TestProgram(ctx context.Context, in TestProgramInput) (build.Report, error) {
	dir := ""
	if b.WorkDir != "" {
		dir = filepath.Join(b.WorkDir, unsafeName.ReplaceAllString(in.BuildID, "_"), fmt.Sprintf("round-%d", in.Round))
		if err := os.RemoveAll(dir); err != nil {
			return build.Report{}, fmt.Errorf("activities: test program: %w", err)
		}
	}
	rep, err := build.Verify(ctx, in.Program, build.Options{Dir: dir, Timeout: b.TestTimeout})
	if rep.Dir != "" {
		// The round's module and binary are not kept: an approval builds
		// the program again where the airlock keeps wrappers.
		defer os.RemoveAll(rep.Dir)
	}
	if err != nil {
		return rep, fmt.Errorf("activities: test program of %s: %w", in.BuildID, err)
	}
	activity.GetLogger(ctx).Info("build_round", "build", in.BuildID, "round", in.Round, "stage", rep.Stage(), "summary", rep.Summary())
	return rep, nil
}

// RegisterBuiltInput is an approved program.
type RegisterBuiltInput struct {
	BuildID  string         `json:"buildId"`
	Verb     string         `json:"verb"`
	Program  build.Program  `json:"program"`
	Policy   airlock.Policy `json:"policy"`
	Reviewer string         `json:"reviewer,omitempty"`
}

// RegisterBuiltOutput says what the approval registered.
type RegisterBuiltOutput struct {
	ToolID    string `json:"toolId"`
	ClosedGap bool   `json:"closedGap"`
}

// BuiltSlug is the wrapper name of the tool built for verb.
func BuiltSlug(verb string) string {
	return "built-" + strings.ReplaceAll(strings.ToLower(verb), "_", "-")
}

// RegisterBuiltTool builds and tests the approved program again, into the
// airlock's wrapper directory, records the approval there (so the airlock
// runtime runs it under the policy), registers its tool and closes the
// verb's gap, linked to the tool. Building again is what makes the
// approval safe to retry and independent of the round's temp files.
func (b *Build) RegisterBuiltTool(ctx context.Context, in RegisterBuiltInput) (RegisterBuiltOutput, error) {
	if b.Files == nil || b.Registrar == nil {
		return RegisterBuiltOutput{}, Fail(ErrTypeNotExecutable, "this worker has no airlock to register built tools in")
	}
	if err := in.Policy.Validate(); err != nil {
		return RegisterBuiltOutput{}, Fail(ErrTypeInvalidInput, "policy: %v", err)
	}
	slug := BuiltSlug(in.Verb)
	root := b.Files.WrapperDir(slug)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return RegisterBuiltOutput{}, fmt.Errorf("activities: register built tool: %w", err)
	}
	dir := filepath.Join(root, "build-"+unsafeName.ReplaceAllString(in.BuildID, "_"))
	if err := os.RemoveAll(dir); err != nil {
		return RegisterBuiltOutput{}, fmt.Errorf("activities: register built tool: %w", err)
	}
	rep, err := build.Verify(ctx, in.Program, build.Options{Dir: dir, Timeout: b.TestTimeout, Module: "toolsmith.build/" + slug})
	if err != nil {
		return RegisterBuiltOutput{}, fmt.Errorf("activities: register built tool: %w", err)
	}
	if !rep.Passed {
		return RegisterBuiltOutput{}, Fail(ErrTypeBuildFailed, "the approved program of %s failed on rebuilding: %s", in.Verb, rep.Summary())
	}
	m := BuiltManifest(slug, in.Verb, in.Program, in.Policy, in.BuildID)
	ids, err := b.Registrar.RegisterManifests(ctx, []tool.Manifest{m})
	if err != nil {
		return RegisterBuiltOutput{}, Fail(ErrTypeBuildFailed, "register %s: %v", m.ToolID, err)
	}
	previous, _ := b.Files.Approval(slug)
	if err := b.Files.SaveApproval(airlock.Approval{ID: in.BuildID, Slug: slug, Location: "build:" + in.BuildID,
		Binary: rep.Binary, Policy: in.Policy, ToolIDs: ids}); err != nil {
		return RegisterBuiltOutput{}, fmt.Errorf("activities: register built tool: %w", err)
	}
	// An earlier approved build of the verb is replaced: its directory goes.
	if old := filepath.Dir(previous.Binary); previous.Binary != "" && old != dir && filepath.Dir(old) == root {
		_ = os.RemoveAll(old)
	}
	out := RegisterBuiltOutput{ToolID: m.ToolID}
	if b.Gaps != nil {
		// Registering a tool for the verb may have closed the gap already
		// (the registry closes a verb's gap); either way it is closed by
		// this tool now, or there was none.
		closed, err := b.Gaps.CloseGap(ctx, in.Verb, m.ToolID, time.Now().UTC())
		if err != nil {
			return out, fmt.Errorf("activities: close the gap of %s: %w", in.Verb, err)
		}
		if !closed {
			gaps, err := b.Gaps.ListGaps(ctx, graph.GapQuery{Status: graph.GapClosed, Limit: 1000})
			if err != nil {
				return out, fmt.Errorf("activities: read the gap of %s: %w", in.Verb, err)
			}
			for _, g := range gaps {
				closed = closed || (g.Verb == in.Verb && g.ClosedBy == m.ToolID)
			}
		}
		out.ClosedGap = closed
	}
	return out, nil
}

// BuiltManifest is the manifest of an approved program: the approval's
// groups, users and roles decide who sees and runs it, as for an
// onboarded wrapper.
func BuiltManifest(slug, verb string, p build.Program, pol airlock.Policy, buildID string) tool.Manifest {
	groups := pol.AllowedGroups
	if len(groups) == 0 {
		groups = []string{tool.DefaultGroup}
	}
	level := pol.RequiredLevel
	if level == "" {
		level = tool.LevelUser
	}
	perms := []string{"public"}
	if anyOf := access.AnyOf(pol.AllowedRoles, pol.AllowedUsers); anyOf != "" {
		perms = []string{anyOf}
	}
	return tool.Manifest{
		ToolID:              slug + "." + p.Tool,
		Verb:                verb,
		Name:                strings.ReplaceAll(p.Tool, "_", " "),
		Description:         p.Description,
		Category:            "built",
		Tags:                []string{"built", slug},
		Groups:              groups,
		PermissionsRequired: perms,
		RequiredPermission:  level,
		InputSchema:         p.InputSchema,
		OutputSchema:        p.OutputSchema,
		Version:             "1.0.0",
		Source:              &tool.Source{Origin: OriginBuilt, Version: buildID},
		Status:              "active",
	}
}

// NoteGapInput is a reason to record on a verb's open gap.
type NoteGapInput struct {
	Verb   string `json:"verb"`
	Reason string `json:"reason"`
}

// NoteGap records why the verb's gap stays open (no model, a failed or
// rejected build) without counting another ask. A verb without a gap is
// not an error: there is nothing to note on.
func (b *Build) NoteGap(ctx context.Context, in NoteGapInput) (bool, error) {
	if b.Gaps == nil {
		return false, nil
	}
	_, err := b.Gaps.RecordGap(ctx, graph.GapEvent{Verb: in.Verb, Reason: in.Reason, NoteOnly: true})
	switch {
	case errors.Is(err, fault.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("activities: note on the gap of %s: %w", in.Verb, err)
	}
	return true, nil
}
