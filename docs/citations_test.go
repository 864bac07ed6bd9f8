package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// citation matches a reference to a document that is not in the
// repository: a numbered design seed, the seeds folder, or a numbered issue
// of the tracker, written out ("issue" and its number, with or without a
// "#") or as a bare "#" and number, as in "(#NN item 7)". A comment
// states the rule it enforces instead. The pattern is built from pieces so
// that this file does not match it.
var citation = regexp.MustCompile(strings.Join([]string{
	`[Ss]eed` + ` 0[0-9]`,
	`shared/` + `seeds`,
	`[Ii]ssues?` + ` #?[0-9]+`,
	`(?:^|[\s(])` + `#[0-9]+\b`,
}, "|"))

// TestNoCitations: no Go file of the module, nor the README or a page
// under docs/, cites a seed or an issue.
func TestNoCitations(t *testing.T) {
	found, files, err := findCitations("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
	if files < 100 {
		t.Errorf("scanned only %d files; the walk no longer reaches the module", files)
	}
}

// TestFindCitationsReportsThem: a planted citation in a Go file and in a
// page is reported with its line; testdata, vendor and other files are not
// scanned.
func TestFindCitationsReportsThem(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\n\n// X bounds a call (seed"+" 02: 10 s).\n")
	write("b.go", "package b\n\n// Y is fixed (Issue"+" 7).\n")
	write("docs/p.md", "# P\n\nAs in shared/"+"seeds/01.\n")
	write("README.md", "Fine: seeded data, 2 issues.\n")
	write("a/testdata/t.go", "// seed"+" 03\n")
	write("vendor/v/v.go", "// issue"+" 9\n")
	write("a/notes.txt", "issue"+" 4\n")
	write("c.go", "package c\n\n// Z answers 404 (#"+"27 item 7).\n")
	write("d.go", "package d\n\n// #"+"27: a folder is scanned.\n")
	write("e.go", "package e\n\n// W is refused (issue #"+"27).\n")
	write("f.go", "package f\n\n// Fine: a URL fragment, x.html#"+"s2, and a colour \"#"+"fff\".\n")
	found, files, err := findCitations(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(found, "\n")
	for _, want := range []string{"a.go:3", "b.go:3", "p.md:3", "c.go:3", "d.go:3", "e.go:3"} {
		if !strings.Contains(got, want) {
			t.Errorf("citation at %s not reported; reported:\n%s", want, got)
		}
	}
	if len(found) != 6 || files != 8 {
		t.Errorf("got %d citations in %d files, want 6 in 8:\n%s", len(found), files, got)
	}
}

// findCitations scans the Go files under root (outside testdata, vendor and
// hidden folders), root's README.md and root's docs/*.md, and returns each
// citation as "path:line: text" and the number of files scanned.
func findCitations(root string) (found []string, files int, err error) {
	var paths []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, 0, err
	}
	paths = append(paths, pages...)
	if readme := filepath.Join(root, "README.md"); fileExists(readme) {
		paths = append(paths, readme)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, 0, err
		}
		files++
		for i, line := range strings.Split(string(b), "\n") {
			if m := citation.FindString(line); m != "" {
				found = append(found, fmt.Sprintf("%s:%d: cites %q; state the rule instead: %s", p, i+1, m, strings.TrimSpace(line)))
			}
		}
	}
	return found, files, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
