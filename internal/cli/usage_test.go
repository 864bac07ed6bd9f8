package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --url without a scheme (host:port, as a new user types it) is a usage
// error that says what a URL looks like, before any request, for the keys
// commands and the MCP bridge alike.
func TestURLFlagWantsAnHTTPURL(t *testing.T) {
	for _, args := range [][]string{
		{"keys", "list", "--data-dir", t.TempDir(), "--url", "127.0.0.1:18385"},
		{"mcp", "--url", "localhost:8080"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "--url: must be an http(s) URL with a host, like http://127.0.0.1:8080") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// An unknown shell for completion is a usage error, not the help with exit 0.
func TestCompletionOfAnUnknownShell(t *testing.T) {
	if code, _, errOut := runCLI(t, "completion", "nosh"); code != exitUsage || !strings.Contains(errOut, `unknown command "nosh"`) {
		t.Errorf("completion nosh: exit %d, stderr %q", code, errOut)
	}
	if code, out, _ := runCLI(t, "completion", "bash"); code != exitOK || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d, %.80q", code, out)
	}
}

// dev on a taken --http-addr fails before it creates anything in its data
// dir (the owner key, the store, Temporal's state) for a server that
// cannot start.
func TestDevOnATakenAddressCreatesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	code, _, errOut := runCLI(t, "dev", "--data-dir", dir, "--http-addr", ln.Addr().String(), "--ui-addr", "")
	if code == exitOK || !strings.Contains(errOut, "--http-addr "+ln.Addr().String()) {
		t.Fatalf("dev on a taken address: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("the data dir was created (%v): %v", err, entries)
	}
}
