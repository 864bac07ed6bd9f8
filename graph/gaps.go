package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Gap statuses.
const (
	GapOpen   = "open"
	GapClosed = "closed"
)

// ParseGapStatus reads a gap listing's status filter as GET /gaps and the
// console's gaps page take it: open or closed, or all (returned as "",
// both). Anything else is a fault.ErrMalformed error naming status.
func ParseGapStatus(v string) (string, error) {
	switch v {
	case GapOpen, GapClosed:
		return v, nil
	case "all":
		return "", nil
	}
	return "", fault.Malformed("status", "must be open, closed or all, got %q", v)
}

// Gap is a verb that nothing fulfilled: the (Gap) node. Each unfulfilled
// run of the verb counts; a tool registered later for the verb closes it
// (COVERED_BY that tool).
type Gap struct {
	Verb        string `json:"verb"`
	Description string `json:"description,omitempty"`
	// Count is how many runs of the verb ended unfulfilled.
	Count     int       `json:"count"`
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	// Closest are the best tools the last unfulfilled run found, with the
	// similarity that fell short.
	Closest []GapCandidate `json:"closest"`
	// Entities are the catalogue's entities the verb's requests mention.
	Entities []string `json:"entities"`
	Status   string   `json:"status"`
	// Reason is why the gap is (still) open, as the last run or build that
	// left it open said (e.g. "build needs a model", a reviewer's
	// rejection of a built tool).
	Reason string `json:"reason,omitempty"`
	// ClosedBy is the tool that covered the gap, ClosedAt when.
	ClosedBy string    `json:"closedBy,omitempty"`
	ClosedAt time.Time `json:"closedAt,omitzero"`
}

// GapCandidate is a tool that came close to fulfilling a gap's verb.
type GapCandidate struct {
	ToolID string  `json:"toolId"`
	Score  float64 `json:"score"`
}

// GapEvent is one unfulfilled run of a verb.
type GapEvent struct {
	Verb        string
	Description string
	Closest     []GapCandidate
	Entities    []string
	At          time.Time
	// Reason, when set, replaces the gap's reason.
	Reason string
	// NoteOnly records Reason on an existing gap without counting a run:
	// count, last seen, closest tools, entities and status are kept (a
	// build's outcome is a note on the gap, not another unfulfilled ask).
	NoteOnly bool
}

// GapQuery filters ListGaps.
type GapQuery struct {
	// Status is GapOpen, GapClosed or "" for both.
	Status string
	// Limit bounds the answer (default 100).
	Limit int
}

// Gaps stores capability gaps. It is part of Store.
type Gaps interface {
	// RecordGap counts one unfulfilled run of e.Verb: it creates the gap or
	// updates it (count, last seen, latest description and closest tools,
	// the union of entities) and reopens a closed one. Verb is required
	// (fault.ErrInvalid).
	RecordGap(ctx context.Context, e GapEvent) (Gap, error)
	// ListGaps lists gaps, the most frequent first (ties: latest first).
	ListGaps(ctx context.Context, q GapQuery) ([]Gap, error)
	// CloseGap closes the open gap of verb, linking it to the tool that
	// covers it; it reports whether there was one to close.
	CloseGap(ctx context.Context, verb, toolID string, at time.Time) (bool, error)
}

// MaxGapEntities bounds a gap's entities; MaxGapClosest its closest tools.
const (
	MaxGapEntities = 20
	MaxGapClosest  = 5
)

// ValidateGapEvent checks an event before a store opens a transaction for
// it: the verb is required (fault.ErrInvalid).
func ValidateGapEvent(e GapEvent) error {
	if strings.TrimSpace(e.Verb) == "" {
		return fmt.Errorf("gap: verb is required: %w", fault.ErrInvalid)
	}
	return nil
}

// MergeGap applies one event to a gap (the zero Gap for a new verb): the
// one rule both stores follow.
func MergeGap(g Gap, e GapEvent) (Gap, error) {
	e.Verb = strings.TrimSpace(e.Verb)
	if e.Verb == "" {
		return Gap{}, fmt.Errorf("gap: verb is required: %w", fault.ErrInvalid)
	}
	at := e.At.UTC()
	if at.IsZero() {
		at = time.Now().UTC()
	}
	if g.Verb == "" {
		g = Gap{Verb: e.Verb, FirstSeen: at, LastSeen: at, Closest: []GapCandidate{}, Entities: []string{}, Status: GapOpen}
		if e.NoteOnly {
			return g, fmt.Errorf("gap: no gap for %s to note on: %w", e.Verb, fault.ErrNotFound)
		}
	}
	if r := strings.TrimSpace(e.Reason); r != "" {
		g.Reason = r
	}
	if e.NoteOnly {
		return g, nil
	}
	g.Count++
	if at.After(g.LastSeen) {
		g.LastSeen = at
	}
	if at.Before(g.FirstSeen) {
		g.FirstSeen = at
	}
	if d := strings.TrimSpace(e.Description); d != "" {
		g.Description = d
	}
	if e.Closest != nil {
		// Closest first: a run lists its candidates in ranking order, whose
		// scores (the similarity) need not descend; ties by id, so the list
		// is the same whatever order they came in.
		closest := slices.Clone(e.Closest)
		slices.SortStableFunc(closest, func(a, b GapCandidate) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return strings.Compare(a.ToolID, b.ToolID)
		})
		g.Closest = closest[:min(len(closest), MaxGapClosest)]
	}
	seen := map[string]bool{}
	for _, x := range g.Entities {
		seen[strings.ToLower(x)] = true
	}
	for _, x := range e.Entities {
		if x = strings.TrimSpace(x); x != "" && !seen[strings.ToLower(x)] && len(g.Entities) < MaxGapEntities {
			seen[strings.ToLower(x)] = true
			g.Entities = append(g.Entities, x)
		}
	}
	g.Status, g.ClosedBy, g.ClosedAt = GapOpen, "", time.Time{}
	return g, nil
}

// ValidateGapQuery checks a query and applies its default limit.
func ValidateGapQuery(q GapQuery) (GapQuery, error) {
	switch q.Status {
	case "", GapOpen, GapClosed:
	default:
		return q, fmt.Errorf("gap query: status must be %q, %q or empty, got %q: %w", GapOpen, GapClosed, q.Status, fault.ErrInvalid)
	}
	if q.Limit <= 0 {
		q.Limit = 100
	}
	return q, nil
}
