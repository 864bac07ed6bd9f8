package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchCommand runs `toolsmith bench` on a tiny catalogue with the
// hashing embedder: every phase reports, the JSON last line has them all,
// and bad flags are usage errors naming the flag.
func TestBenchCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole system twice")
	}
	code, stdout, stderr := runCLI(t, "bench", "--openapi", "../../codegen/testdata", "--tools", "5", "--queries", "4", "--concurrency", "2", "--embedder", "hashing", "--usage-events", "30", "--json")
	if code != exitOK {
		t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var rep benchReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("last line is not JSON: %q: %v", lines[len(lines)-1], err)
	}
	if rep.Tools != 5 || rep.RegisterPerSec <= 0 || rep.RegisterErrors != 0 || rep.RestartSeconds <= 0 || rep.Substitute.N == 0 || rep.Substitute.Errors != 0 {
		t.Fatalf("report: %+v", rep)
	}
	for _, k := range []string{"keyword/unseen/1", "keyword/unseen/2", "semantic/unseen/2", "hybrid/unseen/1", "hybrid/repeated/1"} {
		if l, ok := rep.Search[k]; !ok || l.N == 0 || l.Errors != 0 || l.P95 < l.P50 {
			t.Errorf("search %s: %+v", k, l)
		}
	}
	if rep.UsageEvents != 30 || rep.UsagePerSec <= 0 {
		t.Errorf("usage events: %d at %.1f/s", rep.UsageEvents, rep.UsagePerSec)
	}
	for _, p := range []string{"ready", "registered", "used", "searched", "fulfilled", "restarted"} {
		if rep.RSSMB[p] <= 0 {
			t.Errorf("no resident memory after %s: %v", p, rep.RSSMB)
		}
	}
	if !strings.Contains(stdout, "registration") || !strings.Contains(stdout, "substitute (Temporal)") {
		t.Errorf("table:\n%s", stdout)
	}
	for _, bad := range [][]string{{"--tools", "0", "--openapi", "x"}, {"--tools", "5"}, {"--openapi", "x", "--tools-file", "y"}, {"--openapi", "x", "--embedder", "openai"}, {"--openapi", "x", "--usage-events", "-1"}} {
		code, _, stderr := runCLI(t, append([]string{"bench"}, bad...)...)
		if code != exitUsage || !strings.Contains(stderr, "--") {
			t.Errorf("bench %v: exit %d %s", bad, code, stderr)
		}
	}
}

// Never-seen queries are distinct, and the repeated ones cycle.
func TestBenchQueries(t *testing.T) {
	qs := neverSeen([]string{"a b", "a b", "c d"}, nil, 50)
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[q] {
			t.Fatalf("query %q twice", q)
		}
		seen[q] = true
	}
	if len(qs) != 50 || qs[0] != "a b" || qs[1] != "c d" {
		t.Fatalf("queries: %v", qs[:3])
	}
	if r := repeatedQueries([]string{"x", "y"}, 5); strings.Join(r, ",") != "x,y,x,y,x" {
		t.Fatalf("repeated: %v", r)
	}
}
