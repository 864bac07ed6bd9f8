package modules

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolsmith/toolsmith/internal/demomodule"
	"github.com/toolsmith/toolsmith/tool"
)

const seedManifest = `{"name":"research","tools":[
 {"name":"research.web_search","description":"Search the web and return results",
  "parameters":[{"name":"query","type":"string","description":"Search query","required":true},
                {"name":"max_results","type":"integer","description":"Max results","required":false},
                {"name":"engine","type":"string","description":"Engine","enum":["ddg","bing"]}],
  "required_permission":"guest"},
 {"name":"research.summarize","description":"Summarize a page","parameters":[],"required_permission":"user"}]}`

type memRegistrar struct {
	mu   sync.Mutex
	got  []tool.Manifest
	fail string
}

func (m *memRegistrar) RegisterTool(_ context.Context, man tool.Manifest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if man.ToolID == m.fail {
		return errors.New("rejected")
	}
	m.got = append(m.got, man)
	return nil
}

func TestDiscover(t *testing.T) {
	research := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/manifest" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(seedManifest))
	}))
	defer research.Close()
	currency, _ := demomodule.New("currency")
	cur := httptest.NewServer(currency)
	defer cur.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", http.StatusServiceUnavailable) }))
	defer broken.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()

	cfg := NewConfig()
	for _, p := range []string{"research=" + research.URL, "currency=" + cur.URL, "broken=" + broken.URL, "gone=" + goneURL} {
		if err := cfg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	reg := &memRegistrar{fail: "research.summarize"}
	var logs []string
	r := NewRouter(cfg, WithRegistrar(reg), WithLogf(func(f string, a ...any) { logs = append(logs, f) }))
	reports, err := r.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ModuleReport{}
	for _, rep := range reports {
		byName[rep.Module] = rep
	}
	if rep := byName["research"]; rep.Error != "" || rep.Registered != 1 || rep.ToolErrors["research.summarize"] != "rejected" {
		t.Fatalf("research report = %+v", rep)
	}
	if rep := byName["currency"]; rep.Registered != 3 || rep.Tools[0] != "currency.convert" {
		t.Fatalf("currency report = %+v", rep)
	}
	if rep := byName["broken"]; !strings.Contains(rep.Error, "status 503: boom") {
		t.Fatalf("broken report = %+v", rep)
	}
	if rep := byName["gone"]; rep.Error == "" {
		t.Fatalf("gone report = %+v", rep)
	}
	if len(logs) != 4 {
		t.Fatalf("logs = %v", logs)
	}

	var ws, cc tool.Manifest
	for _, m := range reg.got {
		switch m.ToolID {
		case "research.web_search":
			ws = m
		case "currency.convert":
			cc = m
		}
	}
	if ws.Verb != "WEB_SEARCH" || ws.Module != "research" || ws.RequiredPermission != "guest" || ws.Source.Origin != "module" {
		t.Fatalf("converted seed tool = %+v", ws)
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(ws.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if len(schema.Required) != 1 || schema.Required[0] != "query" || schema.Properties["max_results"]["type"] != "integer" || len(schema.Properties["engine"]["enum"].([]any)) != 2 {
		t.Fatalf("inputSchema = %s", ws.InputSchema)
	}
	if cc.Verb != "CONVERT_CURRENCY" || len(cc.OutputSchema) == 0 || cc.Source.Origin != "demo" {
		t.Fatalf("full manifest not kept: %+v", cc)
	}
}

func TestConvertManifestRejects(t *testing.T) {
	cases := map[string]string{
		"other module's tool": `{"name":"a","tools":[{"name":"b.x","parameters":[]}]}`,
		"wrong module name":   `{"name":"b","tools":[]}`,
		"unnamed parameter":   `{"name":"a","tools":[{"name":"a.x","parameters":[{"type":"string"}]}]}`,
		"not json":            `nope`,
	}
	for name, body := range cases {
		if _, err := ConvertManifest("a", "http://a", []byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestDeriveVerb(t *testing.T) {
	for in, want := range map[string]string{
		"currency.convert":             "CONVERT_CURRENCY",
		"research.web_search":          "WEB_SEARCH",
		"file_manager.create_document": "CREATE_DOCUMENT",
		"git_platform.issue.create":    "ISSUE_CREATE",
		"scheduler.add-job":            "ADD_JOB",
	} {
		if got := DeriveVerb(in); got != want {
			t.Errorf("DeriveVerb(%q) = %q, want %q", in, got, want)
		}
	}
}

// Serves: a configured module's tools are taken as served until its
// manifest is fetched; after that only the tools it lists are (the demo
// currency module lists three of the catalogue's currency tools), and a
// module not configured serves nothing.
func TestServesWhatTheManifestLists(t *testing.T) {
	currency, _ := demomodule.New("currency")
	cur := httptest.NewServer(currency)
	defer cur.Close()
	cfg := NewConfig()
	if err := cfg.Add("currency=" + cur.URL); err != nil {
		t.Fatal(err)
	}
	r := NewRouter(cfg)
	if !r.Serves("currency", "currency.historical_rate") || r.Serves("research", "research.summarize") {
		t.Fatal("before discovery: a configured module serves every tool, another none")
	}
	if _, err := r.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !r.Serves("currency", "currency.convert") {
		t.Fatal("a listed tool is served")
	}
	if r.Serves("currency", "currency.historical_rate") {
		t.Fatal("a tool the manifest does not list is not served")
	}
}
