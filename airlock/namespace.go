package airlock

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/tool"
)

// ToolLister is what ForeignTools reads of the catalogue.
type ToolLister interface {
	ListTools(ctx context.Context, q graph.ListQuery) (graph.ToolPage, error)
	GetTool(ctx context.Context, id string) (graph.Tool, error)
}

// ForeignTools lists, in id order, the catalogue's tools of any status
// whose ids are "<name>.<…>" and that the spec at location did not
// register: a module's or a person's tools, or another spec's. An approval
// registers its tools by id and deprecates the namespace's others, so
// approving a spec whose wrapper name such tools hold would replace or
// retire tools that are not its own; the approval is refused instead.
// A tool this spec onboarded before (a re-approval) is its own.
func ForeignTools(ctx context.Context, st ToolLister, name, location string) ([]string, error) {
	prefix := name + "."
	own := specURL(location)
	var out []string
	for after := prefix; ; {
		page, err := st.ListTools(ctx, graph.ListQuery{After: after, Limit: 500,
			Filter: graph.Filter{Statuses: []string{graph.StatusActive, graph.StatusDeprecated, graph.StatusDisabled}}})
		if err != nil {
			return nil, fmt.Errorf("airlock: tools named %s*: %w", prefix, err)
		}
		done := page.Next == ""
		for _, t := range page.Items {
			if !strings.HasPrefix(t.ID, prefix) {
				done = true
				break
			}
			full, err := st.GetTool(ctx, t.ID)
			if err != nil {
				return nil, fmt.Errorf("airlock: tool %s: %w", t.ID, err)
			}
			var m struct {
				Source *tool.Source `json:"source"`
			}
			_ = json.Unmarshal(full.Manifest, &m) // an unreadable manifest is not this spec's
			if m.Source == nil || m.Source.Origin != "openapi" || m.Source.SpecURL != own {
				out = append(out, t.ID)
			}
		}
		if done || page.Next == "" {
			return out, nil
		}
		after = page.Next
	}
}
