package fulfil

import (
	"context"
	"slices"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/workflows"
)

// redactVerb returns the tool ids hidden from caller and trims a novel-verb run's record to what caller may see: an
// admin reading another caller's run sees no candidate, closest tool,
// executed tool or reason text naming a tool it may not execute (nor that
// tool's arguments and output); an owner sees the whole record.
func (h *Service) redactVerb(ctx context.Context, caller access.Caller, res *workflows.NovelVerbResult, p *workflows.Progress) (map[string]bool, error) {
	if caller.SeesEveryTool() {
		return nil, nil
	}
	var ids []string
	if res != nil {
		for _, s := range res.Scores {
			ids = append(ids, s.ToolID)
		}
		ids = append(ids, res.Tools...)
		for _, s := range res.Steps {
			ids = append(ids, s.ToolID)
		}
		if j := res.Judge; j != nil {
			ids = append(append(ids, j.RulePick, j.ModelPick), j.Offered...)
		}
		if a := res.Airlock; a != nil {
			ids = append(ids, a.ToolIDs...)
		}
	}
	if p != nil {
		ids = append(ids, p.Tools...)
	}
	var getter access.ToolGetter
	if h.tools != nil {
		getter = h.tools
	}
	hidden, err := access.HiddenIDs(ctx, getter, ids, caller)
	if err != nil || len(hidden) == 0 {
		return hidden, err
	}
	drop := func(list []string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(id string) bool { return hidden[id] })
	}
	// Reasons name a tool as "id (VERB)": a hidden tool's verb goes with
	// its id.
	named := map[string]bool{}
	var scores []workflows.ScoredTool
	if res != nil {
		scores = res.Scores
	}
	for _, sc := range scores {
		if hidden[sc.ToolID] && sc.Verb != "" {
			named[sc.ToolID+" ("+sc.Verb+")"] = true
		}
	}
	text := func(s string) string { return access.RedactText(access.RedactText(s, named), hidden) }
	if p != nil {
		p.Tools, p.Error = drop(p.Tools), text(p.Error)
	}
	if res == nil {
		return hidden, nil
	}
	res.Scores = slices.DeleteFunc(res.Scores, func(s workflows.ScoredTool) bool { return hidden[s.ToolID] })
	if slices.ContainsFunc(res.Tools, func(id string) bool { return hidden[id] }) {
		// What a hidden tool was given and answered is its own.
		res.Arguments, res.Renamed, res.Output = nil, nil, nil
	}
	res.Tools = drop(res.Tools)
	for i := range res.Steps {
		s := &res.Steps[i]
		if hidden[s.ToolID] {
			s.ToolID, s.Inputs, s.Output = "", nil, nil
		}
		s.Error = text(s.Error)
	}
	if j := res.Judge; j != nil {
		if hidden[j.RulePick] {
			j.RulePick = ""
		}
		if hidden[j.ModelPick] {
			j.ModelPick = ""
		}
		j.Offered, j.Reason = drop(j.Offered), text(j.Reason)
	}
	if a := res.Airlock; a != nil {
		a.ToolIDs = drop(a.ToolIDs)
	}
	if b := res.Build; b != nil {
		b.Reason = text(b.Reason)
	}
	res.Reason, res.Error, res.GapRecorded = text(res.Reason), text(res.Error), text(res.GapRecorded)
	return hidden, nil
}
