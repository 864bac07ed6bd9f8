package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
