package airlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Onboarding stages, in order; an Outcome's Stage is the one that failed.
const (
	StageLoad     = "load"     // parse, convert, structural validation
	StageGenerate = "generate" // no operation could be wrapped, bad options
	StageBuild    = "build"    // the wrapper or its test does not compile
	StageTest     = "test"     // the generated test failed
	StageManifest = "manifest" // a produced manifest does not validate
)

// Onboarder turns a spec into a built, tested wrapper and tool manifests.
type Onboarder struct {
	Generator *codegen.Generator
	// Requires are the wrapper modules' requirements (codegen.BuildRequires).
	Requires []codegen.Require
	// WorkDir holds one directory per wrapper (default: a temp dir).
	WorkDir string
	// Timeout bounds building and testing one wrapper.
	Timeout time.Duration
	// Validate, when set, checks each produced manifest (registry rules).
	Validate func(*tool.Manifest) error
	// TestRuns is how many times the generated test runs (default 1); with
	// two or more a result that changes between runs fails the test stage
	// as a flake (airlock check runs it twice).
	TestRuns int
}

// Outcome reports an onboarding attempt.
type Outcome struct {
	Slug         string                `json:"slug"`
	Version      string                `json:"specVersion,omitempty"`
	Warnings     []string              `json:"warnings,omitempty"`
	Operations   int                   `json:"operations"`
	Excluded     []codegen.Exclusion   `json:"excluded,omitempty"`
	Built        bool                  `json:"built"`
	TestPassed   bool                  `json:"testPassed"`
	Sandbox      string                `json:"sandbox,omitempty"`
	Binary       string                `json:"binary,omitempty"`
	SourceHash   string                `json:"sourceHash,omitempty"`
	Manifests    []tool.Manifest       `json:"-"`
	Stage        string                `json:"failedStage,omitempty"`
	Error        string                `json:"error,omitempty"`
	Verification *codegen.Verification `json:"-"`
	Duration     time.Duration         `json:"durationNs"`
}

// OK reports whether onboarding succeeded.
func (o Outcome) OK() bool { return o.Stage == "" }

// Onboard runs the whole pipeline for one spec. It never returns a Go error:
// the Outcome says which stage failed and why.
func (ob *Onboarder) Onboard(ctx context.Context, data []byte, info SpecInfo, p Policy) Outcome {
	start := time.Now()
	out := ob.onboard(ctx, data, info, p)
	out.Duration = time.Since(start)
	return out
}

func (ob *Onboarder) onboard(ctx context.Context, data []byte, info SpecInfo, p Policy) Outcome {
	var out Outcome
	fail := func(stage string, err error) Outcome {
		out.Stage, out.Error = stage, err.Error()
		return out
	}
	if err := p.Validate(); err != nil {
		return fail(StageGenerate, fmt.Errorf("policy: %w", err))
	}
	n, err := codegen.Normalise(ctx, data)
	if err != nil {
		return fail(StageLoad, err)
	}
	out.Warnings = n.Warnings
	if n.Doc.Info != nil {
		out.Version = n.Doc.Info.Version
	}
	if info.Slug == "" {
		info.Slug = Slug(n.Doc, strings.TrimSuffix(filepath.Base(info.URL), filepath.Ext(info.URL)))
	}
	out.Slug = info.Slug
	base, err := BaseURL(n, p)
	if err != nil {
		return fail(StageGenerate, err)
	}
	w, err := ob.Generator.Generate(n, codegen.Options{Name: info.Slug, BaseURL: base, Operations: p.Operations, Requires: ob.Requires})
	out.Operations = len(kit.Operations(n.Doc))
	if err != nil {
		return fail(StageGenerate, err)
	}
	out.Excluded = w.Excluded
	out.SourceHash = SourceHash(w.Files)
	for _, e := range w.Excluded {
		out.Warnings = append(out.Warnings, fmt.Sprintf("operation %s left out: %s", e.Tool.Name, e.Reason))
	}
	dir := ""
	if ob.WorkDir != "" {
		dir = filepath.Join(ob.WorkDir, info.Slug)
		if err := os.RemoveAll(dir); err != nil {
			return fail(StageBuild, err)
		}
	}
	v, err := codegen.Verify(ctx, w, codegen.VerifyOptions{Dir: dir, Timeout: ob.Timeout, Runs: ob.TestRuns})
	out.Verification = v
	if v != nil {
		out.Built, out.Sandbox, out.Binary = v.Built, v.Sandbox, v.Binary
	}
	if err != nil {
		return fail(StageBuild, err)
	}
	if !v.Passed {
		failed := v.Failed()
		msg := "the generated test failed"
		switch {
		case len(v.Flaky) > 0:
			msg = fmt.Sprintf("flaky: %d generated test(s) gave different results in %d runs, first %s: %s",
				len(v.Flaky), max(1, ob.TestRuns), v.Flaky[0], kit.FirstLine(v.Output))
		case len(failed) > 0:
			msg = fmt.Sprintf("%d generated test(s) failed, first %s", len(failed), failed[0])
		}
		return fail(StageTest, errors.New(msg))
	}
	out.TestPassed = true
	ms, err := Manifests(n, w, info, p)
	if err != nil {
		return fail(StageManifest, err)
	}
	if ob.Validate != nil {
		for i := range ms {
			if err := ob.Validate(&ms[i]); err != nil {
				return fail(StageManifest, fmt.Errorf("%s: %w", ms[i].ToolID, err))
			}
		}
	}
	out.Manifests = ms
	return out
}

// BaseURL is the server a wrapper may call: the approval's override, else
// the spec's first absolute server URL. A spec with only a relative server
// (or none) needs an override.
func BaseURL(n *codegen.Normalised, p Policy) (string, error) {
	if p.BaseURL != "" {
		return p.BaseURL, nil
	}
	u := kit.ServerURL(n.Doc)
	if _, err := kit.HostOf(u); err != nil {
		return "", fmt.Errorf("the spec names no absolute server URL (%q); approve with a baseUrl: %w", u, fault.ErrInvalid)
	}
	return u, nil
}

// SourceHash is the sha256 (hex) of a wrapper's generated files: each
// name and content, in name order. Generation is a pure function of the
// spec, the policy's operations and base URL, and the toolchain's module
// requirements, so a worker that rebuilds an approved wrapper checks with
// it that it built what was approved.
func SourceHash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(files[name]))
		h.Write(files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}
