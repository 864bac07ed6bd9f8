package temporalserver_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/toolsmith/toolsmith/internal/temporalserver"
)

func echoWorkflow(ctx workflow.Context, in string) (string, error) {
	return "echo:" + in, nil
}

// testLogger logs to t until the test ends. The server's and its clients'
// goroutines may still log while they shut down (a cancelled dial), and
// t.Log after the test has completed panics, so the writer stops at
// cleanup: the mutex makes cleanup wait for a Log in flight.
func testLogger(t *testing.T) *slog.Logger {
	w := &tWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func (w *tWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func start(t *testing.T, opts temporalserver.Options) *temporalserver.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if opts.FrontendAddr == "" {
		opts.FrontendAddr = "127.0.0.1:0"
	}
	opts.Logger = testLogger(t)
	s, err := temporalserver.Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s
}

func runEcho(t *testing.T, c client.Client, id string) string {
	t.Helper()
	w := worker.New(c, "echo-q", worker.Options{})
	w.RegisterWorkflow(echoWorkflow)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "echo-q"}, echoWorkflow, "hi")
	if err != nil {
		t.Fatalf("ExecuteWorkflow: %v", err)
	}
	var out string
	if err := run.Get(ctx, &out); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	return run.GetRunID()
}

func TestStartRunRestartKeepsHistory(t *testing.T) {
	dir := t.TempDir()
	attrs := map[string]enumspb.IndexedValueType{"ToolsmithVerb": enumspb.INDEXED_VALUE_TYPE_KEYWORD}
	s := start(t, temporalserver.Options{DataDir: dir, SearchAttributes: attrs})
	if s.Namespace() != "default" {
		t.Errorf("Namespace() = %q, want default", s.Namespace())
	}
	if strings.HasSuffix(s.Addr(), ":0") {
		t.Errorf("Addr() = %q, want the picked port", s.Addr())
	}
	ctx := context.Background()
	c, err := s.Dial(ctx, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runID := runEcho(t, c, "echo-1")
	c.Close()
	s.Stop()
	s.Stop() // idempotent

	// Restart on the same data dir with one more attribute: the old run is
	// still there and both attributes are registered.
	attrs["ToolsmithBranch"] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	s2 := start(t, temporalserver.Options{DataDir: dir, SearchAttributes: attrs})
	defer s2.Stop()
	c2, err := s2.Dial(ctx, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	desc, err := c2.DescribeWorkflowExecution(ctx, "echo-1", runID)
	if err != nil {
		t.Fatalf("describe after restart: %v", err)
	}
	if got := desc.GetWorkflowExecutionInfo().GetStatus(); got != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("status after restart = %s, want COMPLETED", got)
	}
	var events int
	it := c2.GetWorkflowHistory(ctx, "echo-1", runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		events++
	}
	if events < 5 {
		t.Errorf("history after restart has %d events, want the full run", events)
	}
	list, err := c2.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for name := range attrs {
		if list.GetCustomAttributes()[name] != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			t.Errorf("search attribute %s not registered: %v", name, list.GetCustomAttributes())
		}
	}
}

func TestSearchAttributeTypeConflict(t *testing.T) {
	dir := t.TempDir()
	s := start(t, temporalserver.Options{DataDir: dir, SearchAttributes: map[string]enumspb.IndexedValueType{"ToolsmithVerb": enumspb.INDEXED_VALUE_TYPE_KEYWORD}})
	s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, err := temporalserver.Start(ctx, temporalserver.Options{
		DataDir: dir, FrontendAddr: "127.0.0.1:0", Logger: testLogger(t),
		SearchAttributes: map[string]enumspb.IndexedValueType{"ToolsmithVerb": enumspb.INDEXED_VALUE_TYPE_INT},
	})
	if !errors.Is(err, temporalserver.ErrSearchAttributeType) {
		t.Fatalf("Start with a changed attribute type: err = %v, want ErrSearchAttributeType", err)
	}
}

func TestInMemoryWithUI(t *testing.T) {
	s := start(t, temporalserver.Options{UIAddr: "127.0.0.1:0"})
	defer s.Stop()
	c, err := s.Dial(context.Background(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runEcho(t, c, "echo-mem")

	if !strings.HasPrefix(s.UIURL(), "http://127.0.0.1:") {
		t.Fatalf("UIURL() = %q", s.UIURL())
	}
	resp, err := http.Get(s.UIURL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q, want text/html", ct)
	}
	if !strings.Contains(strings.ToLower(string(body)), "<html") {
		t.Errorf("GET / body is not HTML: %.200s", body)
	}
}

func TestBadAddress(t *testing.T) {
	_, err := temporalserver.Start(context.Background(), temporalserver.Options{FrontendAddr: "nope"})
	if err == nil {
		t.Fatal("Start with a bad address succeeded")
	}
}

// TestTakenPortIsAnError: a frontend or UI port something else holds is a
// ListenError naming the role and the address, not a panic inside the
// server (frontend) or an exit of the process (UI).
func TestTakenPortIsAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	for _, c := range []struct {
		role string
		opts temporalserver.Options
	}{
		{temporalserver.RoleFrontend, temporalserver.Options{FrontendAddr: taken}},
		{temporalserver.RoleUI, temporalserver.Options{FrontendAddr: "127.0.0.1:0", UIAddr: taken}},
	} {
		c.opts.Logger = testLogger(t)
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		s, err := temporalserver.Start(ctx, c.opts)
		cancel()
		if err == nil {
			s.Stop()
			t.Fatalf("%s: Start on a taken port succeeded", c.role)
		}
		var le *temporalserver.ListenError
		if !errors.As(err, &le) || le.Role != c.role || le.Addr != taken || !le.InUse() {
			t.Fatalf("%s: err = %v, want a ListenError (in use) for %s", c.role, err, taken)
		}
		if !strings.Contains(err.Error(), taken) {
			t.Fatalf("%s: %q does not name %s", c.role, err, taken)
		}
	}
}
