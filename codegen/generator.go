// Package codegen generates Toolsmith's wrapper plugins from OpenAPI specs:
// a small Go program per spec (the normalised spec embedded, one tool per
// approved operation, calls only to the approved host, requests and
// responses validated with kin-openapi's openapi3filter) plus its test, and
// builds and runs them (Verify). The runtime every wrapper shares lives in
// codegen/kit and is copied into each wrapper's module; the templates live in
// the repository's templates/ directory.
package codegen

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"unicode"

	"github.com/toolsmith/toolsmith/codegen/kit"
)

//go:embed kit/*.go
var kitFS embed.FS

// Options say what to generate.
type Options struct {
	// Name is the wrapper's slug, e.g. "petstore" (lower-case letters,
	// digits, '-' and '_').
	Name string `yaml:"name" json:"name"`
	// BaseURL is the approved server; the wrapper calls nothing else.
	BaseURL string `yaml:"baseUrl" json:"baseUrl"`
	// Operations restricts the wrapper to these tool names, operationIds or
	// tags; empty means every operation.
	Operations []string `yaml:"operations" json:"operations,omitempty"`
	// GoVersion is the go directive of the wrapper's module (default: the
	// toolchain's language version, e.g. "1.26").
	GoVersion string `yaml:"goVersion" json:"goVersion,omitempty"`
	// Requires are the wrapper module's requirements (kin-openapi and the
	// modules it needs), normally taken from the running binary's build info.
	Requires []Require `yaml:"requires" json:"requires,omitempty"`
}

// Require is one go.mod requirement.
type Require struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Validate checks the options; errors name the field.
func (o Options) Validate() error {
	if !slugRE.MatchString(o.Name) {
		return fmt.Errorf("codegen: name %q must match %s", o.Name, slugRE)
	}
	if _, err := kit.HostOf(o.BaseURL); err != nil {
		return fmt.Errorf("codegen: baseUrl: %w", err)
	}
	if len(o.Requires) == 0 {
		return fmt.Errorf("codegen: requires: at least kin-openapi is needed")
	}
	return nil
}

// Generator renders wrappers from templates. Build one with New and reuse it.
type Generator struct {
	tmpl *template.Template
	kit  map[string][]byte
}

// New parses the templates (normally templates.FS; tests may pass an
// fstest.MapFS) and reads the kit sources to copy.
func New(templates fs.FS) (*Generator, error) {
	t, err := template.New("codegen").Option("missingkey=error").ParseFS(templates, "*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("codegen: parse templates: %w", err)
	}
	for _, name := range []string{"wrapper_main.go.tmpl", "wrapper_test.go.tmpl", "go.mod.tmpl"} {
		if t.Lookup(name) == nil {
			return nil, fmt.Errorf("codegen: template %s missing", name)
		}
	}
	g := &Generator{tmpl: t, kit: map[string][]byte{}}
	entries, err := fs.ReadDir(kitFS, "kit")
	if err != nil {
		return nil, fmt.Errorf("codegen: read kit: %w", err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := kitFS.ReadFile(path.Join("kit", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("codegen: read kit/%s: %w", e.Name(), err)
		}
		g.kit[e.Name()] = b
	}
	return g, nil
}

// Wrapper is a generated wrapper: file name → contents, plus its tools.
type Wrapper struct {
	Name  string
	Files map[string][]byte
	Tools []kit.Tool
	// Excluded are operations left out because they contradict their own
	// spec (kit.Preflight); the reviewer sees each with its reason.
	Excluded []Exclusion
}

// Exclusion is an operation the generator left out, and why.
type Exclusion struct {
	Tool   kit.Tool `json:"tool"`
	Reason string   `json:"reason"`
}

// ErrNoOperations is returned when no operation of a spec can be wrapped.
var ErrNoOperations = errors.New("no operation can be wrapped")

// wrapperTool is a kit.Tool with the names the templates need.
type wrapperTool struct {
	kit.Tool
	TestName string
}

// Generate renders the wrapper of a normalised spec.
func (g *Generator) Generate(n *Normalised, opts Options) (*Wrapper, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	selected, err := selectTools(kit.Operations(n.Doc), opts.Operations)
	if err != nil {
		return nil, err
	}
	var tools []kit.Tool
	var excluded []Exclusion
	for _, t := range selected {
		if err := kit.Preflight(n.JSON, t); err != nil {
			excluded = append(excluded, Exclusion{Tool: t, Reason: err.Error()})
			continue
		}
		tools = append(tools, t)
	}
	if len(tools) == 0 {
		reason := "none selected"
		switch {
		case len(kit.Operations(n.Doc)) == 0:
			reason = "the spec declares no operations: its paths have no methods, so there is nothing to call"
		case len(excluded) > 0:
			reason = fmt.Sprintf("all %d failed preflight; first: %s: %s", len(excluded), excluded[0].Tool.Name, excluded[0].Reason)
		}
		return nil, fmt.Errorf("%w: %s", ErrNoOperations, reason)
	}
	goVersion := opts.GoVersion
	if goVersion == "" {
		goVersion = "1.26"
	}
	title, version := "", ""
	if n.Doc.Info != nil {
		title, version = oneLine(n.Doc.Info.Title), oneLine(n.Doc.Info.Version)
	}
	data := struct {
		Name, Module, BaseURL, SpecTitle, SpecVersion, GoVersion string
		Tools                                                    []wrapperTool
		Requires                                                 []Require
	}{
		Name: opts.Name, Module: "toolsmith.local/wrappers/" + opts.Name, BaseURL: opts.BaseURL,
		SpecTitle: title, SpecVersion: version, GoVersion: goVersion, Requires: opts.Requires,
	}
	testNames := map[string]int{}
	for _, t := range tools {
		tn := testName(t.Name)
		testNames[tn]++
		if testNames[tn] > 1 {
			tn = fmt.Sprintf("%s%d", tn, testNames[tn])
		}
		data.Tools = append(data.Tools, wrapperTool{Tool: t, TestName: tn})
	}
	w := &Wrapper{Name: opts.Name, Files: map[string][]byte{}, Tools: tools, Excluded: excluded}
	for out, tmpl := range map[string]string{"main.go": "wrapper_main.go.tmpl", "wrapper_test.go": "wrapper_test.go.tmpl", "go.mod": "go.mod.tmpl"} {
		var buf bytes.Buffer
		if err := g.tmpl.ExecuteTemplate(&buf, tmpl, data); err != nil {
			return nil, fmt.Errorf("codegen: render %s: %w", tmpl, err)
		}
		b := buf.Bytes()
		if strings.HasSuffix(out, ".go") {
			if b, err = format.Source(b); err != nil {
				return nil, fmt.Errorf("codegen: %s does not format: %w", out, err)
			}
		}
		w.Files[out] = b
	}
	w.Files["spec.json"] = n.JSON
	for name, src := range g.kit {
		w.Files["kit/"+name] = src
	}
	return w, nil
}

// selectTools keeps the operations named by want (tool name, operationId or
// tag); an unknown name is an error so a reviewer's typo is not silently
// ignored.
func selectTools(all []kit.Tool, want []string) ([]kit.Tool, error) {
	if len(want) == 0 {
		return all, nil
	}
	var out []kit.Tool
	matched := map[string]bool{}
	for _, t := range all {
		for _, w := range want {
			if t.Named(w) {
				matched[w] = true
				out = append(out, t)
				break
			}
		}
	}
	var missing []string
	for _, w := range want {
		if !matched[w] {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("codegen: operations: no operation, operationId or tag named %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func testName(name string) string {
	var b strings.Builder
	upper := true
	for _, r := range name {
		if r == '_' || r == '-' {
			upper = true
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
