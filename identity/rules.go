package identity

import (
	"fmt"
	"strings"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Rule says who may use a route or an MCP tool. It is data: the edges keep
// tables of (route, Rule) that their routers read, and a test fails when a
// route has none. Tool-level visibility (permissions, groups, states) is
// applied on top by package access.
type Rule struct {
	// Name is how documentation and errors call the rule.
	Name string `json:"name"`
	// Anonymous admits every caller, with or without a credential.
	Anonymous bool `json:"anonymous,omitempty"`
	// Otherwise an authenticated principal is needed, and, when any of the
	// three is set, at least one of: a level at or above MinLevel, one of
	// Roles, one of Permissions.
	MinLevel    string   `json:"minLevel,omitempty"`
	Roles       []string `json:"roles,omitempty"`
	Permissions []string `json:"permissions,omitempty"`
}

// The rules the edges share. Keep them few: a new route should fit one.
var (
	// RulePublic: anyone; what they see is still filtered per tool.
	RulePublic = Rule{Name: "public", Anonymous: true}
	// RuleAuthenticated: any caller with a valid credential.
	RuleAuthenticated = Rule{Name: "authenticated"}
	// RuleAdmin: level admin or owner.
	RuleAdmin = Rule{Name: "admin", MinLevel: "admin"}
	// RuleOwner: level owner.
	RuleOwner = Rule{Name: "owner", MinLevel: "owner"}
	// RuleToolsWrite: admin, or permission tools:write.
	RuleToolsWrite = Rule{Name: "tools:write", MinLevel: "admin", Permissions: []string{"tools:write"}}
	// RuleApprover: admin, or role approver.
	RuleApprover = Rule{Name: "approver", MinLevel: "admin", Roles: []string{"approver"}}
	// RuleMetrics: admin, or permission metrics:read (a scraper's key).
	RuleMetrics = Rule{Name: "metrics:read", MinLevel: "admin", Permissions: []string{"metrics:read"}}
)

// sharedRules are the rules above that a level passes by itself, read by
// the delegation rule of key creation.
var sharedRules = []Rule{RuleAdmin, RuleOwner, RuleToolsWrite, RuleApprover, RuleMetrics}

// Check returns nil when p may pass, fault.ErrUnauthenticated when a
// credential is needed and p has none, and fault.ErrForbidden when p's
// credential is not enough; both errors say what the rule asks for.
func (r Rule) Check(p Principal) error {
	if r.Anonymous {
		return nil
	}
	if !p.Authenticated() {
		return fmt.Errorf("this needs a credential (Authorization: Bearer <key>) %s: %w", r.describe(), fault.ErrUnauthenticated)
	}
	if r.MinLevel == "" && len(r.Roles) == 0 && len(r.Permissions) == 0 {
		return nil
	}
	if r.MinLevel != "" && p.AtLeast(r.MinLevel) {
		return nil
	}
	for _, role := range r.Roles {
		if p.HasRole(role) {
			return nil
		}
	}
	for _, perm := range r.Permissions {
		if p.HasPermission(perm) {
			return nil
		}
	}
	return fmt.Errorf("%s (level %s) may not do this: it needs %s: %w", p.display(), p.Level, r.describe(), fault.ErrForbidden)
}

// describe says what the rule asks for, in words.
func (r Rule) describe() string {
	var any []string
	if r.MinLevel != "" {
		any = append(any, "level "+r.MinLevel+" or above")
	}
	for _, role := range r.Roles {
		any = append(any, "role "+role)
	}
	for _, perm := range r.Permissions {
		any = append(any, "permission "+perm)
	}
	if len(any) == 0 {
		return "(any authenticated caller)"
	}
	return strings.Join(any, " or ")
}

func (p Principal) display() string {
	if p.Name != "" && p.Name != p.Subject {
		return fmt.Sprintf("%s (%s)", p.Subject, p.Name)
	}
	return p.Subject
}
