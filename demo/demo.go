// Package demo holds Toolsmith's demo catalogue: about a hundred realistic
// tool manifests under catalog/ (one JSON array per module or domain),
// embedded in the binary, and Load, which registers them on first start and
// is a no-op on later starts.
//
// The catalogue covers every standard module (research, file_manager,
// code_executor, knowledge, atlassian, claude_code, deployer, scheduler,
// garmin, renpho_biometrics, location, git_platform, project_planner,
// injective) with their permission levels, the agent tools with
// their groups and states, and everyday domains — currency exchange,
// airline, restaurant, hotel and car reservations, weather, units and time
// zones, e-mail and calendar — written so that entities, not luck, tell
// tools with the same verb apart (airline.book_seat and
// restaurant.reserve_table are both MAKE_RESERVATION).
package demo

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/registry"
	"github.com/toolsmith/toolsmith/tool"
)

//go:embed catalog/*.json
var catalog embed.FS

// entry is one manifest of the catalogue with where it comes from.
type entry struct {
	file  string
	index int
	raw   json.RawMessage
}

func (e entry) where() string { return fmt.Sprintf("%s[%d]", e.file, e.index) }

// entries reads every catalogue file, in file-name order.
func entries(fsys fs.FS) ([]entry, error) {
	files, err := fs.Glob(fsys, "catalog/*.json")
	if err != nil {
		return nil, fmt.Errorf("demo: list catalogue: %w", err)
	}
	sort.Strings(files)
	var out []entry
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("demo: read %s: %w", f, err)
		}
		var items []json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&items); err != nil {
			return nil, fmt.Errorf("demo: %s: must be a JSON array of manifests: %w", f, err)
		}
		for i, raw := range items {
			out = append(out, entry{file: path.Base(f), index: i, raw: raw})
		}
	}
	return out, nil
}

// Manifests parses, normalizes and validates the whole catalogue. An error
// names the file and index of every bad manifest.
func Manifests() ([]tool.Manifest, error) {
	return manifests(catalog)
}

func manifests(fsys fs.FS) ([]tool.Manifest, error) {
	es, err := entries(fsys)
	if err != nil {
		return nil, err
	}
	var (
		out  []tool.Manifest
		errs []error
	)
	for _, e := range es {
		m, err := tool.Parse(e.raw)
		if err == nil {
			tool.Normalize(&m)
			err = tool.Validate(&m)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("demo: %s: %w", e.where(), err))
			continue
		}
		out = append(out, m)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// Load registers the catalogue through svc with upsert: a fresh store gets
// every tool, a store that already holds them is left unchanged (nothing is
// re-embedded or rewritten), edited demo manifests are updated, and demo
// tools an operator deprecated or disabled are left alone. Progress
// lines go to progress when it is not nil. It returns how many catalogue
// tools are in the store afterwards and an error listing the items that
// failed, if any.
func Load(ctx context.Context, svc *registry.Service, progress io.Writer) (n int, err error) {
	return load(ctx, catalog, svc, progress)
}

func load(ctx context.Context, fsys fs.FS, svc *registry.Service, progress io.Writer) (int, error) {
	es, err := entries(fsys)
	if err != nil {
		return 0, err
	}
	// A demo tool an operator deprecated or disabled stays so: reloading
	// the catalogue must not undo that decision.
	var (
		reqs []registry.Request
		idx  []int // catalogue index of each request
		kept int
	)
	for i, e := range es {
		var head struct {
			ToolID string `json:"toolId"`
		}
		if json.Unmarshal(e.raw, &head) == nil && head.ToolID != "" {
			if t, err := svc.Get(ctx, head.ToolID); err == nil && t.Status != graph.StatusActive {
				kept++
				continue
			}
		}
		reqs = append(reqs, registry.Request{Manifest: e.raw})
		idx = append(idx, i)
	}
	opts := registry.BatchOptions{Upsert: true}
	if progress != nil {
		opts.Progress = func(done, total int) {
			if done%25 == 0 || done == total {
				fmt.Fprintf(progress, "demo: %d/%d tools\n", done, total)
			}
		}
	}
	results := svc.BatchRegister(ctx, reqs, opts)
	counts := map[string]int{}
	var errs []error
	for _, r := range results {
		counts[r.Status]++
		if r.Status == registry.StatusFailed {
			msg := "unknown error"
			if r.Error != nil {
				msg = r.Error.Message
			}
			errs = append(errs, fmt.Errorf("demo: %s (%s): %s", es[idx[r.Index]].where(), r.ToolID, msg))
		}
	}
	n := len(results) - counts[registry.StatusFailed] + kept
	if progress != nil {
		fmt.Fprintf(progress, "demo: catalogue loaded: %d created, %d updated, %d unchanged, %d kept inactive, %d failed\n",
			counts[registry.StatusCreated], counts[registry.StatusUpdated], counts[registry.StatusUnchanged], kept, counts[registry.StatusFailed])
	}
	if len(errs) > 0 {
		return n, errors.Join(errs...)
	}
	return n, nil
}
