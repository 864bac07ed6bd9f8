package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolsmith/toolsmith/internal/config"
)

// newHealthcheckCommand is `toolsmith healthcheck`.
func newHealthcheckCommand(e *env) *cobra.Command {
	c := &cobra.Command{Use: "healthcheck", Args: noArgs}
	url := c.Flags().String("url", "", "HTTP URL that must answer 200, e.g. http://127.0.0.1:8080/healthz")
	addr := c.Flags().String("tcp", "", "host:port that must accept a TCP connection")
	timeout := c.Flags().Duration("timeout", 3*time.Second, "how long to wait")
	c.RunE = func(c *cobra.Command, _ []string) error {
		return runHealthcheck(c.Context(), *url, *addr, *timeout)
	}
	return c
}

// runHealthcheck probes url (expects HTTP 200) or addr (expects a TCP
// connection). Distroless images have no curl, so containers use this.
func runHealthcheck(ctx context.Context, url, addr string, timeout time.Duration) error {
	if (url == "") == (addr == "") {
		return fmt.Errorf("healthcheck: give exactly one of --url or --tcp: %w", config.ErrInvalid)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if addr != "" {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("healthcheck: %w", err)
		}
		return conn.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: --url %q: %v: %w", url, err, config.ErrInvalid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}
