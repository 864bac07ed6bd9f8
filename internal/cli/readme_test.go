package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeExamples returns the README's shell examples from the owner key's
// AUTH line up to the airlock section, in order, and the HTTP status each
// curl line in them should answer: the one a "# HTTP NNN" comment in its
// block names, otherwise 0 for "any 2xx".
func readmeExamples(t *testing.T) (script string, want []int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "AUTH=\"Authorization: Bearer")
	end := strings.Index(readme, "### Onboard an external API")
	if start < 0 || end < start {
		t.Fatal("README: the AUTH line or the airlock section heading moved; update readmeExamples")
	}
	start = strings.LastIndex(readme[:start], "```sh\n")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(readme[start:end], -1)
	status := regexp.MustCompile(`# HTTP (\d{3})`)
	var b strings.Builder
	for _, m := range blocks {
		block := m[1]
		code := 0
		if s := status.FindStringSubmatch(block); s != nil {
			code, _ = strconv.Atoi(s[1])
		}
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(line, "curl ") {
				want = append(want, code)
			}
		}
		b.WriteString(block)
		b.WriteString("\n")
	}
	return b.String(), want
}

// TestREADMEExamplesRun runs the README's REST examples, as written, against
// the real dev wiring: every curl line must answer what the README says (a
// 2xx unless its block shows another status). It catches placeholders such
// as {…} in a body, a header example the authorization rules refuse, and
// an example that needs a credential it does not send.
func TestREADMEExamplesRun(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed to run the README's examples as a reader would")
	}
	script, want := readmeExamples(t)
	if len(want) < 10 {
		t.Fatalf("found %d curl examples; the README's examples moved", len(want))
	}
	dataDir := t.TempDir()
	in := startDev(t, dataDir)
	in.waitCatalogueSettled(t)
	readmeCountsHold(t, in)
	host := strings.TrimPrefix(in.base, "http://")
	code, out, errOut := runCLI(t, "keys", "create", "--url", in.base, "--key-file", filepath.Join(dataDir, AdminKeyFile),
		"--owner", "ana", "--level", "user")
	if code != exitOK {
		t.Fatalf("keys create: %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	user := lines[len(lines)-1]

	// The reader's shell: the README's host, key file and key command point
	// at this instance; curl prints each answer's status on its own line.
	script = strings.NewReplacer(
		"127.0.0.1:8080", host,
		"$(cat .toolsmith/admin.key)", strings.TrimPrefix(in.auth, "Bearer "),
	).Replace(script)
	script = regexp.MustCompile(`\$\(\./bin/toolsmith keys create [^)]*\)`).ReplaceAllString(script, user)
	prelude := "set -u\ncurl() { " + curl + " \"$@\" -o /dev/null -w '%{http_code}\\n'; }\n"
	cmd := exec.Command("bash", "-c", prelude+script)
	cmd.Dir = dataDir
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's examples did not run: %v\n%s", err, got)
	}
	codes := strings.Fields(string(got))
	if len(codes) != len(want) {
		t.Fatalf("%d statuses for %d curl lines:\n%s", len(codes), len(want), got)
	}
	curls := regexp.MustCompile(`(?m)^curl .*$`).FindAllString(script, -1)
	for i, c := range codes {
		n, _ := strconv.Atoi(c)
		ok := n == want[i] || (want[i] == 0 && n >= 200 && n < 300)
		if !ok {
			t.Errorf("README example %d answers HTTP %d, the README says %s:\n%s", i+1, n, expected(want[i]), curls[i])
		}
	}
}

// readmeCountsHold checks the README's "the owner key lists about N of the
// M demo tools" against a fresh start: N is what the owner key lists, M the
// active tools.
func readmeCountsHold(t *testing.T, in *instance) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`lists only about (\d+) of the (\d+) demo tools`).FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("README no longer says how many demo tools the owner key lists")
	}
	code, env := in.call(t, http.MethodGet, "/api/v1/tools?limit=1000", nil, "Authorization", in.auth)
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if code != http.StatusOK || json.Unmarshal(env.Data, &page) != nil {
		t.Fatalf("owner's list: HTTP %d", code)
	}
	code, env = in.call(t, http.MethodGet, "/api/v1/tools/admin/analytics", nil, "Authorization", in.auth)
	var report struct {
		Tools struct {
			Active int `json:"active"`
		} `json:"tools"`
	}
	if code != http.StatusOK || json.Unmarshal(env.Data, &report) != nil {
		t.Fatalf("analytics: HTTP %d", code)
	}
	// "About": module discovery may still add a tool or two just after ready.
	near := func(said string, got int) bool { n, _ := strconv.Atoi(said); return got >= n-2 && got <= n+2 }
	if !near(m[1], len(page.Items)) || !near(m[2], report.Tools.Active) || len(page.Items) >= report.Tools.Active {
		t.Errorf("README says the owner key lists about %s of %s demo tools; a fresh start lists %d of %d", m[1], m[2], len(page.Items), report.Tools.Active)
	}
}

func expected(code int) string {
	if code == 0 {
		return "2xx"
	}
	return strconv.Itoa(code)
}

// TestREADMEInspectorCommandsShowTheServersReason: every MCP Inspector CLI
// command in the README carries --stored-auth-only. Without it the
// Inspector (2.12.0, connectInspectorWithOAuth) answers any 401 by starting
// interactive OAuth and prints "auth_required … requires a TTY" instead of
// the server's reason for refusing the key (#27 item 7).
func TestREADMEInspectorCommandsShowTheServersReason(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	locs := regexp.MustCompile(`inspector@\S+\s+--cli`).FindAllStringIndex(readme, -1)
	if len(locs) == 0 {
		t.Fatal("README shows no MCP Inspector CLI command; update this test")
	}
	for _, loc := range locs {
		// The command ends where its code span or block does.
		cmd, _, _ := strings.Cut(readme[loc[0]:], "`")
		if !strings.Contains(cmd, "--stored-auth-only") {
			t.Errorf("README's Inspector command lacks --stored-auth-only: %q", cmd)
		}
	}
}
