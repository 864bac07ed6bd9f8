package codegen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolsmith/toolsmith/templates"
)

// corpusDir is the shared OpenAPI corpus beside the repository (a checkout
// of the project keeps ../shared next to it).
const corpusDir = "../../shared/openapi-corpus"

// TestGenerationIsDeterministic is the cheap half of the airlock's
// determinism property, over every spec of the corpus (and this package's
// own test specs): normalising and generating a spec twice gives
// byte-identical files, the same tools in the same order, the same
// exclusions and the same warnings. Every sample value, mock answer and
// test order in a wrapper is a function of its files, so this with the
// regression corpus (airlock: generated tests run five times) and
// `airlock check --repeat` is the whole property.
func TestGenerationIsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the whole corpus; skipped with -short")
	}
	var specs []string
	for _, dir := range corpusDirs() {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.Contains(p, "fuzz") && (strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				specs = append(specs, p)
			}
			return nil
		})
	}
	sort.Strings(specs)
	if len(specs) < minSpecs() {
		t.Skipf("the corpus is not beside the repository (%s): only %d specs found", corpusDir, len(specs))
	}
	g, err := New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var generated atomic.Int64
	t.Run("specs", func(t *testing.T) {
		for _, p := range specs {
			t.Run(p, func(t *testing.T) {
				t.Parallel()
				if sameTwice(t, ctx, g, p) {
					generated.Add(1)
				}
			})
		}
	})
	t.Logf("%d specs, %d generated twice byte-identically", len(specs), generated.Load())
}

func firstDifference(a, b []Exclusion) string {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return fmt.Sprintf("%s: %s\n%s: %s", a[i].Tool.Name, a[i].Reason, b[i].Tool.Name, b[i].Reason)
		}
	}
	return fmt.Sprintf("%d exclusions, then %d", len(a), len(b))
}

// corpusDirs are where the specs are read: TOOLSMITH_DETERMINISM_DIR narrows
// the test to one folder while investigating.
func corpusDirs() []string {
	if d := os.Getenv("TOOLSMITH_DETERMINISM_DIR"); d != "" {
		return []string{d}
	}
	return []string{"testdata", corpusDir}
}

func minSpecs() int {
	if os.Getenv("TOOLSMITH_DETERMINISM_DIR") != "" {
		return 1
	}
	return 300
}

// sameTwice normalises and generates one spec twice and reports whether it
// generated; any difference is an error.
func sameTwice(t *testing.T, ctx context.Context, g *Generator, p string) bool {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	gen := func() (*Normalised, *Wrapper, error) {
		n, err := Normalise(ctx, data)
		if err != nil {
			return nil, nil, err
		}
		w, err := g.Generate(n, Options{Name: "w", BaseURL: "https://api.example.invalid", Requires: goldenRequires})
		return n, w, err
	}
	n1, w1, err1 := gen()
	n2, w2, err2 := gen()
	if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
		t.Errorf("%s: errors differ: %v / %v", p, err1, err2)
		return false
	}
	if err1 != nil {
		if n1 != nil && !reflect.DeepEqual(n1.Warnings, n2.Warnings) {
			t.Errorf("%s: warnings differ:\n%q\n%q", p, n1.Warnings, n2.Warnings)
		}
		return false
	}
	if !reflect.DeepEqual(n1.Warnings, n2.Warnings) {
		t.Errorf("%s: warnings differ:\n%q\n%q", p, n1.Warnings, n2.Warnings)
	}
	if !reflect.DeepEqual(w1.Tools, w2.Tools) {
		t.Errorf("%s: tools differ", p)
	}
	if !reflect.DeepEqual(w1.Excluded, w2.Excluded) {
		t.Errorf("%s: exclusions differ:\n%s", p, firstDifference(w1.Excluded, w2.Excluded))
	}
	if len(w1.Files) != len(w2.Files) {
		t.Errorf("%s: %d files, then %d", p, len(w1.Files), len(w2.Files))
	}
	for name, b := range w1.Files {
		if !bytes.Equal(b, w2.Files[name]) {
			t.Errorf("%s: %s differs between two generations", p, name)
		}
	}
	return true
}
