package neo4j

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lintDir is scripts/cypher-lint, relative to this package.
var lintDir = filepath.Join("..", "..", "scripts", "cypher-lint")

// lintItem is one input of scripts/cypher-lint/lint.mjs.
type lintItem struct {
	Name   string         `json:"name"`
	Query  string         `json:"query"`
	Params map[string]any `json:"params,omitempty"`
}

// cypherLint runs lint.mjs on items and returns its output and exit error.
// It skips the test when node or the npm packages are missing, unless
// TOOLSMITH_REQUIRE_CYPHER_LINT=1 (set by `make test` after
// `npm ci --prefix scripts/cypher-lint`), which turns that into a failure.
func cypherLint(t *testing.T, items []lintItem) (string, error) {
	t.Helper()
	node, err := exec.LookPath("node")
	pkg := filepath.Join(lintDir, "node_modules", "@neo4j-cypher", "language-support", "package.json")
	_, statErr := os.Stat(pkg)
	if err != nil || statErr != nil {
		msg := "cypher lint unavailable: need node on PATH and `npm ci --prefix scripts/cypher-lint`"
		if os.Getenv("TOOLSMITH_REQUIRE_CYPHER_LINT") == "1" {
			t.Fatalf("%s (TOOLSMITH_REQUIRE_CYPHER_LINT=1): node: %v, package: %v", msg, err, statErr)
		}
		t.Skip(msg)
	}
	in, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(lintDir, "lint.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		t.Fatalf("run lint.mjs: %v\n%s", runErr, out.String())
	}
	if exit != nil && exit.ExitCode() != 1 {
		t.Fatalf("lint.mjs exit %d (bad input?):\n%s", exit.ExitCode(), out.String())
	}
	return out.String(), runErr
}

// TestCypherLint lints every statement of cypher.go (parameters unchecked)
// and every statement of the golden files with the parameters actually sent
// (so an undefined $parameter is an error).
func TestCypherLint(t *testing.T) {
	var items []lintItem
	covered := map[string]bool{}
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var g struct{ Calls []call }
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i, c := range g.Calls {
			q := strings.Join(c.Cypher, "\n")
			// Semantic analysis is slow (~0.5 s a statement on a busy
			// machine): lint each distinct statement once, with the
			// parameters of its first use.
			if covered[q] {
				continue
			}
			covered[q] = true
			params := c.Params
			if params == nil {
				params = map[string]any{}
			}
			items = append(items, lintItem{Name: filepath.Base(file) + "#" + strconv.Itoa(i) + ":" + c.Statement, Query: q, Params: params})
		}
	}
	for _, st := range Statements() {
		if !covered[st.Cypher] {
			items = append(items, lintItem{Name: st.Name, Query: st.Cypher})
		}
	}
	out, err := cypherLint(t, items)
	t.Logf("lint.mjs on %d statements:\n%s", len(items), out)
	if err != nil {
		t.Errorf("Cypher lint failed:\n%s", out)
	}
}

// TestCypherLintCatchesErrors shows the lint rejects broken statements, each
// for the reason expected, while a good one passes.
func TestCypherLintCatchesErrors(t *testing.T) {
	cases := []struct {
		name string
		item lintItem
		want string // substring of the diagnostic; "" = must pass
	}{
		{"good", lintItem{Query: cypherGetTool}, ""},
		{"typo keyword", lintItem{Query: strings.Replace(cypherGetTool, "RETURN", "RETRUN", 1)}, "Invalid input 'RETRUN'"},
		{"unknown procedure", lintItem{Query: strings.Replace(cypherVectorSearch, "queryNodes", "queryNodez", 1)}, "Procedure db.index.vector.queryNodez is not present"},
		{"unknown function", lintItem{Query: strings.Replace(cypherFindEntities, "toLower(", "lower(", 1)}, "Function lower is not present"},
		{"undefined variable", lintItem{Query: `MATCH (t:Tool) RETURN u.id`}, "Variable `u` not defined"},
		{"undeclared parameter", lintItem{Query: cypherGetTool, Params: map[string]any{"toolId": "a"}}, "Parameter $id is not defined"},
		{"unbalanced", lintItem{Query: `MATCH (t:Tool {id: $id} RETURN t`}, "Invalid input"},
	}
	items := make([]lintItem, len(cases))
	for i, tc := range cases {
		items[i] = tc.item
		items[i].Name = "case-" + tc.name
	}
	out, _ := cypherLint(t, items)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var diags []string
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "case-"+tc.name+":") && strings.Contains(line, ": error: ") {
					diags = append(diags, line)
				}
			}
			if tc.want == "" {
				if len(diags) > 0 {
					t.Errorf("good statement reported: %v", diags)
				}
				return
			}
			found := false
			for _, d := range diags {
				found = found || strings.Contains(d, tc.want)
			}
			if !found {
				t.Errorf("want an error containing %q, got %v\nfull output:\n%s", tc.want, diags, out)
			}
		})
	}
}
