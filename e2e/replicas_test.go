package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/internal/cli"
	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/internal/testwait"
	"github.com/toolsmith/toolsmith/web"
	"github.com/toolsmith/toolsmith/workflows"
)

// replicaBound is how long another replica's write may stay invisible:
// the bound docs/storage.md states (graph.FollowEvery plus one Refresh).
const replicaBound = 2 * graph.FollowEvery

// TestReplicas runs Toolsmith as users scale it out on one host: two
// `toolsmith api` processes and two `toolsmith worker` processes (the
// production binary) on one data dir, so one SQLite file in WAL mode,
// against one Temporal server (the package's in-process one), behind a
// round-robin reverse proxy. Each subtest shows one way the four behave as
// one system.
func TestReplicas(t *testing.T) {
	c := newReplicaCluster(t)

	t.Run("RegistrationIsFoundThroughTheOtherReplica", func(t *testing.T) {
		tide := probeManifest(t, "tides.high_water", "GET_TIDE_TIMES", "Tide times", "Returns the times of high and low tide at a harbour.")
		const q = "/api/v1/tools/retrieval/search?q=tide+times+at+the+harbour"
		// The other replica searches first, so that a stale cached
		// result would show too.
		if code, body := c.call(t, c.api[1], http.MethodGet, q, nil); code != http.StatusOK || slices.Contains(rankedIDs(t, body), "tides.high_water") {
			t.Fatalf("search on api-2 before the registration: %d %s", code, body)
		}
		if code, body := c.call(t, c.api[0], http.MethodPost, "/api/v1/tools/register", map[string]any{"manifest": tide}); code != http.StatusCreated {
			t.Fatalf("register on api-1: %d %s", code, body)
		}
		start := time.Now()
		eventually(t, replicaBound, func() error {
			if code, body := c.call(t, c.api[1], http.MethodGet, q, nil); code != http.StatusOK || !slices.Contains(rankedIDs(t, body), "tides.high_water") {
				return fmt.Errorf("search on api-2: %d, tides.high_water not ranked in %s", code, body)
			}
			return nil
		})
		t.Logf("registered on api-1, found on api-2 after %v (bound %v)", time.Since(start).Round(time.Millisecond), replicaBound)

		// Retired on one replica: gone from the other's search.
		moon := probeManifest(t, "tides.moon_phase", "GET_MOON_PHASE", "Moon phase", "Returns the phase of the moon on a given date.")
		if code, body := c.call(t, c.api[0], http.MethodPost, "/api/v1/tools/register", map[string]any{"manifest": moon}); code != http.StatusCreated {
			t.Fatalf("register tides.moon_phase on api-1: %d %s", code, body)
		}
		const mq = "/api/v1/tools/retrieval/search?q=phase+of+the+moon"
		if code, body := c.call(t, c.api[0], http.MethodGet, mq, nil); code != http.StatusOK || !slices.Contains(rankedIDs(t, body), "tides.moon_phase") {
			t.Fatalf("search on api-1 right after registering there: %d %s", code, body)
		}
		if code, body := c.call(t, c.api[1], http.MethodDelete, "/api/v1/tools/tides.moon_phase", nil); code != http.StatusOK {
			t.Fatalf("deprecate on api-2: %d %s", code, body)
		}
		start = time.Now()
		eventually(t, replicaBound, func() error {
			if _, body := c.call(t, c.api[0], http.MethodGet, mq, nil); slices.Contains(rankedIDs(t, body), "tides.moon_phase") {
				return fmt.Errorf("deprecated tides.moon_phase still ranked on api-1: %s", body)
			}
			return nil
		})
		t.Logf("deprecated on api-2, gone from api-1 after %v", time.Since(start).Round(time.Millisecond))
	})

	t.Run("AKeyRevokedOnOneIsRefusedByTheOther", func(t *testing.T) {
		id, secret := c.mintKey(t, map[string]any{"owner": "replica-test", "level": "user", "groups": []string{"*"}})
		const q = "/api/v1/tools/retrieval/search?q=tide+times"
		// api-2 verifies the key and caches it.
		if code, body := c.callAs(t, secret, c.api[1], http.MethodGet, q, nil); code != http.StatusOK {
			t.Fatalf("search with the new key on api-2: %d %s", code, body)
		}
		if code, body := c.call(t, c.api[0], http.MethodDelete, "/api/v1/admin/keys/"+id, nil); code != http.StatusOK && code != http.StatusNoContent {
			t.Fatalf("revoke on api-1: %d %s", code, body)
		}
		start := time.Now()
		eventually(t, replicaBound, func() error {
			if code, _ := c.callAs(t, secret, c.api[1], http.MethodGet, q, nil); code != http.StatusUnauthorized {
				return fmt.Errorf("api-2 answers the revoked key with %d", code)
			}
			return nil
		})
		t.Logf("revoked on api-1, refused by api-2 after %v", time.Since(start).Round(time.Millisecond))
	})

	t.Run("RateLimitsCountAcrossReplicas", func(t *testing.T) {
		const limit = 4
		_, secret := c.mintKey(t, map[string]any{"owner": "replica-limits", "level": "user", "groups": []string{"*"},
			"limits": map[string]any{"searchPerMinute": limit}})
		const q = "/api/v1/tools/retrieval/search?q=tide+times"
		// Through the proxy the searches alternate between the APIs: each
		// sees half of them, and only counts shared by both refuse the
		// ones past the key's limit.
		var codes []int
		for range limit + 2 {
			code, _ := c.callAs(t, secret, c.proxy.URL, http.MethodGet, q, nil)
			codes = append(codes, code)
		}
		want := []int{200, 200, 200, 200, 429, 429}
		if !slices.Equal(codes, want) {
			t.Fatalf("%d searches through the proxy with a limit of %d a minute: %v, want %v", limit+2, limit, codes, want)
		}
	})

	t.Run("AConsoleSignInOnOneWorksOnTheOther", func(t *testing.T) {
		// Sign in on api-1 (the form's double-submit token rides in a
		// cookie of api-1's sign-in page).
		page, cookies := c.browse(t, c.api[0], http.MethodGet, "/ui/signin", nil, nil)
		form := url.Values{"key": {c.admin}, "csrf": {csrfOf(t, page)}}
		_, cookies = c.browse(t, c.api[0], http.MethodPost, "/ui/signin", form, cookies)
		var session *http.Cookie
		for _, ck := range cookies {
			if ck.Name == web.CookieName {
				session = ck
			}
		}
		if session == nil {
			t.Fatalf("no session cookie after signing in on api-1: %v", cookies)
		}
		// The session works on api-2, whose page carries its form token.
		sources, _ := c.browse(t, c.api[1], http.MethodGet, "/ui/sources", nil, []*http.Cookie{session})
		// Signed out on api-2, the session is gone on api-1 too.
		c.browse(t, c.api[1], http.MethodPost, "/ui/signout", url.Values{"csrf": {csrfOf(t, sources)}}, []*http.Cookie{session})
		req, err := http.NewRequest(http.MethodGet, c.api[0]+"/ui/sources", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.AddCookie(session)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/ui/signin") {
			t.Fatalf("api-1 after signing out on api-2: %d to %q, want a redirect to the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
		}
	})

	t.Run("KillingAWorkerMidCallLosesAndDuplicatesNothing", func(t *testing.T) {
		arrived := c.module.hold()
		var run struct {
			WorkflowID string `json:"workflowId"`
		}
		// A verb's fulfilment: the workflow finds currency.convert and
		// executes it (convertBody, as the verbs tests send it).
		code, body := c.call(t, c.proxy.URL, http.MethodPost, "/api/v1/verbs?wait=0s", convertBody)
		if err := json.Unmarshal(unwrapData(body), &run); (code != http.StatusAccepted && code != http.StatusOK) || err != nil || run.WorkflowID == "" {
			t.Fatalf("start the verb through the proxy: %d %s (%v)", code, body, err)
		}
		var key string
		select {
		case key = <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("no worker called the module within 30 s")
		}
		// The module has done the work; its answer waits. Kill the worker
		// that made the call (Temporal names it: pid@host@).
		victim := c.workerRunning(t, run.WorkflowID)
		c.module.release()
		t.Logf("module called with key %s by %s; killing it", key, victim.name)
		victim.kill(t)

		tc, err := server.Dial(context.Background(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		var out workflows.NovelVerbResult
		if err := tc.GetWorkflow(ctx, run.WorkflowID, "").Get(ctx, &out); err != nil {
			t.Fatalf("the run after its worker was killed: %v", err)
		}
		if out.Branch != workflows.BranchSubstitute || !slices.Equal(out.Tools, []string{"currency.convert"}) || !reflect.DeepEqual(out.Output, wantConversion(t)) {
			t.Errorf("result = %+v, want currency.convert's conversion", out)
		}
		if !strings.HasPrefix(key, run.WorkflowID+"/") {
			t.Errorf("the module's idempotency key %q is not the run's (%s)", key, run.WorkflowID)
		}
		mod := c.module.mods["currency"]
		var calls, replays int
		for _, call := range mod.Calls() {
			if call.IdempotencyKey == key {
				calls++
				if call.Replayed {
					replays++
				}
			}
		}
		if n := mod.Executions(key); n != 1 || calls != 2 || replays != 1 {
			t.Errorf("module: %d executions, %d calls, %d replays with key %s; want the work done once, the retry answered from it", n, calls, replays, key)
		}
		// The use is recorded once, by the worker that finished.
		st, err := sqlite.Open(c.storePath, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		u, err := st.Usage(context.Background(), []string{"currency.convert"})
		if err != nil || u["currency.convert"].Uses != 1 {
			t.Errorf("usage of currency.convert = %+v, %v; want one use", u["currency.convert"], err)
		}
	})

	// After the kill one worker of the first two is left; it builds the
	// wrapper. It then leaves, and a new worker on a new airlock dir (a
	// host that never saw the approval nor its binary) runs the tool.
	t.Run("ASpecApprovedThroughOneReplicaRunsOnAnotherWorker", func(t *testing.T) {
		specs := serveFile(t, "../codegen/testdata/petstore/spec.yaml")
		var apiCalls atomic.Int32
		pets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			apiCalls.Add(1)
			w.Header().Set("Content-Type", "application/json")
			if r.Method == http.MethodGet && r.URL.Path == "/v1/pets" {
				_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
				return
			}
			w.WriteHeader(http.StatusTeapot)
		}))
		defer pets.Close()

		// The source is added through api-1 ...
		var added struct {
			ScanWorkflowID string `json:"scanWorkflowId"`
		}
		code, body := c.call(t, c.api[0], http.MethodPost, "/api/v1/tools/sources", map[string]any{"type": "openapi", "location": specs.URL + "/pets.yaml"})
		if err := json.Unmarshal(unwrapData(body), &added); code != http.StatusCreated || err != nil {
			t.Fatalf("add source on api-1: %d %s (%v)", code, body, err)
		}
		tc, err := server.Dial(context.Background(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var scan workflows.ScanOutput
		if err := tc.GetWorkflow(ctx, added.ScanWorkflowID, "").Get(ctx, &scan); err != nil || len(scan.Reviews) != 1 {
			t.Fatalf("scan: %+v, %v", scan, err)
		}
		review := scan.Reviews[0]
		eventually(t, 30*time.Second, func() error {
			var pending struct {
				Pending []struct{ ID, Status string } `json:"pending"`
			}
			code, body := c.call(t, c.api[1], http.MethodGet, "/api/v1/tools/pending", nil)
			if err := json.Unmarshal(unwrapData(body), &pending); code != http.StatusOK || err != nil {
				return fmt.Errorf("pending on api-2: %d %s", code, body)
			}
			for _, p := range pending.Pending {
				if p.ID == review && p.Status == workflows.AirlockPending {
					return nil
				}
			}
			return fmt.Errorf("review %s not pending on api-2 yet: %s", review, body)
		})
		// ... and approved through api-2; the remaining worker builds it.
		var approved struct {
			Outcome workflows.AirlockOutcome `json:"outcome"`
		}
		code, body = c.call(t, c.api[1], http.MethodPost, "/api/v1/tools/pending/"+review+"/approve?wait=120s", map[string]any{"policy": map[string]any{
			"baseUrl": pets.URL + "/v1", "quotaPerDay": 10, "operations": []string{"listPets"},
			// The first call reaches the soft budget: its notification.
			"costPerCall": 1, "softBudget": 1, "hardBudget": 5,
		}})
		if err := json.Unmarshal(unwrapData(body), &approved); code != http.StatusOK || err != nil || approved.Outcome.Status != workflows.AirlockOnboarded {
			t.Fatalf("approve on api-2: %d %s (%v)", code, body, err)
		}

		// The builder leaves; a worker with nothing of the airlock on
		// its disk takes over.
		for _, w := range c.workers {
			w.stop(t)
		}
		if err := os.RemoveAll(filepath.Join(c.dataDir, "airlock")); err != nil {
			t.Fatal(err)
		}
		c.start(t, "worker-3", "worker")

		var exec struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			Result struct {
				Output []map[string]any `json:"output"`
			} `json:"result"`
		}
		code, body = c.call(t, c.proxy.URL, http.MethodPost, "/api/v1/tools/pet_clinic.list_pets/execute?wait=120s", map[string]any{"inputs": map[string]any{}})
		if err := json.Unmarshal(unwrapData(body), &exec); code != http.StatusOK || err != nil || exec.Status != "completed" ||
			len(exec.Result.Output) != 1 || exec.Result.Output[0]["name"] != "Rex" {
			t.Fatalf("execute the onboarded tool on worker-3: %d %s (%v)", code, body, err)
		}
		if n := apiCalls.Load(); n != 1 {
			t.Errorf("the pet API saw %d calls, want 1", n)
		}
		// worker-3 rebuilt the wrapper from the approval in the store.
		if built, _ := filepath.Glob(filepath.Join(c.dataDir, "airlock", "wrappers", "*")); len(built) != 1 {
			t.Errorf("wrappers on worker-3's disk after the call: %v, want the one it rebuilt", built)
		}
		// The call's soft-budget notification, raised on worker-3, is
		// listed by both APIs (notifications live in the store).
		for _, api := range c.api {
			var notes struct {
				Notifications []struct{ Kind, Subject string } `json:"notifications"`
			}
			code, body := c.call(t, api, http.MethodGet, "/api/v1/notifications", nil)
			if err := json.Unmarshal(unwrapData(body), &notes); code != http.StatusOK || err != nil ||
				len(notes.Notifications) != 1 || notes.Notifications[0].Kind != "soft_budget" || notes.Notifications[0].Subject != "pet_clinic" {
				t.Errorf("notifications listed by %s: %d %s (%v)", api, code, body, err)
			}
		}
	})
}

// replicaCluster is the processes of TestReplicas and what they share.
type replicaCluster struct {
	bin       string
	dataDir   string
	storePath string
	admin     string
	module    *lostReply
	modules   string // the modules file
	api       []string
	workers   []*replicaProc
	proxy     *httptest.Server
}

func newReplicaCluster(t *testing.T) *replicaCluster {
	t.Helper()
	c := &replicaCluster{dataDir: t.TempDir()}
	c.storePath = filepath.Join(c.dataDir, config.StoreFile)
	c.bin = filepath.Join(t.TempDir(), "toolsmith-server")
	build := exec.Command("go", "build", "-o", c.bin, "../cmd/toolsmith-server")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	mux, mods := demomodule.Mux()
	c.module = &lostReply{next: mux, mods: mods}
	modSrv := httptest.NewServer(c.module)
	t.Cleanup(modSrv.Close)
	cfg := map[string]any{"modules": map[string]string{}}
	for _, n := range demomodule.Names() {
		cfg["modules"].(map[string]string)[n] = modSrv.URL + "/" + n
	}
	raw, _ := json.Marshal(cfg)
	c.modules = filepath.Join(t.TempDir(), "modules.json")
	if err := os.WriteFile(c.modules, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	cleanSchedules(t)
	// All four start at once on the fresh data dir, as replicas do: they
	// migrate the file, record the embedder and create one owner key
	// between them.
	var procs []*replicaProc
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range []struct{ name, cmd string }{{"api-1", "api"}, {"api-2", "api"}, {"worker-1", "worker"}, {"worker-2", "worker"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rp := c.start(t, p.name, p.cmd)
			mu.Lock()
			procs = append(procs, rp)
			mu.Unlock()
		}()
	}
	wg.Wait()
	secret, err := os.ReadFile(filepath.Join(c.dataDir, cli.AdminKeyFile))
	if err != nil {
		t.Fatalf("owner key: %v", err)
	}
	c.admin = strings.TrimSpace(string(secret))
	for _, name := range []string{"api-1", "api-2", "worker-1", "worker-2"} {
		for _, p := range procs {
			if p.name != name {
				continue
			}
			if p.base != "" {
				c.api = append(c.api, p.base)
			} else {
				c.workers = append(c.workers, p)
			}
		}
	}
	if len(c.api) != 2 || len(c.workers) != 2 {
		t.Fatalf("cluster: %d APIs and %d workers started", len(c.api), len(c.workers))
	}
	c.proxy = httptest.NewServer(roundRobin(t, c.api))
	t.Cleanup(c.proxy.Close)

	// The two APIs started together made one owner key between them.
	var list struct {
		Keys []struct {
			Level     string    `json:"level"`
			RevokedAt time.Time `json:"revokedAt"`
		} `json:"keys"`
	}
	code, body := c.call(t, c.api[1], http.MethodGet, "/api/v1/admin/keys", nil)
	if err := json.Unmarshal(unwrapData(body), &list); code != http.StatusOK || err != nil {
		t.Fatalf("list keys: %d %s (%v)", code, body, err)
	}
	owners := 0
	for _, k := range list.Keys {
		if k.Level == "owner" && k.RevokedAt.IsZero() {
			owners++
		}
	}
	if owners != 1 {
		t.Fatalf("%d valid owner keys after the first start of two APIs, want 1: %s", owners, body)
	}
	return c
}

// replicaFlags are what every process of the cluster shares.
func (c *replicaCluster) flags() []string {
	return []string{
		"--data-dir", c.dataDir, "--store", "sqlite", "--embedder", "hashing", "--log-level", "warn",
		"--temporal-addr", server.Addr(), "--temporal-namespace", server.Namespace(),
		"--modules-file", c.modules, "--http-addr", "127.0.0.1:0",
	}
}

// apiLine is the ready banner's API line.
var apiLine = regexp.MustCompile(`API\s+(http://[0-9.:]+)/api/v1`)

// start runs one process and waits until it is ready: an API's banner and
// /healthz, a worker's polling line.
func (c *replicaCluster) start(t *testing.T, name, command string) *replicaProc {
	t.Helper()
	p := &replicaProc{name: name, cmd: exec.Command(c.bin, append([]string{command}, c.flags()...)...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.Env = os.Environ()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(t) })
	eventually(t, 60*time.Second, func() error {
		select {
		case <-p.done:
			t.Fatalf("%s exited during start-up:\n%s", name, p.out.String())
		default:
		}
		if command == "worker" {
			if !strings.Contains(p.out.String(), "is polling task queue") {
				return fmt.Errorf("%s is not polling yet:\n%s", name, p.out.String())
			}
			return nil
		}
		m := apiLine.FindStringSubmatch(p.out.String())
		if m == nil {
			return fmt.Errorf("%s printed no API address yet:\n%s", name, p.out.String())
		}
		resp, err := http.Get(m[1] + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s /healthz: %d", name, resp.StatusCode)
		}
		p.base = m[1]
		return nil
	})
	return p
}

// workerRunning returns the worker process whose identity Temporal records
// on the run's pending activity.
func (c *replicaCluster) workerRunning(t *testing.T, workflowID string) *replicaProc {
	t.Helper()
	tc, err := server.Dial(context.Background(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	var victim *replicaProc
	eventually(t, 10*time.Second, func() error {
		d, err := tc.DescribeWorkflowExecution(context.Background(), workflowID, "")
		if err != nil {
			return err
		}
		pending := d.GetPendingActivities()
		if len(pending) == 0 {
			return fmt.Errorf("run %s has no pending activity", workflowID)
		}
		who := pending[0].GetLastWorkerIdentity()
		pid, _, _ := strings.Cut(who, "@")
		for _, w := range c.workers {
			if strconv.Itoa(w.cmd.Process.Pid) == pid {
				victim = w
				return nil
			}
		}
		return fmt.Errorf("pending activity's worker %q is none of the cluster's", who)
	})
	return victim
}

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// browse makes one console request with cookies (and a form when set)
// and returns the body and the cookies after it; a redirect to the
// sign-in page or an error status fails the test.
func (c *replicaCluster) browse(t *testing.T, base, method, path string, form url.Values, cookies []*http.Cookie) (string, []*http.Cookie) {
	t.Helper()
	var rd io.Reader
	if form != nil {
		rd = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	loc := resp.Header.Get("Location")
	if resp.StatusCode >= 400 || (resp.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, "/ui/signin") && path != "/ui/signout") {
		t.Fatalf("%s %s%s: %d (to %q) %s", method, base, path, resp.StatusCode, loc, body)
	}
	jar := map[string]*http.Cookie{}
	for _, ck := range cookies {
		jar[ck.Name] = ck
	}
	for _, ck := range resp.Cookies() {
		if ck.MaxAge < 0 {
			delete(jar, ck.Name)
		} else {
			jar[ck.Name] = ck
		}
	}
	out := make([]*http.Cookie, 0, len(jar))
	for _, ck := range jar {
		out = append(out, &http.Cookie{Name: ck.Name, Value: ck.Value})
	}
	return string(body), out
}

// csrfField is a console form's CSRF token.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf field in the page:\n%s", page)
	}
	return m[1]
}

// mintKey creates an API key through api-1 and returns its id and secret.
func (c *replicaCluster) mintKey(t *testing.T, req map[string]any) (string, string) {
	t.Helper()
	var created struct {
		Key struct {
			ID string `json:"id"`
		} `json:"key"`
		Secret string `json:"secret"`
	}
	code, body := c.call(t, c.api[0], http.MethodPost, "/api/v1/admin/keys", req)
	if err := json.Unmarshal(unwrapData(body), &created); code != http.StatusCreated || err != nil || created.Secret == "" {
		t.Fatalf("create a key on api-1: %d %s (%v)", code, body, err)
	}
	return created.Key.ID, created.Secret
}

// call sends one request with the owner key to base and returns the
// status and body.
func (c *replicaCluster) call(t *testing.T, base, method, path string, body any) (int, []byte) {
	t.Helper()
	return c.callAs(t, c.admin, base, method, path, body)
}

// callAs is call with the given key's secret.
func (c *replicaCluster) callAs(t *testing.T, secret, base, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// unwrapData returns the "data" member of an envelope, or body itself.
func unwrapData(body []byte) []byte {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &env) == nil && len(env.Data) > 0 {
		return env.Data
	}
	return body
}

// rankedIDs are the ids a search response ranks.
func rankedIDs(t *testing.T, body []byte) []string {
	t.Helper()
	var res struct {
		Ranked []struct {
			Tool struct {
				ID string `json:"toolId"`
			} `json:"tool"`
		} `json:"ranked"`
	}
	if err := json.Unmarshal(unwrapData(body), &res); err != nil {
		t.Fatalf("search response: %v: %s", err, body)
	}
	var ids []string
	for _, h := range res.Ranked {
		ids = append(ids, h.Tool.ID)
	}
	return ids
}

// probeManifest is a tool no module offers (so no worker's module
// discovery registers it): currency.list_currencies's manifest with
// another id, verb, name and description.
func probeManifest(t *testing.T, id, verb, name, desc string) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(demoManifest(t, "currency", "currency.list_currencies"), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "examples")
	delete(m, "useCases")
	m["toolId"], m["verb"], m["name"], m["module"] = id, verb, name, "tides"
	m["shortDescription"], m["description"], m["tags"] = desc, desc, []string{"tides", "sea"}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// demoManifest is one demo module tool's manifest.
func demoManifest(t *testing.T, module, id string) json.RawMessage {
	t.Helper()
	m, err := demomodule.New(module)
	if err != nil {
		t.Fatal(err)
	}
	for _, man := range m.Manifests() {
		if man.ToolID == id {
			raw, err := json.Marshal(man)
			if err != nil {
				t.Fatal(err)
			}
			return raw
		}
	}
	t.Fatalf("module %s has no tool %s", module, id)
	return nil
}

// roundRobin is the test's load balancer: each request goes to the next
// API replica.
func roundRobin(t *testing.T, bases []string) http.Handler {
	targets := make([]*url.URL, len(bases))
	for i, b := range bases {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		targets[i] = u
	}
	var next atomic.Uint64
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(targets[next.Add(1)%uint64(len(targets))])
		r.Out.Host = r.In.Host
	}}
}

// cleanSchedules deletes, once the test ends, the schedules its workers
// create on the package's shared Temporal server, so that later tests
// start without them.
func cleanSchedules(t *testing.T) {
	ctx := context.Background()
	tc, err := server.Dial(ctx, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	if it, err := tc.ScheduleClient().List(ctx, client.ScheduleListOptions{}); err == nil {
		for it.HasNext() {
			s, err := it.Next()
			if err != nil {
				break
			}
			before[s.ID] = true
		}
	}
	t.Cleanup(func() {
		defer tc.Close()
		it, err := tc.ScheduleClient().List(ctx, client.ScheduleListOptions{})
		if err != nil {
			return
		}
		for it.HasNext() {
			s, err := it.Next()
			if err != nil {
				return
			}
			if !before[s.ID] {
				_ = tc.ScheduleClient().GetHandle(ctx, s.ID).Delete(ctx)
			}
		}
	})
}

// replicaProc is one process of the cluster.
type replicaProc struct {
	name string
	cmd  *exec.Cmd
	out  testwait.Buffer
	done chan struct{}
	base string // an API's base URL
}

// kill ends the process at once (SIGKILL: no graceful shutdown).
func (p *replicaProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill %s: %v", p.name, err)
	}
	<-p.done
}

// stop ends the process gracefully (SIGTERM), killing it after 10 s, and
// shows its output when the test failed.
func (p *replicaProc) stop(t *testing.T) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	if t.Failed() {
		t.Logf("%s output:\n%s", p.name, p.out.String())
	}
}

// lostReply serves the demo modules; while held, an execute call does its
// work and then keeps its answer until the caller goes away (its worker
// died), as a module whose reply is lost would. Arrivals are reported
// with their idempotency keys.
type lostReply struct {
	next http.Handler
	mods map[string]*demomodule.Module

	mu      sync.Mutex
	held    bool
	arrived chan string
}

// hold makes the next execute calls lose their replies.
func (l *lostReply) hold() <-chan string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held, l.arrived = true, make(chan string, 16)
	return l.arrived
}

// release lets later calls answer.
func (l *lostReply) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
}

func (l *lostReply) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	held, arrived := l.held, l.arrived
	l.mu.Unlock()
	if !held || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/execute") {
		l.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	l.next.ServeHTTP(rec, r) // the work is done
	arrived <- r.Header.Get(demomodule.HeaderIdempotencyKey)
	<-r.Context().Done() // the answer never leaves
}
