package build

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/codegen"
)

// Report is what building and testing a program found. A refused, broken
// or failing program is a Report, not an error: the workflow hands it back
// to the model.
type Report struct {
	// Refused is set when a guard rail refused the program before it was
	// built (the rule and the position).
	Refused string `json:"refused,omitempty"`
	Built   bool   `json:"built"`
	Passed  bool   `json:"passed"`
	// Sandbox is how the tests were isolated (codegen.Sandbox*).
	Sandbox string                `json:"sandbox,omitempty"`
	Tests   []codegen.TestOutcome `json:"tests,omitempty"`
	// Output is the compiler's or the failing tests' output (its tail).
	Output string `json:"output,omitempty"`
	Binary string `json:"-"`
	// Dir is the module's directory (the caller removes it when done).
	Dir      string        `json:"-"`
	Duration time.Duration `json:"durationNs"`
}

// Stage names what the report says went wrong ("" when it passed).
func (r Report) Stage() string {
	switch {
	case r.Refused != "":
		return "refused"
	case !r.Built:
		return "build"
	case !r.Passed:
		return "test"
	}
	return ""
}

// Summary is the report in one line.
func (r Report) Summary() string {
	switch r.Stage() {
	case "refused":
		return "refused before building: " + r.Refused
	case "build":
		return "does not compile: " + firstLine(compilerLines(r.Output))
	case "test":
		var failed []string
		for _, t := range r.Tests {
			if t.Result == "FAIL" {
				failed = append(failed, t.Name)
			}
		}
		if len(failed) == 0 {
			return "the tests did not pass: " + firstLine(r.Output)
		}
		return fmt.Sprintf("%d of %d test(s) failed: %s", len(failed), len(r.Tests), strings.Join(failed, ", "))
	}
	return fmt.Sprintf("built; %d test(s) passed", len(r.Tests))
}

// Options bound building and testing.
type Options struct {
	// Dir is where the module is written (default: a new temp dir).
	Dir string
	// Timeout bounds the build and the test run together (default 2 min).
	Timeout time.Duration
	// Module names the module (default "toolsmith.build/" + the tool).
	Module string
}

// Verify checks the program's guard rails, then compiles it and runs its
// tests in the airlock wrappers' sandbox (codegen.Verify). The Go error is
// for the machinery alone (no temp dir, a cancelled context).
func Verify(ctx context.Context, p Program, opts Options) (Report, error) {
	start := time.Now()
	if err := p.Check(); err != nil {
		return Report{Refused: strings.TrimPrefix(err.Error(), ErrRefused.Error()+": "), Duration: time.Since(start)}, nil
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Module == "" {
		opts.Module = "toolsmith.build/" + p.Tool
	}
	files, err := Files(opts.Module, p)
	if err != nil {
		return Report{}, err
	}
	v, err := codegen.Verify(ctx, &codegen.Wrapper{Name: p.Tool, Files: files}, codegen.VerifyOptions{Dir: opts.Dir, Timeout: opts.Timeout})
	rep := Report{Duration: time.Since(start)}
	if v != nil {
		rep.Built, rep.Passed, rep.Sandbox, rep.Tests, rep.Output, rep.Binary, rep.Dir = v.Built, v.Passed, v.Sandbox, v.Tests, v.Output, v.Binary, v.Dir
	}
	switch {
	case errors.Is(err, codegen.ErrBuild):
		rep.Built, rep.Passed = false, false
		if rep.Output == "" {
			rep.Output = err.Error()
		}
		return rep, nil
	case err != nil:
		return rep, fmt.Errorf("build: verify %s: %w", p.Tool, err)
	case ctx.Err() != nil:
		return rep, fmt.Errorf("build: verify %s: %w", p.Tool, ctx.Err())
	}
	return rep, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// compilerLines drops the go command's "# package" headers, so a summary
// starts with the compiler's first complaint.
func compilerLines(out string) string {
	var kept []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "# ") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}
