package codegen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
)

// Sandbox kinds reported by Verify.
const (
	// SandboxNetNS: the test ran in a fresh network namespace with only a
	// loopback interface (unshare), so it could reach nothing else.
	SandboxNetNS = "netns-loopback-only"
	// SandboxNone: no namespace could be made; the test ran with the host's
	// network (the wrapper's own host guard still applies).
	SandboxNone = "none"
)

// VerifyOptions control building and running a wrapper's test.
type VerifyOptions struct {
	// Dir is where the wrapper's module is written (default: a new temp dir).
	Dir string
	// Timeout bounds the build plus the test run (default 4 minutes).
	Timeout time.Duration
	// Go is the go command (default "go" on PATH).
	Go string
	// Runs is how many times the generated test runs (default 1). With more
	// than one, a test whose result differs between runs is a flake: the
	// wrapper fails verification, and Flaky names the tests.
	Runs int
}

// TestOutcome is one (sub)test of the generated test.
type TestOutcome struct {
	Name   string `json:"name"`
	Result string `json:"result"` // PASS, FAIL or SKIP
}

// Verification is what Verify found.
type Verification struct {
	Dir     string        `json:"dir"`
	Binary  string        `json:"binary"` // path of the built wrapper
	Built   bool          `json:"built"`
	Passed  bool          `json:"passed"`
	Sandbox string        `json:"sandbox"`
	Tests   []TestOutcome `json:"tests"`
	// Flaky are the tests whose results differed between runs.
	Flaky    []string      `json:"flaky,omitempty"`
	Output   string        `json:"output,omitempty"` // tail of build or test output on failure
	Duration time.Duration `json:"duration"`
}

// Failed lists the failing tests.
func (v *Verification) Failed() []string {
	var out []string
	for _, t := range v.Tests {
		if t.Result == "FAIL" {
			out = append(out, t.Name)
		}
	}
	return out
}

// ErrBuild marks a wrapper that does not compile.
var ErrBuild = errors.New("wrapper does not build")

// Verify writes the wrapper's module, compiles the wrapper and its test
// offline (GOPROXY=off: only modules already in the module cache), runs the
// test in a network namespace with loopback only when one can be made, and
// reports per-test outcomes. A build failure returns ErrBuild with the
// compiler's output; a failing test is a Verification with Passed false.
func Verify(ctx context.Context, w *Wrapper, opts VerifyOptions) (*Verification, error) {
	start := time.Now()
	if opts.Timeout <= 0 {
		opts.Timeout = 4 * time.Minute
	}
	if opts.Go == "" {
		opts.Go = "go"
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "toolsmith-wrapper-"+w.Name+"-"); err != nil {
			return nil, fmt.Errorf("codegen: temp dir: %w", err)
		}
	}
	// The go commands below run in dir and are given paths inside it: a
	// relative dir would be joined onto itself (dir/dir/wrapper), so it is
	// made absolute before anything is joined to it.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("codegen: wrapper dir %q: %w", opts.Dir, err)
	}
	if err := WriteFiles(dir, w.Files); err != nil {
		return nil, err
	}
	v := &Verification{Dir: dir, Binary: filepath.Join(dir, "wrapper")}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, opts.Go, args...)
		cmd.Dir, cmd.Env = dir, env
		return cmd.CombinedOutput()
	}
	if out, err := run("build", "-o", v.Binary, "."); err != nil {
		v.Output = tail(out, 4000)
		v.Duration = time.Since(start)
		return v, fmt.Errorf("%w: %s", ErrBuild, firstLines(out, 6))
	}
	testBin := filepath.Join(dir, "wrapper.test")
	if out, err := run("test", "-c", "-o", testBin, "."); err != nil {
		v.Output = tail(out, 4000)
		v.Duration = time.Since(start)
		return v, fmt.Errorf("%w (test): %s", ErrBuild, firstLines(out, 6))
	}
	v.Built = true
	args := []string{"-test.v", "-test.count=1", "-test.timeout=" + (opts.Timeout / 2).String()}
	runs := max(1, opts.Runs)
	results := map[string][]string{} // test → result per run
	var failedOut []byte
	for i := 0; i < runs; i++ {
		var cmd *exec.Cmd
		if netnsAvailable() {
			v.Sandbox = SandboxNetNS
			script := `ip link set lo up 2>/dev/null || true; exec "$0" "$@"`
			cmd = exec.CommandContext(ctx, "unshare", append([]string{"--net", "--map-root-user", "sh", "-c", script, testBin}, args...)...)
		} else {
			v.Sandbox = SandboxNone
			cmd = exec.CommandContext(ctx, testBin, args...)
		}
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + os.TempDir()}
		out, err := cmd.CombinedOutput()
		tests := parseTestOutput(out)
		passed := err == nil && len(tests) > 0
		for _, t := range tests {
			results[t.Name] = append(results[t.Name], t.Result)
			passed = passed && t.Result != "FAIL"
		}
		if i == 0 || (!passed && failedOut == nil) {
			v.Tests = tests
		}
		if !passed && failedOut == nil {
			failedOut = out
		}
	}
	for _, t := range v.Tests {
		rs := results[t.Name]
		for _, r := range rs[1:] {
			if r != rs[0] || len(rs) != runs {
				v.Flaky = append(v.Flaky, t.Name)
				break
			}
		}
	}
	v.Passed = failedOut == nil && len(v.Flaky) == 0 && len(v.Tests) > 0
	if !v.Passed {
		v.Output = tail(failureLines(failedOut), 4000)
		if len(v.Flaky) > 0 {
			v.Output = fmt.Sprintf("flaky: %s gave different results in %d runs (%s)\n%s", strings.Join(v.Flaky, ", "), runs,
				strings.Join(results[v.Flaky[0]], ", "), v.Output)
		}
		if ctx.Err() != nil {
			v.Output = "timed out after " + opts.Timeout.String() + "\n" + v.Output
		}
	}
	v.Duration = time.Since(start)
	return v, nil
}

// WriteFiles writes a file map under dir, creating directories.
func WriteFiles(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("codegen: write %s: %w", n, err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return fmt.Errorf("codegen: write %s: %w", n, err)
		}
	}
	return nil
}

// Sandbox reports how Verify isolates generated tests on this machine.
func Sandbox() string {
	if netnsAvailable() {
		return SandboxNetNS
	}
	return SandboxNone
}

var (
	netnsOnce sync.Once
	netnsOK   bool
)

// netnsAvailable probes once whether unshare can make a network namespace
// with a working loopback here.
func netnsAvailable() bool {
	netnsOnce.Do(func() {
		cmd := exec.Command("unshare", "--net", "--map-root-user", "sh", "-c", "ip link set lo up")
		netnsOK = cmd.Run() == nil
	})
	return netnsOK
}

var testLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)

func parseTestOutput(out []byte) []TestOutcome {
	var res []TestOutcome
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := testLine.FindStringSubmatch(sc.Text()); m != nil {
			res = append(res, TestOutcome{Name: m[2], Result: m[1]})
		}
	}
	return res
}

// failureLines keeps what a failing test run said about its failures: the
// lines of failed tests with their messages, and whatever follows the last
// test (a panic, a time-out), without the lines of tests that passed or were
// skipped, so the reason of a failure early in a long run is not cut off.
func failureLines(out []byte) []byte {
	var kept, pending []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "=== "):
		case strings.HasPrefix(t, "--- PASS") || strings.HasPrefix(t, "--- SKIP"):
			pending = pending[:0]
		case strings.HasPrefix(t, "--- FAIL"):
			kept = append(append(kept, pending...), l)
			pending = pending[:0]
		default:
			pending = append(pending, l)
		}
	}
	kept = append(kept, pending...)
	return []byte(strings.Join(kept, "\n"))
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func firstLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// KinOpenAPI is the module every wrapper's kit needs.
const KinOpenAPI = "github.com/getkin/kin-openapi"

// BuildRequires returns the go.mod requirements of a wrapper: kin-openapi
// and each module its own go.mod requires, pinned to the versions the
// running binary was built with (so they sit in the module cache and resolve
// offline); modules the binary does not contain keep kin-openapi's version.
func BuildRequires(ctx context.Context, goCmd string) ([]Require, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, errors.New("codegen: no build info in this binary")
	}
	built := map[string]string{}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		built[d.Path] = m.Version
	}
	if goCmd == "" {
		goCmd = "go"
	}
	kinVersion, ok := built[KinOpenAPI]
	if !ok {
		// Test binaries carry no dependency list: ask the go command about
		// the module in the working directory instead.
		out, err := exec.CommandContext(ctx, goCmd, "list", "-m", "-f", "{{.Path}} {{.Version}}", "all").Output()
		if err != nil {
			return nil, fmt.Errorf("codegen: kin-openapi is not in this binary's build info and go list failed: %w", err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 {
				built[f[0]] = f[1]
			}
		}
		if kinVersion, ok = built[KinOpenAPI]; !ok {
			return nil, errors.New("codegen: kin-openapi is neither in this binary's build info nor in the current module")
		}
	}
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("codegen: go env GOMODCACHE: %w", err)
	}
	modFile := filepath.Join(strings.TrimSpace(string(out)), "cache", "download", filepath.FromSlash(KinOpenAPI), "@v", kinVersion+".mod")
	data, err := os.ReadFile(modFile)
	if err != nil {
		return nil, fmt.Errorf("codegen: kin-openapi's go.mod is not in the module cache (run go mod download): %w", err)
	}
	reqs := []Require{{Path: KinOpenAPI, Version: kinVersion}}
	for _, r := range parseRequires(data) {
		if v, ok := built[r.Path]; ok {
			r.Version = v
		}
		reqs = append(reqs, r)
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Path < reqs[j].Path })
	return reqs, nil
}

// parseRequires reads the require directives of a go.mod file.
func parseRequires(data []byte) []Require {
	var out []Require
	inBlock := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimSpace(strings.TrimPrefix(line, "require "))
		case !inBlock:
			continue
		}
		if f := strings.Fields(line); len(f) == 2 {
			out = append(out, Require{Path: f[0], Version: f[1]})
		}
	}
	return out
}
