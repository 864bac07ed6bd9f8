package codegen

import (
	"strings"
	"testing"
)

// TestFailureLinesKeepTheFailedTests: a failing run of a long generated
// test used to be cut to its tail, so a failure early in the run lost its
// reason (the corpus's one flake showed only skip messages); the lines of
// passed and skipped tests are dropped instead.
func TestFailureLinesKeepTheFailedTests(t *testing.T) {
	out := strings.Join([]string{
		"=== RUN   TestA",
		"=== PAUSE TestA",
		"=== CONT  TestA",
		"    wrapper_test.go:28: redirect to another host not refused: stage=\"network\"",
		"--- FAIL: TestA (0.00s)",
		"    --- FAIL: TestA/other_host_refused (0.00s)",
		"=== RUN   TestB",
		"    wrapper_test.go:24: the operation accepts any response; no invalid response exists",
		"    --- SKIP: TestB/invalid_response_reported (0.00s)",
		strings.Repeat("    --- PASS: TestC/valid_call_passes (0.00s)\n", 200) + "--- PASS: TestC (0.00s)",
		"FAIL",
	}, "\n")
	got := string(failureLines([]byte(out)))
	for _, want := range []string{"redirect to another host not refused", "--- FAIL: TestA/other_host_refused", "FAIL"} {
		if !strings.Contains(got, want) {
			t.Errorf("lost %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"accepts any response", "TestC", "=== "} {
		if strings.Contains(got, not) {
			t.Errorf("kept %q:\n%s", not, got)
		}
	}
}
