package cli

import (
	"fmt"
	"os"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/internal/config"
	"github.com/toolsmith/toolsmith/mcp"
)

// newMCPCommand is `toolsmith mcp --url URL`: an MCP server on stdio (the
// command an MCP client launches) that forwards every tool to a running
// Toolsmith's /mcp, so one server owns the store. The key comes from
// --key-file or TOOLSMITH_API_KEY.
func newMCPCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "mcp", Args: noArgs}
	url := c.Flags().String("url", "", "a running Toolsmith's base URL, e.g. http://127.0.0.1:8080 (required) [env "+config.EnvName("url")+"]")
	keyFile := c.Flags().String("key-file", "", "file holding the API key to call with (default: "+config.EnvName("api-key")+")")
	c.RunE = func(c *cobra.Command, _ []string) error {
		if *url == "" {
			if v, ok := e.lookupEnv(config.EnvName("url")); ok {
				*url = v
			}
		}
		if *url == "" {
			return fmt.Errorf("mcp: --url is required (the running Toolsmith to bridge to): %w", config.ErrInvalid)
		}
		if err := checkBaseURL(*url); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		key := ""
		switch {
		case *keyFile != "":
			b, err := os.ReadFile(*keyFile)
			if err != nil {
				return fmt.Errorf("mcp: --key-file: %w: %w", config.ErrInvalid, err)
			}
			key = strings.TrimSpace(string(b))
		default:
			key, _ = e.lookupEnv(config.EnvName("api-key"))
		}
		ctx := c.Context()
		remote, err := mcp.Connect(ctx, *url, key, version)
		if err != nil {
			return err
		}
		defer remote.Close()
		s, err := mcp.Bridge(ctx, remote, version)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "toolsmith mcp: serving %s's tools on stdio\n", *url)
		return s.Run(ctx, &sdk.StdioTransport{})
	}
	return c
}
