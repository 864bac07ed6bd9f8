package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/datadir"
	"github.com/toolsmith/toolsmith/internal/testwait"
)

// TestDevOnboardsAndRunsAToolWithARelativeDataDir runs dev as make run does:
// from a working directory with the default, relative data dir. A spec is
// onboarded through the API (source, review, approval: a real wrapper build)
// and its tool executes against a loopback upstream. A relative data dir
// once built the wrapper at <dir>/<dir>/wrapper, and every onboarded tool
// then failed with ModuleUnavailable.
func TestDevOnboardsAndRunsAToolWithARelativeDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wrapper")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no Go toolchain on PATH to build wrappers with")
	}
	spec, err := os.ReadFile(filepath.Join("..", "..", "codegen", "testdata", "petstore", "spec.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	specs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(spec) }))
	t.Cleanup(specs.Close)
	var upstreamCalls atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamCalls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && r.URL.Path == "/v1/pets" {
			_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
			return
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(upstream.Close)

	// make run's working directory, the module root: the data dir below is
	// relative to it. It holds the module's go.mod and go.sum, as the root
	// does: a test binary outside package main records no dependencies, so
	// the airlock reads the wrapper's from `go list -m all` there.
	wd := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wd, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(wd)
	in := startDev(t, config.DefaultDataDir, "--no-demo")
	if in.auth == "" {
		t.Fatal("no owner key in the relative data dir")
	}

	code, env := in.call(t, http.MethodPost, "/api/v1/tools/sources", map[string]any{"type": "openapi", "location": specs.URL + "/pets.yaml"}, "Authorization", in.auth)
	if code != http.StatusCreated {
		t.Fatalf("add source: %d %s", code, env.Data)
	}
	var review string
	testwait.Eventually(t, time.Minute, func() error {
		code, env = in.call(t, http.MethodGet, "/api/v1/tools/pending", nil, "Authorization", in.auth)
		var pending struct {
			Pending []struct{ ID, Status string } `json:"pending"`
		}
		if err := json.Unmarshal(env.Data, &pending); err != nil || code != http.StatusOK {
			t.Fatalf("pending: %d %s %v", code, env.Data, err)
		}
		if len(pending.Pending) != 1 || pending.Pending[0].Status != "pending" {
			return fmt.Errorf("no pending review yet: %s", env.Data)
		}
		review = pending.Pending[0].ID
		return nil
	})
	code, env = in.call(t, http.MethodPost, "/api/v1/tools/pending/"+review+"/approve?wait=5m", map[string]any{"policy": map[string]any{
		"baseUrl": upstream.URL + "/v1", "operations": []string{"listPets"},
	}}, "Authorization", in.auth)
	if code != http.StatusOK || !strings.Contains(string(env.Data), `"onboarded"`) {
		t.Fatalf("approve: %d %s", code, env.Data)
	}

	code, env = in.call(t, http.MethodPost, "/api/v1/tools/pet_clinic.list_pets/execute", map[string]any{"inputs": map[string]any{}}, "Authorization", in.auth)
	var run struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Result    struct {
			Output []struct {
				Name string `json:"name"`
			} `json:"output"`
		} `json:"result"`
	}
	if err := json.Unmarshal(env.Data, &run); err != nil || code != http.StatusOK {
		t.Fatalf("execute: %d %s %v", code, env.Data, err)
	}
	if run.Status != "completed" || len(run.Result.Output) != 1 || run.Result.Output[0].Name != "Rex" || upstreamCalls.Load() != 1 {
		t.Fatalf("execute: %+v after %d upstream calls", run, upstreamCalls.Load())
	}
	// The wrapper lives where the runtime looks: under the data dir, once.
	if _, err := os.Stat(filepath.Join(wd, config.DefaultDataDir, "airlock", "wrappers")); err != nil {
		t.Fatalf("wrappers dir under the data dir: %v", err)
	}
}

// runDevOnce runs dev to its end with args after the hashing embedder and
// returns its exit code and stderr (for starts that must fail).
func runDevOnce(t *testing.T, args ...string) (int, string) {
	t.Helper()
	stderr := &testwait.Buffer{}
	e := &env{devTemporal: testDevTemporal, stdout: io.Discard, stderr: stderr, lookupEnv: func(string) (string, bool) { return "", false }}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := run(ctx, append([]string{"dev", "--embedder", "hashing", "--log-level", "warn"}, args...), e)
	return code, stderr.String()
}

// TestTakenTemporalPortNamesPortAndFlag: a second dev whose Temporal port
// (or Web UI port) is taken exits with an error naming the port and the
// flag that moves it; it used to panic in frontend.NewHTTPAPIServer.
func TestTakenTemporalPortNamesPortAndFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	_, port, _ := net.SplitHostPort(taken)
	for _, c := range []struct {
		flag string
		args []string
	}{
		{"--temporal-addr", []string{"--temporal-addr", taken, "--ui-addr", "127.0.0.1:0"}},
		{"--ui-addr", []string{"--temporal-addr", "127.0.0.1:0", "--ui-addr", taken}},
	} {
		code, stderr := runDevOnce(t, append([]string{"--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--no-demo"}, c.args...)...)
		if code != exitError || !strings.Contains(stderr, "port "+port+" is already in use") || !strings.Contains(stderr, c.flag) {
			t.Fatalf("%s taken: exit %d, stderr:\n%s", c.flag, code, stderr)
		}
		if strings.Contains(stderr, "panic") {
			t.Fatalf("%s taken: a panic:\n%s", c.flag, stderr)
		}
		t.Logf("%s taken: %s", c.flag, stderr)
	}
}

// TestSecondDevOnOneDataDirIsRefused: while one dev runs, a second on the
// same data dir (other ports) exits at once, naming the first by pid and
// addresses; the first keeps serving, and once it stops the dir is free.
func TestSecondDevOnOneDataDirIsRefused(t *testing.T) {
	dataDir := t.TempDir()
	first := startDev(t, dataDir, "--no-demo")
	code, stderr := runDevOnce(t, "--data-dir", dataDir, "--http-addr", "127.0.0.1:0", "--temporal-addr", "127.0.0.1:0", "--ui-addr", "127.0.0.1:0", "--no-demo")
	for _, want := range []string{"is in use by pid " + strconv.Itoa(os.Getpid()), "toolsmith dev", "--data-dir", dataDir} {
		if code != exitError || !strings.Contains(stderr, want) {
			t.Fatalf("second dev: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	if strings.Contains(stderr, "starting the in-process Temporal server") {
		t.Fatalf("the second dev went on to start Temporal before it was refused:\n%s", stderr)
	}
	t.Logf("second dev: %s", stderr)
	if code, _ := first.call(t, http.MethodGet, "/healthz", nil); code != http.StatusOK {
		t.Fatalf("the first dev after the refused second: healthz %d", code)
	}
	first.stop(t)
	again := startDev(t, dataDir, "--no-demo")
	again.stop(t)
}

// TestStoreCommandsOnADataDirHeldByDevAreRefused: while dev runs, api,
// worker and keys (without --url) on its data dir exit at once naming dev
// by pid and command, before the SQLite store is opened; api used to start
// and write to the store dev was serving.
func TestStoreCommandsOnADataDirHeldByDevAreRefused(t *testing.T) {
	dataDir := t.TempDir()
	dev := startDev(t, dataDir, "--no-demo")
	for _, args := range [][]string{
		{"api", "--data-dir", dataDir, "--http-addr", "127.0.0.1:0", "--embedder", "hashing"},
		{"worker", "--data-dir", dataDir, "--embedder", "hashing"},
		{"keys", "list", "--data-dir", dataDir},
	} {
		code, _, stderr := runCLI(t, args...)
		for _, want := range []string{"is in use by pid " + strconv.Itoa(os.Getpid()), "toolsmith dev", "--data-dir", dataDir, "--store neo4j"} {
			if code != exitError || !strings.Contains(stderr, want) {
				t.Fatalf("%s: exit %d, stderr lacks %q:\n%s", args[0], code, want, stderr)
			}
		}
		if strings.Contains(stderr, "system open") {
			t.Fatalf("%s opened the store before it was refused:\n%s", args[0], stderr)
		}
		t.Logf("%s: %s", args[0], stderr)
	}
	if code, _ := dev.call(t, http.MethodGet, "/healthz", nil); code != http.StatusOK {
		t.Fatalf("dev after the refused commands: healthz %d", code)
	}
	dev.stop(t)
}

// TestStoreLockIsShared: with SQLite, api and worker replicas share a data
// dir (one WAL file; docs/storage.md) but not with dev, which owns
// everything in it: dev is refused while they hold it, and they are
// refused, naming dev, while dev does; with --store neo4j lockStore takes
// no lock at all.
func TestStoreLockIsShared(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	api, err := lockStore(cfg, "toolsmith api")
	if err != nil || api == nil {
		t.Fatalf("sqlite, api: %v, %v", api, err)
	}
	worker, err := lockStore(cfg, "toolsmith worker")
	if err != nil || worker == nil {
		t.Fatalf("sqlite, a worker beside the api: %v, %v", worker, err)
	}
	if l, err := lockDataDir(cfg); !errors.Is(err, datadir.ErrLocked) || !strings.Contains(err.Error(), "replicas") {
		_ = l.Release()
		t.Fatalf("dev on a dir api and worker share: %v", err)
	}
	_ = api.Release()
	_ = worker.Release()
	dev, err := lockDataDir(cfg)
	if err != nil {
		t.Fatalf("dev once they are gone: %v", err)
	}
	defer dev.Release()
	if _, err := lockStore(cfg, "toolsmith worker"); !errors.Is(err, datadir.ErrLocked) || !strings.Contains(err.Error(), "toolsmith dev") {
		t.Fatalf("sqlite worker while dev holds the dir: %v", err)
	}
	cfg.Store = config.StoreNeo4j
	if l, err := lockStore(cfg, "toolsmith worker"); err != nil || l != nil {
		t.Fatalf("neo4j on a held dir: %v, %v", l, err)
	}
}

// TestResourceMetadataURLIsTheServersOwn: a 401's resource_metadata URL
// and the metadata document name the address the banner shows, not the
// Host header a client sent.
func TestResourceMetadataURLIsTheServersOwn(t *testing.T) {
	in := startDev(t, t.TempDir(), "--no-demo")
	for _, path := range []string{"/api/v1/admin/keys", identity.ResourceMetadataPath} {
		req, err := http.NewRequest(http.MethodGet, in.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := resp.Header.Get("WWW-Authenticate") + string(body)
		if strings.Contains(got, "evil.example") || !strings.Contains(got, in.base) {
			t.Errorf("GET %s with Host evil.example: %d %s", path, resp.StatusCode, got)
		}
	}
}
