package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// newVersionCommand is `toolsmith version`: it prints
// "toolsmith <version> (<revision>, <go version>)", without the revision
// when Go did not record one (-buildvcs=false; make's version is then
// git describe's already).
func newVersionCommand(e *env) *cobra.Command {
	return &cobra.Command{Use: "version", Args: noArgs, RunE: func(*cobra.Command, []string) error {
		build := fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		if rev := revision(); rev != "" {
			build = rev + ", " + build
		}
		fmt.Fprintf(e.stdout, "toolsmith %s (%s)\n", version, build)
		return nil
	}}
}

// revision is the VCS revision the binary was built from, when Go recorded
// it ("" otherwise).
func revision() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
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
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
