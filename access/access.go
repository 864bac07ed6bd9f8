// Package access decides which tools a caller may see and execute. It joins
// three rules: permissions (public, authenticated, role:X, permission:X),
// levels and allowed modules (guest < user < admin < owner), and groups and
// states (default group, "*" wildcard, empty list = no tools,
// available_in_states). A caller never sees a tool it cannot
// execute, so every read path (search, manifest, related, index, execution)
// filters through Caller.Allows.
package access

import (
	"slices"
	"strings"

	"github.com/toolsmith/toolsmith/graph"
)

// Group and state defaults: a tool that names no group is in DefaultGroup,
// a caller with no state is in DefaultState, and Wildcard grants every group.
const (
	DefaultGroup = "default"
	DefaultState = "undefined"
	Wildcard     = "*"
)

// Levels lists permission levels in ascending order.
var Levels = []string{"guest", "user", "admin", "owner"}

// LevelRank returns the rank of a level; unknown or empty levels rank as guest (0).
func LevelRank(level string) int {
	if i := slices.Index(Levels, strings.ToLower(strings.TrimSpace(level))); i >= 0 {
		return i
	}
	return 0
}

// TeachLevel is the lowest level whose uses teach the shared learned data:
// a reported use (retrieval.Report) and a pairing of two tools used
// together in a caller's session or plan. A guest's runs are still
// recorded (success rate, latency), but teach no one else's ranking.
const TeachLevel = "user"

// MayTeach reports whether a caller of level may teach the shared learned
// data (TeachLevel and above). It is the one rule for it: the report
// routes and the pairings learned from runs both apply it.
func MayTeach(level string) bool { return LevelRank(level) >= LevelRank(TeachLevel) }

// Caller is who asks, with everything that decides visibility. The zero value
// is an anonymous guest in the default group and the undefined state.
type Caller struct {
	UserID      string   `json:"userId,omitempty"`
	SessionID   string   `json:"sessionId,omitempty"`
	Roles       []string `json:"roles,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
	// Level is guest, user, admin or owner; empty means guest.
	Level string `json:"level,omitempty"`
	// Groups are the tool groups the request allows. Nil means ["default"];
	// an empty non-nil slice means no tools at all; "*" means every group.
	Groups []string `json:"groups"`
	// State is the agent state; empty means "undefined".
	State string `json:"state,omitempty"`
	// AllowedModules, when non-nil, restricts the caller to the tools of
	// those modules (a persona filter), each tool's module as ModuleOf
	// names it; an empty non-nil list admits no tool.
	AllowedModules []string `json:"allowedModules"`
}

// Authenticated reports whether the caller is identified.
func (c Caller) Authenticated() bool { return c.UserID != "" }

// EffectiveGroups returns the groups after defaults.
func (c Caller) EffectiveGroups() []string {
	if c.Groups == nil {
		return []string{DefaultGroup}
	}
	return c.Groups
}

// EffectiveState returns the state after defaults.
func (c Caller) EffectiveState() string {
	if c.State == "" {
		return DefaultState
	}
	return c.State
}

// Reason says why a tool is hidden; "" means it is visible.
func (c Caller) Reason(t *graph.ToolSummary) string {
	if !c.permitted(t.Permissions) {
		return "permissions"
	}
	if LevelRank(c.Level) < LevelRank(t.RequiredLevel) {
		return "level"
	}
	if c.AllowedModules != nil && !slices.Contains(c.AllowedModules, ModuleOf(t)) {
		return "module"
	}
	if !c.inGroups(t.Groups) {
		return "group"
	}
	if !c.inState(t.AvailableInStates) {
		return "state"
	}
	return ""
}

// ModuleOf names the module a tool belongs to for a module-limited
// caller: graph.ModuleOf, its manifest's module or, for a tool that names
// none (an airlock-onboarded wrapper such as xkcd.get_info_0_json, or a
// tool registered without one), its namespace, the part of its id before
// the first "." (xkcd). A tool whose id has no namespace belongs to no
// module ("") and no module-limited caller sees it. Filter.Modules and the
// module listings use the same rule.
func ModuleOf(t *graph.ToolSummary) string { return graph.ModuleOf(t) }

// Allows reports whether the caller may see and execute the tool.
func (c Caller) Allows(t *graph.ToolSummary) bool { return c.Reason(t) == "" }

// Filter returns a graph.Filter whose Allow applies this caller's visibility.
func (c Caller) Filter() graph.Filter {
	return graph.Filter{Allow: c.Allows}
}

// permitted: "public" grants access at once; every other
// requirement must hold. No requirement at all means public.
func (c Caller) permitted(required []string) bool {
	for _, p := range required {
		switch {
		case p == "public":
			return true
		case p == "authenticated":
			if !c.Authenticated() {
				return false
			}
		case strings.HasPrefix(p, "role:"):
			if !slices.Contains(c.Roles, strings.TrimPrefix(p, "role:")) {
				return false
			}
		case strings.HasPrefix(p, "permission:"):
			if !slices.Contains(c.Permissions, strings.TrimPrefix(p, "permission:")) {
				return false
			}
		case strings.HasPrefix(p, AnyPrefix):
			if !c.anyOf(strings.TrimPrefix(p, AnyPrefix)) {
				return false
			}
		default:
			// An unknown requirement cannot be satisfied: hide rather than leak.
			return false
		}
	}
	return true
}

// AnyPrefix starts a requirement met by any one of its "|"-separated
// alternatives, each "role:X" or "user:X": an airlock approval's allowed
// roles and users become one, so reads hide such a tool from
// exactly the callers its execution refuses.
const AnyPrefix = "any:"

// AnyOf builds an AnyPrefix requirement from roles and users; "" when both
// are empty.
func AnyOf(roles, users []string) string {
	var alts []string
	for _, r := range roles {
		alts = append(alts, "role:"+r)
	}
	for _, u := range users {
		alts = append(alts, "user:"+u)
	}
	if len(alts) == 0 {
		return ""
	}
	return AnyPrefix + strings.Join(alts, "|")
}

func (c Caller) anyOf(alts string) bool {
	for _, a := range strings.Split(alts, "|") {
		switch {
		case strings.HasPrefix(a, "role:"):
			if slices.Contains(c.Roles, strings.TrimPrefix(a, "role:")) {
				return true
			}
		case strings.HasPrefix(a, "user:"):
			if u := strings.TrimPrefix(a, "user:"); c.UserID != "" && u == c.UserID {
				return true
			}
		}
	}
	return false
}

func (c Caller) inGroups(toolGroups []string) bool {
	req := c.EffectiveGroups()
	if slices.Contains(req, Wildcard) {
		return true
	}
	if len(toolGroups) == 0 {
		toolGroups = []string{DefaultGroup}
	}
	for _, g := range toolGroups {
		if slices.Contains(req, g) {
			return true
		}
	}
	return false
}

func (c Caller) inState(states []string) bool {
	if len(states) == 0 || slices.Contains(states, Wildcard) {
		return true
	}
	return slices.Contains(states, c.EffectiveState())
}

// Hash is a stable digest of everything that decides visibility, for cache
// keys: two callers with the same Hash see the same tools.
func (c Caller) Hash() string {
	var b strings.Builder
	write := func(name string, vals []string) {
		s := slices.Clone(vals)
		slices.Sort(s)
		b.WriteString(name)
		b.WriteString("=")
		b.WriteString(strings.Join(s, ","))
		b.WriteString(";")
	}
	auth := "anon"
	if c.Authenticated() {
		auth = "auth"
	}
	b.WriteString(auth + ";level=" + Levels[LevelRank(c.Level)] + ";state=" + c.EffectiveState() + ";")
	write("roles", c.Roles)
	write("perms", c.Permissions)
	if c.Groups == nil {
		b.WriteString("groups=<default>;")
	} else {
		write("groups", c.Groups)
	}
	if c.AllowedModules == nil {
		b.WriteString("modules=<any>;")
	} else {
		write("modules", c.AllowedModules)
	}
	return b.String()
}
