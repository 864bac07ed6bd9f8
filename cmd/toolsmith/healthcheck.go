package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/toolsmith/toolsmith/internal/config"
)

// runHealthcheck probes --url (expects HTTP 200) or --tcp (expects a TCP
// connection). Distroless images have no curl, so containers use this.
func runHealthcheck(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("toolsmith healthcheck", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	url := fs.String("url", "", "HTTP URL that must answer 200, e.g. http://127.0.0.1:8080/healthz")
	addr := fs.String("tcp", "", "host:port that must accept a TCP connection")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%v: %w", err, config.ErrInvalid)
	}
	if (*url == "") == (*addr == "") {
		return fmt.Errorf("healthcheck: give exactly one of --url or --tcp: %w", config.ErrInvalid)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *addr != "" {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", *addr)
		if err != nil {
			return fmt.Errorf("healthcheck: %w", err)
		}
		return conn.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: --url %q: %v: %w", *url, err, config.ErrInvalid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", *url, resp.Status)
	}
	return nil
}
