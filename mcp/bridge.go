package mcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds the Authorization header to every request.
type bearerTransport struct {
	header string
	next   http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", b.header)
	return b.next.RoundTrip(r)
}

// HTTPClient returns an HTTP client that sends key as a bearer token (no
// header when key is empty).
func HTTPClient(key string) *http.Client {
	if key == "" {
		return http.DefaultClient
	}
	return &http.Client{Transport: bearerTransport{header: "Bearer " + key, next: http.DefaultTransport}}
}

// Connect opens an MCP client session to a running Toolsmith's /mcp.
func Connect(ctx context.Context, baseURL, key, version string) (*sdk.ClientSession, error) {
	endpoint := strings.TrimRight(baseURL, "/") + "/mcp"
	c := sdk.NewClient(&sdk.Implementation{Name: "toolsmith-bridge", Version: version}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: HTTPClient(key)}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: connect to %s: %w", endpoint, err)
	}
	return cs, nil
}

// Bridge is an MCP server for stdio that forwards every tool to a running
// Toolsmith over Streamable HTTP, so an MCP client can launch
// `toolsmith mcp --url URL` while one server owns the store. The remote
// server authenticates each call with the bridge's key.
func Bridge(ctx context.Context, remote *sdk.ClientSession, version string) (*sdk.Server, error) {
	s := sdk.NewServer(&sdk.Implementation{Name: "toolsmith", Title: "Toolsmith (stdio bridge)", Version: version}, nil)
	n := 0
	for t, err := range remote.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp: list the remote tools: %w", err)
		}
		name := t.Name
		s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return remote.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: req.Params.Arguments})
		})
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("mcp: the remote server lists no tools")
	}
	return s, nil
}
