package build

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// AllowedImports are the standard-library packages a built program may
// import. Nothing here reaches the filesystem, processes, the network or
// memory directly: the program's only way out is the Web the harness
// passes to run, which calls approved hosts alone.
var AllowedImports = []string{
	"bytes", "cmp", "context", "crypto/hmac", "crypto/md5", "crypto/sha1", "crypto/sha256", "crypto/sha512",
	"encoding/base64", "encoding/csv", "encoding/hex", "encoding/json", "encoding/xml", "errors", "fmt",
	"hash/crc32", "hash/fnv", "html", "io", "maps", "math", "math/big", "math/bits", "net/url", "path",
	"regexp", "slices", "sort", "strconv", "strings", "time", "unicode", "unicode/utf16", "unicode/utf8",
}

// harnessPrefix starts every identifier of the generated harness that the
// program must not touch (its client, its host list, its fakes).
const harnessPrefix = "harness"

// EntryPoint is the function the program must define.
const EntryPoint = "run"

// CheckSource parses the program's source and refuses it, before anything
// is built, when it breaks a rule: it must be one file of package main;
// import only AllowedImports (no dot imports, no cgo); define run and
// neither main nor init (the harness owns the process); carry no //go:
// directives; and name nothing of the harness's. The error wraps
// ErrRefused and names the rule and the position.
func CheckSource(src string) error {
	fset := token.NewFileSet()
	var problems []string
	add := func(pos token.Pos, format string, a ...any) {
		problems = append(problems, fmt.Sprintf("%s: %s", fset.Position(pos), fmt.Sprintf(format, a...)))
	}
	f, err := parser.ParseFile(fset, "tool.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		// A syntax error is the compiler's to report (the model sees it as
		// a build failure and may fix it), but the imports are checked
		// still, whenever the import block itself parses.
		fset = token.NewFileSet()
		if f, err := parser.ParseFile(fset, "tool.go", src, parser.ImportsOnly); err == nil {
			checkImports(f, add)
		}
		return refused(problems)
	}
	if f.Name.Name != "main" {
		add(f.Name.Pos(), "the package must be main, not %s", f.Name.Name)
	}
	checkImports(f, add)
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:") || strings.HasPrefix(c.Text, "//export ") || strings.HasPrefix(c.Text, "//line ") {
				add(c.Pos(), "compiler directive %q is not allowed", strings.Fields(c.Text)[0])
			}
		}
	}
	hasRun := false
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil {
			continue
		}
		switch fd.Name.Name {
		case "main", "init":
			add(fd.Pos(), "func %s is not allowed: the harness owns the process", fd.Name.Name)
		case EntryPoint:
			hasRun = true
		}
	}
	if !hasRun {
		add(f.Package, "func %s(ctx context.Context, in map[string]any, web Web) (any, error) is missing", EntryPoint)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && strings.HasPrefix(strings.ToLower(id.Name), harnessPrefix) {
			add(id.Pos(), "identifier %s is reserved for the harness", id.Name)
		}
		return true
	})
	return refused(problems)
}

func refused(problems []string) error {
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrRefused, strings.Join(problems, "; "))
	}
	return nil
}

// checkImports adds a problem for each import outside AllowedImports (cgo's
// "C" included), and for dot imports.
func checkImports(f *ast.File, add func(token.Pos, string, ...any)) {
	for _, imp := range f.Imports {
		path, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			add(imp.Pos(), "unreadable import %s", imp.Path.Value)
			continue
		}
		if !slices.Contains(AllowedImports, path) {
			add(imp.Pos(), "import %q is not allowed (allowed: %s)", path, strings.Join(AllowedImports, ", "))
		}
		if imp.Name != nil && imp.Name.Name == "." {
			add(imp.Pos(), "dot import of %q is not allowed", path)
		}
	}
}
