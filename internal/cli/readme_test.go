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

// exampleDocs are the pages whose shell examples TestREADMEExamplesRun runs,
// in order: the README's quick tour, then the REST reference and the
// fulfilment page, which use the $AUTH the README sets and the $U the REST
// reference makes.
var exampleDocs = []string{"README.md", "docs/api.md", "docs/fulfilment.md"}

// readDoc returns a page of the documentation, named from the repository's
// root.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// allDocs returns the README and every page under docs/, by name.
func allDocs(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{"README.md": readDoc(t, "README.md")}
	for _, n := range names {
		name := "docs/" + filepath.Base(n)
		docs[name] = readDoc(t, name)
	}
	return docs
}

// readmeExamples returns the shell examples of exampleDocs (the README's
// from the owner key's AUTH line on), in order, and the HTTP status each
// curl line in them should answer: the one a "# HTTP NNN" comment in its
// block names, otherwise 0 for "any 2xx"; from names each line's page.
func readmeExamples(t *testing.T) (script string, want []int, from []string) {
	t.Helper()
	status := regexp.MustCompile(`# HTTP (\d{3})`)
	fence := regexp.MustCompile("(?s)```sh\n(.*?)```")
	var b strings.Builder
	for _, name := range exampleDocs {
		doc := readDoc(t, name)
		if name == "README.md" {
			start := strings.Index(doc, "AUTH=\"Authorization: Bearer")
			if start < 0 {
				t.Fatal("README: the AUTH line moved; update readmeExamples")
			}
			doc = doc[strings.LastIndex(doc[:start], "```sh\n"):]
		}
		blocks := fence.FindAllStringSubmatch(doc, -1)
		if len(blocks) == 0 {
			t.Fatalf("%s shows no shell examples; update exampleDocs", name)
		}
		for _, m := range blocks {
			block := m[1]
			code := 0
			if s := status.FindStringSubmatch(block); s != nil {
				code, _ = strconv.Atoi(s[1])
			}
			for _, line := range strings.Split(block, "\n") {
				if strings.HasPrefix(line, "curl ") {
					want = append(want, code)
					from = append(from, name)
				}
			}
			b.WriteString(block)
			b.WriteString("\n")
		}
	}
	return b.String(), want, from
}

// TestREADMEExamplesRun runs the REST examples of the README and of the
// pages in exampleDocs, as written, against the real dev wiring: every curl
// line must answer what its page says (a 2xx unless its block shows another
// status). It catches placeholders such
// as {…} in a body, a header example the authorization rules refuse, and
// an example that needs a credential it does not send.
func TestREADMEExamplesRun(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed to run the README's examples as a reader would")
	}
	script, want, from := readmeExamples(t)
	if len(want) < 10 {
		t.Fatalf("found %d curl examples in %v; the examples moved", len(want), exampleDocs)
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
		t.Fatalf("the docs' examples did not run: %v\n%s", err, got)
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
			t.Errorf("example %d (%s) answers HTTP %d, the page says %s:\n%s", i+1, from[i], n, expected(want[i]), curls[i])
		}
	}
}

// readmeCountsHold checks the docs' "the owner key lists about N of the
// M demo tools" (docs/api.md) against a fresh start: N is what the owner
// key lists, M the active tools.
func readmeCountsHold(t *testing.T, in *instance) {
	t.Helper()
	m := regexp.MustCompile(`lists only about (\d+) of the (\d+) demo tools`).FindStringSubmatch(readDoc(t, "docs/api.md"))
	if m == nil {
		t.Fatal("docs/api.md no longer says how many demo tools the owner key lists")
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
		t.Errorf("docs/api.md says the owner key lists about %s of %s demo tools; a fresh start lists %d of %d", m[1], m[2], len(page.Items), report.Tools.Active)
	}
}

func expected(code int) string {
	if code == 0 {
		return "2xx"
	}
	return strconv.Itoa(code)
}

// TestREADMEInspectorCommandsShowTheServersReason: every MCP Inspector CLI
// command in the README and docs/ carries --stored-auth-only. Without it the
// Inspector (2.12.0, connectInspectorWithOAuth) answers any 401 by starting
// interactive OAuth and prints "auth_required … requires a TTY" instead of
// the server's reason for refusing the key.
func TestREADMEInspectorCommandsShowTheServersReason(t *testing.T) {
	inspector := regexp.MustCompile(`inspector@\S+\s+--cli`)
	found := 0
	for name, doc := range allDocs(t) {
		for _, loc := range inspector.FindAllStringIndex(doc, -1) {
			found++
			// The command ends where its code span or block does.
			cmd, _, _ := strings.Cut(doc[loc[0]:], "`")
			if !strings.Contains(cmd, "--stored-auth-only") {
				t.Errorf("%s: an Inspector command lacks --stored-auth-only: %q", name, cmd)
			}
		}
	}
	if found == 0 {
		t.Fatal("neither the README nor docs/ shows an MCP Inspector CLI command; update this test")
	}
}
