// Command benchplot writes PERFORMANCE.md's SVG from `toolsmith bench
// --json` outputs: go run ./internal/benchplot/cmd OUT.svg RUN.json…
package main

import (
	"fmt"
	"os"

	"github.com/toolsmith/toolsmith/internal/benchplot"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: benchplot OUT.svg RUN.json…")
		os.Exit(2)
	}
	var runs []benchplot.Run
	for _, p := range os.Args[2:] {
		r, err := benchplot.Read(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		runs = append(runs, r)
	}
	f, err := os.Create(os.Args[1])
	if err == nil {
		err = benchplot.Write(f, runs)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
