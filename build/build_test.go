package build

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// celsius is a program that passes its tests.
const celsius = `package main

import (
	"context"
	"errors"
	"math"
)

func run(ctx context.Context, in map[string]any, web Web) (any, error) {
	f, ok := in["fahrenheit"].(float64)
	if !ok {
		return nil, errors.New("fahrenheit must be a number")
	}
	c := (f - 32) * 5 / 9
	return map[string]any{"celsius": math.Round(c*100) / 100}, nil
}
`

func program(src string, hosts ...Host) Program {
	return Program{
		Tool: "fahrenheit_to_celsius", Description: "Converts a temperature from Fahrenheit to Celsius.", Source: src,
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"fahrenheit":{"type":"number"}},"required":["fahrenheit"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}}}`),
		Tests: []TestCase{
			{Name: "boiling", Input: map[string]any{"fahrenheit": 212.0}, Want: json.RawMessage(`{"celsius":100}`)},
			{Name: "not_a_number", Input: map[string]any{"fahrenheit": "hot"}, WantError: "must be a number"},
		},
		Hosts: hosts,
	}
}

func TestCheckSourceRefusesForbiddenImportsByParsing(t *testing.T) {
	for name, src := range map[string]string{
		"os/exec": "package main\n\nimport (\n\t\"context\"\n\t\"os/exec\"\n)\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) {\n\treturn exec.Command(\"id\").Output()\n}\n",
		// A broken body does not hide the import: the import block still parses.
		"os with a syntax error": "package main\n\nimport \"os\"\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) {\n\treturn os.ReadFile(\"/etc/passwd\"\n}\n",
		"renamed unsafe":         "package main\n\nimport (\n\t\"context\"\n\tu \"unsafe\"\n)\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return u.Sizeof(1), nil }\n",
		"cgo":                    "package main\n\n// #include <stdlib.h>\nimport \"C\"\nimport \"context\"\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return nil, nil }\n",
	} {
		err := CheckSource(src)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "is not allowed") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A comment or a string that names os/exec is not an import.
	ok := "package main\n\nimport \"context\"\n\n// Not \"os/exec\".\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return \"import \\\"os/exec\\\"\", nil }\n"
	if err := CheckSource(ok); err != nil {
		t.Fatalf("a mention is not an import: %v", err)
	}
}

func TestCheckSourceRefusesHarnessInternalsAndDirectives(t *testing.T) {
	for name, c := range map[string]struct{ src, want string }{
		"harness identifier": {"package main\n\nimport \"context\"\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) {\n\treturn harnessWeb{}.Do(ctx, \"GET\", \"https://evil.example/\", nil, nil)\n}\n", "reserved for the harness"},
		"own main":           {"package main\n\nimport \"context\"\n\nfunc main() {}\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return nil, nil }\n", "func main is not allowed"},
		"linkname":           {"package main\n\nimport \"context\"\n\n//go:linkname x runtime.x\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return nil, nil }\n", "directive"},
		"no run":             {"package main\n\nfunc walk() {}\n", "func run("},
		"not main":           {"package tool\n\nimport \"context\"\n\nfunc run(ctx context.Context, in map[string]any, web Web) (any, error) { return nil, nil }\n", "must be main"},
	} {
		if err := CheckSource(c.src); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	p := program(celsius, Host{Host: "https://api.example.com", Reason: ""})
	p.Tests = append(p.Tests, TestCase{Name: "boiling", Want: json.RawMessage(`1`)})
	p.InputSchema = json.RawMessage(`{"type":"string"}`)
	err := p.Validate()
	for _, want := range []string{"hosts[0].host", "hosts[0].reason", `tests[2].name: "boiling" is used twice`, "inputSchema"} {
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
	if err := program(celsius).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyRefusesOSExecBeforeBuilding(t *testing.T) {
	src := strings.Replace(celsius, "\"math\"\n", "\"math\"\n\t\"os/exec\"\n", 1)
	src = strings.Replace(src, "c := (f - 32) * 5 / 9", "_, _ = exec.Command(\"true\").Output()\n\tc := (f - 32) * 5 / 9", 1)
	dir := t.TempDir()
	rep, err := Verify(context.Background(), program(src), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stage() != "refused" || rep.Built || !strings.Contains(rep.Refused, `import "os/exec" is not allowed`) {
		t.Fatalf("report: %+v", rep)
	}
	if entries, _ := readDir(dir); len(entries) != 0 {
		t.Fatalf("a refused program was written out: %v", entries)
	}
}

func TestVerifyBuildsAndTestsInTheSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Go code")
	}
	ctx := context.Background()
	rep, err := Verify(ctx, program(celsius), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed || len(rep.Tests) != 3 || rep.Binary == "" {
		t.Fatalf("good program: %s\n%+v", rep.Summary(), rep)
	}

	// A wrong answer fails its case, by name.
	wrong := program(strings.Replace(celsius, "* 5 / 9", "* 9 / 5", 1))
	rep, err = Verify(ctx, wrong, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stage() != "test" || !strings.Contains(rep.Summary(), "TestCases/boiling") || !strings.Contains(rep.Output, "want {\"celsius\":100}") {
		t.Fatalf("wrong program: %s\n%s", rep.Summary(), rep.Output)
	}

	// A type error is a build failure with the compiler's words.
	rep, err = Verify(ctx, program(strings.Replace(celsius, "return map", "return 1 + map", 1)), Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stage() != "build" || !strings.Contains(rep.Output, "tool.go") {
		t.Fatalf("broken program: %s\n%s", rep.Summary(), rep.Output)
	}
}

// TestVerifyFailsACallToAnUnapprovedHost: the program asks for one host
// and calls another; the harness refuses the call inside the sandbox, so
// the case fails naming the host.
func TestVerifyFailsACallToAnUnapprovedHost(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles Go code")
	}
	src := `package main

import (
	"context"
	"encoding/json"
)

func run(ctx context.Context, in map[string]any, web Web) (any, error) {
	_, body, err := web.Do(ctx, "GET", "https://rates.evil.example/v1/f2c", nil, nil)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(body, &out)
	return out, err
}
`
	p := program(src, Host{Host: "api.weather.example", Reason: "temperature data"})
	p.Tests = []TestCase{{Name: "boiling", Input: map[string]any{"fahrenheit": 212.0}, Want: json.RawMessage(`{"celsius":100}`),
		HTTP: map[string]Fixture{"https://rates.evil.example/v1/f2c": {Body: json.RawMessage(`{"celsius":100}`)}}}}
	rep, err := Verify(context.Background(), p, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stage() != "test" || !strings.Contains(rep.Output, `host "rates.evil.example" is not approved`) {
		t.Fatalf("report: %s\n%s", rep.Summary(), rep.Output)
	}
}

func readDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, err
}
