package build

import (
	"errors"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// FuzzCheckSource: whatever the model writes, CheckSource never panics,
// refuses only with ErrRefused, and passes a program only when every import
// its import block declares is allowed and none is a dot import (a source
// whose import block does not parse cannot build either).
func FuzzCheckSource(f *testing.F) {
	for _, seed := range []string{
		"package main\n\nimport \"context\"\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return nil, nil }\n",
		"package main\n\nimport (\n\t\"context\"\n\t\"os/exec\"\n)\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return exec.Command(\"id\").Output() }\n",
		"package main\n\nimport \"os\"\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) {\n\treturn os.ReadFile(\"x\"\n}\n",
		"package main\n\nimport u \"unsafe\"\n\nfunc run() (any, error) { return u.Sizeof(1), nil }\n",
		"package main\n\nimport . \"strings\"\n\nfunc run() (any, error) { return ToUpper(\"x\"), nil }\n",
		"package main\n\n// #include <stdlib.h>\nimport \"C\"\n",
		"package main\n\nimport _ \"unsafe\"\n\n//go:linkname x runtime.x\nfunc run() {}\n",
		"package main\n\nimport \"con\\x74ext\"\n\nfunc harnessClient() {}\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		err := CheckSource(src)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("an error that is not a refusal: %v", err)
			}
			return
		}
		file, perr := parser.ParseFile(token.NewFileSet(), "tool.go", src, parser.ImportsOnly)
		if perr != nil {
			return
		}
		for _, imp := range file.Imports {
			path, uerr := strconv.Unquote(imp.Path.Value)
			if uerr != nil || !slices.Contains(AllowedImports, path) || (imp.Name != nil && imp.Name.Name == ".") {
				t.Fatalf("passed a program importing %s", imp.Path.Value)
			}
		}
	})
}
