package airlock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/codegen/kit"
)

// CheckRow is one spec of a corpus check.
type CheckRow struct {
	Spec       string  `json:"spec"`
	Loaded     bool    `json:"loaded"`
	Warnings   int     `json:"warnings"`
	Operations int     `json:"operations"`
	Tools      int     `json:"tools"`
	Built      bool    `json:"built"`
	TestPassed bool    `json:"testPassed"`
	Onboarded  bool    `json:"onboarded"`
	Stage      string  `json:"failedStage,omitempty"`
	Error      string  `json:"error,omitempty"`
	Seconds    float64 `json:"seconds"`
	// Excluded are the operations preflight left out, each with its reason.
	Excluded []codegen.Exclusion `json:"excluded,omitempty"`
	// Flaky are generated tests whose result changed between the two runs.
	Flaky []string `json:"flaky,omitempty"`
	// Detail is the generated test's failing lines (stage test).
	Detail []string `json:"detail,omitempty"`
	// Failed are the generated tests that failed (stage test).
	Failed []string `json:"failed,omitempty"`
}

// Outcome is what a repeated check compares between runs: everything a
// spec's row says but its timing.
func (r CheckRow) Outcome() string {
	var left []string
	for _, x := range r.Excluded {
		left = append(left, x.Tool.Name)
	}
	return fmt.Sprintf("loaded=%s warnings=%d operations=%d tools=%d built=%s test=%s onboarded=%s stage=%q left-out=[%s] flaky=[%s] failed=[%s]",
		yes(r.Loaded), r.Warnings, r.Operations, r.Tools, yes(r.Built), yes(r.TestPassed), yes(r.Onboarded), r.Stage,
		strings.Join(left, " "), strings.Join(r.Flaky, " "), strings.Join(r.Failed, " "))
}

// CheckChange is a spec whose outcome changed between the runs of a
// repeated check: its outcome in each run.
type CheckChange struct {
	Spec     string   `json:"spec"`
	Outcomes []string `json:"outcomes"`
}

// CheckReport sums up a corpus check.
type CheckReport struct {
	Specs         int            `json:"specs"`
	Onboarded     int            `json:"onboarded"`
	Rate          float64        `json:"rate"`
	Operations    int            `json:"operations"`
	Tools         int            `json:"tools"`
	Excluded      int            `json:"excludedOperations"`
	Warnings      int            `json:"specsWithWarnings"`
	MedianSeconds float64        `json:"medianSeconds"`
	Failures      map[string]int `json:"failures"`
	// Flaky counts the specs with a generated test whose result changed
	// between its two runs (each is also a failure at the test stage).
	Flaky   int        `json:"flakySpecs"`
	Sandbox string     `json:"sandbox"`
	Rows    []CheckRow `json:"-"`
	// Runs is how many times the whole check ran (--repeat); the figures
	// above are the first run's, RunsOnboarded each run's count.
	Runs          int   `json:"runs"`
	RunsOnboarded []int `json:"runsOnboarded"`
	// Changed are the specs whose outcome changed between runs.
	Changed []CheckChange `json:"changed"`
}

// CheckOptions control a corpus check.
type CheckOptions struct {
	// JSON prints one summary object as the last line of out.
	JSON bool
	// Limit checks only the first N specs (0 = all), for quick runs.
	Limit int
	// Explain lists, under each spec, the operations preflight left out
	// and why.
	Explain bool
	// Repeat runs the whole check this many times (0 or 1: once) and
	// reports each spec whose outcome changed between runs.
	Repeat int
}

// SpecExtensions are the file types a corpus check reads.
var SpecExtensions = []string{".json", ".yaml", ".yml"}

// Check onboards every spec under dir with automatic approval (a default
// policy; this path exists only for the check, never for the service),
// running each generated test twice so that a flaky one fails,
// printing one line per spec to out and progress to progress, then totals.
//
// With opts.Repeat above one, the whole check (load, generate, build, test
// twice) runs that many times, each run printing its table, and a last
// section lists every spec whose outcome changed between runs: a spec's
// outcome must be a function of the spec alone.
func Check(ctx context.Context, ob *Onboarder, dir string, opts CheckOptions, out, progress io.Writer) (CheckReport, error) {
	runs := max(1, opts.Repeat)
	var first CheckReport
	var runsRows [][]CheckRow
	for run := 1; run <= runs; run++ {
		if runs > 1 {
			fmt.Fprintf(out, "run %d of %d\n", run, runs)
		}
		one := opts
		one.JSON = false
		rep, err := checkRun(ctx, ob, dir, one, out, progress, run, runs)
		if err != nil {
			return rep, err
		}
		if run == 1 {
			first = rep
		}
		first.RunsOnboarded = append(first.RunsOnboarded, rep.Onboarded)
		runsRows = append(runsRows, rep.Rows)
	}
	first.Runs = runs
	first.Changed = changedOutcomes(runsRows)
	if runs > 1 {
		fmt.Fprintf(out, "\n%d runs: onboarded %s of %d specs; %d spec(s) changed outcome between runs\n",
			runs, joinInts(first.RunsOnboarded, ", "), first.Specs, len(first.Changed))
		for _, c := range first.Changed {
			fmt.Fprintf(out, "  changed %s\n", c.Spec)
			for i, o := range c.Outcomes {
				fmt.Fprintf(out, "    run %d: %s\n", i+1, o)
			}
		}
	}
	if opts.JSON {
		b, _ := json.Marshal(first)
		fmt.Fprintln(out, string(b))
	}
	return first, nil
}

// changedOutcomes compares the rows of each run (one row per spec, in the
// same order every run) and returns the specs whose outcome changed.
func changedOutcomes(runs [][]CheckRow) []CheckChange {
	changed := []CheckChange{}
	if len(runs) == 0 {
		return changed
	}
	for i, r := range runs[0] {
		c := CheckChange{Spec: r.Spec}
		differs := false
		for _, rows := range runs {
			o := "(not checked)"
			if i < len(rows) {
				o = rows[i].Outcome()
			}
			c.Outcomes = append(c.Outcomes, o)
			differs = differs || o != c.Outcomes[0]
		}
		if differs {
			changed = append(changed, c)
		}
	}
	return changed
}

func joinInts(ns []int, sep string) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, sep)
}

// checkRun is one run of a check over every spec under dir.
func checkRun(ctx context.Context, ob *Onboarder, dir string, opts CheckOptions, out, progress io.Writer, run, runs int) (CheckReport, error) {
	files, err := SpecFiles(dir)
	if err != nil {
		return CheckReport{}, fmt.Errorf("airlock check: %w", err)
	}
	if len(files) == 0 {
		return CheckReport{}, fmt.Errorf("airlock check: no %s files under %s", strings.Join(SpecExtensions, "/"), dir)
	}
	if opts.Limit > 0 && len(files) > opts.Limit {
		files = files[:opts.Limit]
	}
	// Every spec's generated test runs twice: a result that changes
	// between the runs is reported as a failure (a flake), with its cause.
	twice := *ob
	twice.TestRuns = max(2, ob.TestRuns)
	ob = &twice
	rep := CheckReport{Failures: map[string]int{}}
	fmt.Fprintf(out, "%-60s %-6s %-5s %5s %5s %-5s %-5s %7s\n", "SPEC", "LOADED", "WARN", "OPS", "TOOLS", "BUILT", "TEST", "SECONDS")
	var secs []float64
	start := time.Now()
	for i, f := range files {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		rel, _ := filepath.Rel(dir, f)
		runNote := ""
		if runs > 1 {
			runNote = fmt.Sprintf("run %d/%d ", run, runs)
		}
		fmt.Fprintf(progress, "\r%s[%d/%d] %s ok so far: %d   ", runNote, i+1, len(files), clip(rel, 60), rep.Onboarded)
		row := checkOne(ctx, ob, f, rel)
		rep.Rows = append(rep.Rows, row)
		rep.Specs++
		rep.Operations += row.Operations
		if row.Warnings > 0 {
			rep.Warnings++
		}
		if len(row.Flaky) > 0 {
			rep.Flaky++
		}
		if row.Onboarded {
			rep.Onboarded++
			rep.Tools += row.Tools
			rep.Excluded += row.Operations - row.Tools
		} else {
			rep.Failures[row.Stage]++
		}
		secs = append(secs, row.Seconds)
		fmt.Fprintf(out, "%-60s %-6s %-5d %5d %5d %-5s %-5s %7.1f%s\n", clip(rel, 60), yes(row.Loaded), row.Warnings, row.Operations, row.Tools, yes(row.Built), yes(row.TestPassed), row.Seconds, failNote(row))
		if opts.Explain {
			for _, l := range row.Detail {
				fmt.Fprintf(out, "    test: %s\n", clip(l, 300))
			}
			for _, x := range row.Excluded {
				fmt.Fprintf(out, "    left out %s (%s %s): %s\n", x.Tool.Name, x.Tool.Method, x.Tool.Path, clip(strings.ReplaceAll(x.Reason, "\n", " "), 200))
			}
		}
	}
	fmt.Fprintf(progress, "\rchecked %d specs in %s%s\n", len(files), time.Since(start).Round(time.Second), strings.Repeat(" ", 40))
	sort.Float64s(secs)
	if len(secs) > 0 {
		rep.MedianSeconds = secs[len(secs)/2]
	}
	rep.Rate = float64(rep.Onboarded) / float64(rep.Specs)
	rep.Sandbox = codegen.Sandbox()
	fmt.Fprintf(out, "\nonboarded %d of %d specs (%.1f%%): %d tools from %d operations (%d left out by preflight); %d flaky; median %.1f s per spec; sandbox: %s\n",
		rep.Onboarded, rep.Specs, 100*rep.Rate, rep.Tools, rep.Operations, rep.Excluded, rep.Flaky, rep.MedianSeconds, rep.Sandbox)
	if len(rep.Failures) > 0 {
		stages := make([]string, 0, len(rep.Failures))
		for s := range rep.Failures {
			stages = append(stages, s)
		}
		sort.Strings(stages)
		for _, s := range stages {
			fmt.Fprintf(out, "  failed at %-9s %d\n", s+":", rep.Failures[s])
		}
	}
	return rep, nil
}

func checkOne(ctx context.Context, ob *Onboarder, path, rel string) CheckRow {
	row := CheckRow{Spec: rel}
	data, err := os.ReadFile(path)
	if err != nil {
		row.Stage, row.Error = StageLoad, err.Error()
		return row
	}
	p := Policy{}
	// The check has no reviewer to supply a server: a spec without an
	// absolute one gets a placeholder host that is never contacted (the
	// generated test talks only to its loopback mock).
	if n, err := codegen.Normalise(ctx, data); err == nil {
		if _, err := BaseURL(n, p); err != nil {
			p.BaseURL = "https://api.example.invalid" + relativePath(kit.ServerURL(n.Doc))
		}
	}
	o := ob.Onboard(ctx, data, SpecInfo{URL: path}, p)
	row.Loaded = o.Stage != StageLoad
	row.Warnings = len(o.Warnings) - len(o.Excluded)
	row.Operations = o.Operations
	row.Tools = len(o.Manifests)
	row.Built, row.TestPassed, row.Onboarded = o.Built, o.TestPassed, o.OK()
	row.Stage, row.Error = o.Stage, o.Error
	row.Seconds = o.Duration.Seconds()
	row.Excluded = o.Excluded
	if o.Verification != nil {
		row.Flaky = o.Verification.Flaky
		if o.Stage == StageTest {
			row.Detail = failingLines(o.Verification.Output, 8)
			row.Failed = o.Verification.Failed()
		}
	}
	if o.Verification != nil && o.OK() && o.Verification.Dir != "" && ob.WorkDir == "" {
		_ = os.RemoveAll(o.Verification.Dir)
	}
	return row
}

func relativePath(u string) string {
	if strings.HasPrefix(u, "/") {
		return strings.TrimRight(u, "/")
	}
	return ""
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func failNote(r CheckRow) string {
	if r.Onboarded {
		return ""
	}
	return "  FAILED at " + r.Stage + ": " + clip(strings.ReplaceAll(r.Error, "\n", " "), 160)
}

// failingLines picks the lines of a test output that say what failed.
func failingLines(output string, n int) []string {
	var out []string
	for _, l := range strings.Split(output, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- PASS") || strings.HasPrefix(t, "--- SKIP") || t == "PASS" {
			continue
		}
		if strings.HasPrefix(t, "--- FAIL") || strings.HasPrefix(t, "flaky:") || strings.Contains(t, "_test.go:") || strings.Contains(t, "panic") || strings.Contains(t, "timed out") {
			out = append(out, t)
			if len(out) == n {
				break
			}
		}
	}
	return out
}
