// Command toolsmith-server is Toolsmith's production binary: api, worker,
// keys, mcp, airlock, model fetch, healthcheck and version, against a
// configured store and an external Temporal cluster. It is cmd/toolsmith
// without the in-process Temporal server and its Web UI (and so without
// dev, bench and eval), which is nearly all of that binary's size; the
// commands themselves are the same code (internal/cli). The Dockerfile
// ships it as /usr/local/bin/toolsmith-server.
package main

import (
	"os"

	"github.com/toolsmith/toolsmith/internal/cli"
)

func main() { os.Exit(cli.Main(nil)) }
