package graph

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// This file holds what both stores (graph/sqlite, graph/neo4j) compute the
// same way, written once so the two cannot drift apart.

// Default and largest limits of the Store methods that page or cap results.
// Limit applies them.
const (
	// DefaultListLimit is ListTools' page size when unset; MaxListLimit
	// its largest.
	DefaultListLimit = 100
	MaxListLimit     = 1000
	// DefaultRelatedLimit is how many hits Related and LearnedPairs return
	// when unset.
	DefaultRelatedLimit = 10
	// DefaultEventsLimit is how many events ServedQueries,
	// ServedQueriesAfter and SessionHistory return when unset.
	DefaultEventsLimit = 100
	// DefaultModelVersionsLimit is how many versions ListModelVersions
	// returns when unset.
	DefaultModelVersionsLimit = 50
	// DefaultSeriesLimit is how many points SeriesPoints returns when unset.
	DefaultSeriesLimit = 10000
)

// Limit returns def when n <= 0 (the caller asked for no particular
// number), else n capped at most (most <= 0: no cap).
func Limit(n, def, most int) int {
	switch {
	case n <= 0:
		return def
	case most > 0 && n > most:
		return most
	}
	return n
}

// ValidStatus reports whether s is a tool status a store accepts.
func ValidStatus(s string) bool {
	return s == StatusActive || s == StatusDeprecated || s == StatusDisabled
}

// EntityKey is the key of the entity named name: trimmed and lower-cased,
// so names that differ only in case or surrounding space are one entity.
func EntityKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// VerbText is the full-text form of a verb: as written and split into
// lower-case words, so MAKE_RESERVATION is found by "make reservation".
func VerbText(v string) string {
	if v == "" {
		return ""
	}
	return v + " " + strings.ToLower(strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(v))
}

// CloneSummary deep-copies the slices of a summary, so a store's cached
// summary is never shared with a caller that may change it.
func CloneSummary(s ToolSummary) ToolSummary {
	c := func(xs []string) []string {
		if xs == nil {
			return nil
		}
		return append([]string(nil), xs...)
	}
	s.Tags, s.Groups, s.AvailableInStates = c(s.Tags), c(s.Groups), c(s.AvailableInStates)
	s.Permissions, s.RequiredParams, s.OptionalParams = c(s.Permissions), c(s.RequiredParams), c(s.OptionalParams)
	return s
}

// Nanos is the form both stores keep times in: Unix nanoseconds.
func Nanos(t time.Time) int64 { return t.UnixNano() }

// FromNanos is the UTC time of Unix nanoseconds n (the inverse of Nanos).
func FromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// NodeLess orders nodes by label, then key.
func NodeLess(a, b Node) bool {
	if a.Label != b.Label {
		return a.Label < b.Label
	}
	return strings.Compare(a.Key, b.Key) < 0
}

// SortSubgraph puts a subgraph in its stable order: nodes by NodeLess,
// edges by their from node, type, then to node.
func SortSubgraph(sg Subgraph) {
	sort.Slice(sg.Nodes, func(i, j int) bool { return NodeLess(sg.Nodes[i], sg.Nodes[j]) })
	sort.Slice(sg.Edges, func(i, j int) bool {
		a, b := sg.Edges[i], sg.Edges[j]
		if a.From != b.From {
			return NodeLess(a.From, b.From)
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		return NodeLess(a.To, b.To)
	})
}

// SortHits orders hits best first, ties by tool id.
func SortHits(hits []Hit) {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Tool.ID < hits[j].Tool.ID
	})
}

// ClosedGap returns g closed by the tool toolID at at: what CloseGap writes
// for an open gap. The reason it was open (a failed build, a rejection)
// no longer holds, so it goes; ClosedBy says what closed it.
func ClosedGap(g Gap, toolID string, at time.Time) Gap {
	g.Status, g.ClosedBy, g.ClosedAt, g.Reason = GapClosed, toolID, at.UTC(), ""
	return g
}

// EntityKeys is the EntityKey of each name, empty ones left out: what
// FindEntities looks up.
func EntityKeys(names []string) []string {
	keys := make([]string, 0, len(names))
	for _, n := range names {
		if k := EntityKey(n); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// CheckDefinition checks the i-th definition of a PutDefinitions call: it
// needs an id, and its status (DefinitionAvailable when empty, which it
// sets) must be valid. Errors wrap fault.ErrInvalid.
func CheckDefinition(d *Definition, i int) error {
	if d.ID == "" {
		return fmt.Errorf("definition %d has no id: %w", i, fault.ErrInvalid)
	}
	if d.Status == "" {
		d.Status = DefinitionAvailable
	}
	if !ValidDefinitionStatus(d.Status) {
		return fmt.Errorf("%s: status %q: %w", d.ID, d.Status, fault.ErrInvalid)
	}
	return nil
}

// CompactStep is one step of CompactSeries: the points of resolution From
// before Before are rolled up into resolution To (none when To is "") and
// then removed.
type CompactStep struct {
	From, To string
	Before   time.Time
}

// CompactSteps are the steps of CompactSeries at now under r, finest
// resolution first; a resolution kept forever (a zero or negative
// duration) has none. Only whole buckets of the coarser resolution roll
// up, so a later compaction never splits one.
func CompactSteps(now time.Time, r Retention) []CompactStep {
	var steps []CompactStep
	for _, s := range []struct {
		from, to string
		keep     time.Duration
	}{{ResMinute, ResHour, r.Minutes}, {ResHour, ResDay, r.Hours}, {ResDay, "", r.Days}} {
		if s.keep <= 0 {
			continue
		}
		before := now.Add(-s.keep)
		if s.to != "" {
			before = Truncate(before, s.to)
		}
		steps = append(steps, CompactStep{From: s.from, To: s.to, Before: before})
	}
	return steps
}

// ModuleOf names the module a tool belongs to: its manifest's module, or,
// for a tool that names none (an airlock-onboarded wrapper such as
// xkcd.get_info_0_json, or a tool registered without one), its namespace,
// the part of its id before the first "." (xkcd). A tool whose id has no
// namespace belongs to no module (""). It is the one rule for a
// module-limited caller (access.ModuleOf), for Filter.Modules (each store
// renders it in its query language: sqlite.moduleSQL, neo4j's
// filterWhere) and for every listing or count of modules.
func ModuleOf(t *ToolSummary) string {
	if t.Module != "" {
		return t.Module
	}
	if ns, _, ok := strings.Cut(t.ID, "."); ok {
		return ns
	}
	return ""
}
