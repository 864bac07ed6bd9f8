package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

// TestProductionCommandSet: without the in-process Temporal server (the
// production binary) the command line has exactly the production
// commands; dev, bench and eval are unknown commands there, and the root
// help does not list them.
func TestProductionCommandSet(t *testing.T) {
	names := func(cs []command) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.name)
		}
		return out
	}
	prod := names(commands(false))
	want := []string{"api", "worker", "model fetch", "airlock approve", "airlock reject", "airlock check", "airlock prefetch",
		"keys create", "keys list", "keys revoke", "mcp", "healthcheck", "version"}
	if !slices.Equal(prod, want) {
		t.Fatalf("production commands %q, want %q", prod, want)
	}
	var devOnly []string
	for _, n := range names(commands(true)) {
		if !slices.Contains(prod, n) {
			devOnly = append(devOnly, n)
		}
	}
	if want := []string{"dev", "bench", "eval"}; !slices.Equal(devOnly, want) {
		t.Fatalf("dev-only commands %q, want %q", devOnly, want)
	}

	for _, tt := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"dev"}, exitUsage, "", `unknown command "dev"`},
		{[]string{"bench"}, exitUsage, "", `unknown command "bench"`},
		{[]string{"version"}, exitOK, "toolsmith dev (", ""},
		{[]string{"worker", "--help"}, exitOK, "--temporal-addr", ""},
	} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, lookupEnv: func(string) (string, bool) { return "", false }}
		code := run(context.Background(), tt.args, e)
		if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tt.args, code, out.String(), errb.String())
		}
	}
	var help bytes.Buffer
	run(context.Background(), []string{"--help"}, &env{stdout: &help, stderr: &help, lookupEnv: func(string) (string, bool) { return "", false }})
	for _, absent := range []string{"toolsmith-server dev ", "toolsmith-server bench ", "toolsmith-server eval "} {
		if strings.Contains(help.String(), absent) {
			t.Errorf("production help lists %q:\n%s", absent, help.String())
		}
	}
	if !strings.Contains(help.String(), "toolsmith-server worker ") {
		t.Errorf("production help lacks worker:\n%s", help.String())
	}
}
