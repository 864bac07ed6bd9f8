package mcp_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/mcp"
)

// headerTransport adds fixed headers to every request.
type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// listTools lists the tools of the edge at url as a client sending h.
func listTools(t *testing.T, url string, h http.Header) []string {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "list-test", Version: "test"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: headerTransport{h}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// TestToolsListIsTheActingCallers: tools/list shows what the narrowed
// (acting) caller may call. A trusted gateway with an admin key acting for
// a guest (X-Permission-Level: guest) lists what a guest lists: no
// kb.stats, which the call would refuse.
func TestToolsListIsTheActingCallers(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys := identity.NewKeyService(st)
	// The operator on the host creates keys as the owner.
	_, secret, err := keys.Create(ctx, identity.Principal{}, identity.NewKey{Owner: "gateway", Level: "admin", TrustedGateway: true})
	if err != nil {
		t.Fatal(err)
	}
	edge := mcp.New(mcp.Deps{Auth: &identity.Authenticator{Keys: keys}, Store: st})
	srv := httptest.NewServer(edge.Handler())
	defer srv.Close()

	gateway := http.Header{"Authorization": {"Bearer " + secret}}
	if names := listTools(t, srv.URL, gateway); !slices.Contains(names, "kb.stats") {
		t.Fatalf("the admin gateway acting as itself lists %v, without kb.stats", names)
	}
	guest := listTools(t, srv.URL, http.Header{})
	narrowed := listTools(t, srv.URL, http.Header{"Authorization": {"Bearer " + secret},
		identity.HeaderUserID: {"ana"}, identity.HeaderLevel: {"guest"}})
	if slices.Contains(narrowed, "kb.stats") || !slices.Contains(narrowed, "find_tools") {
		t.Errorf("a gateway narrowed to guest lists %v", narrowed)
	}
	for _, name := range narrowed {
		if !slices.Contains(guest, name) && name != "fulfil_verb" { // a gateway's end user is authenticated
			t.Errorf("a gateway narrowed to guest lists %s, a guest does not (guest: %v)", name, guest)
		}
	}
}

// TestCatalogueToolsAsListed: a catalogue tool is listed with its title,
// its description and the Toolsmith suffix, its version in _meta and its
// input schema as registered, although the catalogue keeps them compact
// (two tools with one schema share it); a tool without an object schema
// gets the empty one, and a withdrawn tool is no longer listed.
func TestCatalogueToolsAsListed(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	schema := `{"type": "object", "properties": {"city": {"type": "string", "description": "the city"}}, "required": ["city"]}`
	for i, id := range []string{"weather.now", "weather.now.eu-central", "weather.raw"} {
		in := schema
		if id == "weather.raw" {
			in = `{"type": "string"}`
		}
		man := `{"toolId": "` + id + `", "version": "1.` + strconv.Itoa(i) + `.0", "inputSchema": ` + in + `}`
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Name: "Weather " + id,
			ShortDescription: "Current weather of " + id, Status: graph.StatusActive}, Embedding: []float32{1, 0}, Manifest: json.RawMessage(man)}); err != nil {
			t.Fatal(err)
		}
	}
	edge := mcp.New(mcp.Deps{Store: st})
	if n, err := edge.LoadCatalogue(ctx); err != nil || n != 3 {
		t.Fatalf("loaded %d: %v", n, err)
	}
	srv := httptest.NewServer(edge.Handler())
	defer srv.Close()
	listed := func() map[string]*sdk.Tool {
		c := sdk.NewClient(&sdk.Implementation{Name: "list-test", Version: "test"}, nil)
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		out := map[string]*sdk.Tool{}
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out[tool.Name] = tool
		}
		return out
	}
	tools := listed()
	var want any
	_ = json.Unmarshal([]byte(schema), &want)
	for i, id := range []string{"weather.now", "weather.now.eu-central"} {
		name := strings.ReplaceAll(id, ".", "__")
		got, ok := tools[name]
		if !ok {
			t.Fatalf("%s is not listed: %v", name, slices.Collect(maps.Keys(tools)))
		}
		if got.Title != "Weather "+id || got.Description != "Current weather of "+id+" (Toolsmith tool "+id+"; runs through call_tool.)" {
			t.Errorf("%s: title %q, description %q", name, got.Title, got.Description)
		}
		if v := got.Meta["toolsmith/version"]; v != "1."+strconv.Itoa(i)+".0" {
			t.Errorf("%s: _meta %v", name, got.Meta)
		}
		if !reflect.DeepEqual(got.InputSchema, want) {
			t.Errorf("%s: input schema %v, want %v", name, got.InputSchema, want)
		}
	}
	if got := tools["weather__raw"]; got == nil || !reflect.DeepEqual(got.InputSchema, map[string]any{"type": "object", "properties": map[string]any{}}) {
		t.Errorf("a tool without an object schema: %+v", got)
	}
	if err := st.SetStatus(ctx, "weather.now", graph.StatusDeprecated, "test"); err != nil {
		t.Fatal(err)
	}
	if err := edge.ToolChanged(ctx, "weather.now"); err != nil {
		t.Fatal(err)
	}
	if tools := listed(); tools["weather__now"] != nil || tools["weather__now__eu-central"] == nil {
		t.Errorf("after deprecating weather.now: %v", slices.Collect(maps.Keys(tools)))
	}
}

// TestListsAreCachedPrivately: tools/list answers each caller the tools it
// may call, so its result says only the requesting caller's client may
// cache it, and not for long (the protocol's default scope is public: an
// intermediary could serve one caller's list to another).
func TestListsAreCachedPrivately(t *testing.T) {
	ctx := context.Background()
	edge := mcp.New(mcp.Deps{Store: openStore(t)})
	srv := httptest.NewServer(edge.Handler())
	defer srv.Close()
	c := sdk.NewClient(&sdk.Implementation{Name: "cache-test", Version: "test"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "private" || res.TTLMs != 0 || len(res.Tools) == 0 {
		t.Fatalf("tools/list: cacheScope %q, ttlMs %d, %d tools; want private, 0, the caller's tools", res.CacheScope, res.TTLMs, len(res.Tools))
	}
}
