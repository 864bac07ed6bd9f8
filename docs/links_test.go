package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestLinksResolve: every relative link in the README and in docs/*.md
// names a file that exists and, with a #fragment into a Markdown file, a
// heading of that file (by GitHub's anchors).
func TestLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"))
	if len(pages) < 5 {
		t.Fatalf("found only %v; the docs moved", pages)
	}
	problems, links := checkLinks(pages)
	for _, p := range problems {
		t.Error(p)
	}
	if links < 20 {
		t.Errorf("checked only %d relative links; the link pattern no longer matches the pages", links)
	}
}

// TestCheckLinksFindsBrokenOnes: a missing file, a missing heading and a
// same-page anchor without a heading are each reported; what resolves is not.
func TestCheckLinksFindsBrokenOnes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("b.md", "# B page\n\n## When does a tool *substitute*?\n\n## Running `dev`: ports\n\n## Twice\n\n## Twice\n")
	a := write("a.md", strings.Join([]string{
		"# A",
		"[ok](b.md) [ok](b.md#when-does-a-tool-substitute) [ok](b.md#running-dev-ports)",
		"[ok](b.md#twice-1) [ok](#a) [web](https://example.com/x.md) ![img](b.md)",
		"[gone](c.md) [no heading](b.md#nowhere) [no anchor here](#b-page)",
		"`[in code](nothing.md)`",
		"```",
		"[in a block](nothing.md)",
		"## Not a heading",
		"```",
		"[ref]: b.md#not-a-heading",
	}, "\n"))
	problems, links := checkLinks([]string{a})
	got := strings.Join(problems, "\n")
	for _, want := range []string{"c.md", "b.md#nowhere", "#b-page", "b.md#not-a-heading"} {
		if !strings.Contains(got, want) {
			t.Errorf("the broken link %s is not reported; reported:\n%s", want, got)
		}
	}
	if len(problems) != 4 {
		t.Errorf("want 4 problems, got %d:\n%s", len(problems), got)
	}
	if links != 10 {
		t.Errorf("checked %d relative links, want 10", links)
	}
}

var (
	fence       = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan    = regexp.MustCompile("`+[^`]*`+")
	heading     = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	inlineLink  = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink     = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	markdownURL = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	hasScheme   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// checkLinks checks the relative links of pages and returns what does not
// resolve, one line each, and how many relative links it checked.
func checkLinks(pages []string) (problems []string, links int) {
	anchors := map[string][]string{} // by cleaned path; nil: not read yet
	anchorsOf := func(path string) ([]string, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a, _ := parse(string(raw))
		anchors[path] = a
		return a, nil
	}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		own, targets := parse(string(raw))
		anchors[filepath.Clean(page)] = own
		for _, target := range targets {
			if hasScheme.MatchString(target) || strings.HasPrefix(target, "//") {
				continue
			}
			links++
			ref, frag, _ := strings.Cut(target, "#")
			path := filepath.Clean(page)
			if ref != "" {
				unescaped, err := url.PathUnescape(ref)
				if err != nil {
					problems = append(problems, fmt.Sprintf("%s: link %s: %v", page, target, err))
					continue
				}
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(unescaped))
				if _, err := os.Stat(path); err != nil {
					problems = append(problems, fmt.Sprintf("%s: link %s: no such file", page, target))
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				problems = append(problems, fmt.Sprintf("%s: link %s: an anchor into a file that is not Markdown", page, target))
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: link %s: %v", page, target, err))
				continue
			}
			if !slices.Contains(a, strings.ToLower(frag)) {
				problems = append(problems, fmt.Sprintf("%s: link %s: no heading with that anchor", page, target))
			}
		}
	}
	return problems, links
}

// parse returns a Markdown page's heading anchors and its link targets,
// leaving out what fenced code blocks and code spans hold.
func parse(text string) (anchors, targets []string) {
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			slug := slugify(m[1])
			if n := seen[slug]; n > 0 {
				anchors = append(anchors, fmt.Sprintf("%s-%d", slug, n))
			} else {
				anchors = append(anchors, slug)
			}
			seen[slug]++
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			targets = append(targets, m[1])
		}
	}
	return anchors, targets
}

// slugify makes a heading's anchor as GitHub does: the heading's text
// (links reduced to their text, code spans to their content) in lower
// case, with spaces as hyphens and every other character that is not a
// letter, digit, hyphen or underscore dropped.
func slugify(h string) string {
	h = markdownURL.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
