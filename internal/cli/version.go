package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// newVersionCommand is `toolsmith version`: it prints
// "toolsmith <version> (<revision>, <go version>)".
func newVersionCommand(e *env) *cobra.Command {
	return &cobra.Command{Use: "version", Args: noArgs, RunE: func(*cobra.Command, []string) error {
		fmt.Fprintf(e.stdout, "toolsmith %s (%s, %s %s/%s)\n", version, revision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}}
}

// revision is the VCS revision the binary was built from, when Go recorded it.
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown revision"
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown revision"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
