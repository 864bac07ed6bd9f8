// Package airlock onboards external tools: no external API
// runs without a person's approval, and an approved one runs only through a
// generated, tested wrapper under the policies the reviewer set. This
// package holds the approval policy, the conversion of a spec's operations
// into tool manifests, the guarded execution of built wrappers (rate limit,
// daily quota, cost budget, access), and the corpus check behind
// `toolsmith airlock check`.
package airlock

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/internal/fault"
	"github.com/toolsmith/toolsmith/tool"
)

// Policy is what a reviewer sets when approving a spec.
type Policy struct {
	// RateLimitPerMinute caps calls per minute across the spec's tools (0 = no cap).
	RateLimitPerMinute int `json:"rateLimitPerMinute,omitempty"`
	// QuotaPerDay caps calls per UTC day (0 = no cap).
	QuotaPerDay int `json:"quotaPerDay,omitempty"`
	// CostPerCall is charged for every call that reaches the API.
	CostPerCall float64 `json:"costPerCall,omitempty"`
	// SoftBudget raises a notification once spent; HardBudget refuses calls
	// that would exceed it (0 = none).
	SoftBudget float64 `json:"softBudget,omitempty"`
	HardBudget float64 `json:"hardBudget,omitempty"`
	// AllowedUsers and AllowedRoles, when set, restrict who may execute
	// (any listed user, or any caller with a listed role).
	AllowedUsers []string `json:"allowedUsers,omitempty"`
	AllowedRoles []string `json:"allowedRoles,omitempty"`
	// AllowedGroups become the tools' groups (default ["default"]).
	AllowedGroups []string `json:"allowedGroups,omitempty"`
	// Operations restricts onboarding to these tool names, operationIds or
	// tags (empty = all that pass preflight).
	Operations []string `json:"operations,omitempty"`
	// BaseURL overrides the spec's first server; the wrapper calls only its host.
	BaseURL string `json:"baseUrl,omitempty"`
	// Credential names the secret the wrapper sends (read from the
	// environment variable Env of the Toolsmith process at call time).
	Credential *kit.CredentialRef `json:"credential,omitempty"`
	// RequiredLevel is the minimum permission level (default "user").
	RequiredLevel string `json:"requiredLevel,omitempty"`
}

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// Validate checks a policy; every problem names its field.
func (p Policy) Validate() error {
	v := &fault.ValidationError{}
	if p.RateLimitPerMinute < 0 {
		v.Add("rateLimitPerMinute", "must be ≥ 0")
	}
	if p.QuotaPerDay < 0 {
		v.Add("quotaPerDay", "must be ≥ 0")
	}
	if p.CostPerCall < 0 {
		v.Add("costPerCall", "must be ≥ 0")
	}
	if p.SoftBudget < 0 {
		v.Add("softBudget", "must be ≥ 0")
	}
	if p.HardBudget < 0 {
		v.Add("hardBudget", "must be ≥ 0")
	}
	if p.HardBudget > 0 && p.SoftBudget > p.HardBudget {
		v.Add("softBudget", "must not exceed hardBudget (%g)", p.HardBudget)
	}
	if (p.SoftBudget > 0 || p.HardBudget > 0) && p.CostPerCall == 0 {
		v.Add("costPerCall", "must be set when a budget is set")
	}
	// Roles and users become the tools' any:role:…|user:… requirement: one
	// the manifest check would refuse is refused here, while the review
	// is still pending, not after onboarding fails on it ("|" would
	// smuggle in another alternative).
	for i, r := range p.AllowedRoles {
		if strings.Contains(r, "|") || !tool.ValidPermission(access.AnyOf([]string{r}, nil)) {
			v.Add(fmt.Sprintf("allowedRoles[%d]", i), "must be a role name of letters, digits and _ . : @ -, got %q", r)
		}
	}
	for i, u := range p.AllowedUsers {
		if strings.Contains(u, "|") || !tool.ValidPermission(access.AnyOf(nil, []string{u})) {
			v.Add(fmt.Sprintf("allowedUsers[%d]", i), "must be a user id of letters, digits and _ . : @ -, got %q", u)
		}
	}
	for i, g := range p.AllowedGroups {
		if strings.TrimSpace(g) == "" {
			v.Add(fmt.Sprintf("allowedGroups[%d]", i), "must not be empty")
		}
	}
	if p.BaseURL != "" {
		if _, err := kit.HostOf(p.BaseURL); err != nil {
			v.Add("baseUrl", "%v", err)
		}
	}
	if c := p.Credential; c != nil {
		if !slices.Contains([]string{"bearer", "header", "query", "basic"}, c.Kind) {
			v.Add("credential.kind", "must be bearer, header, query or basic")
		}
		if (c.Kind == "header" || c.Kind == "query") && c.Name == "" {
			v.Add("credential.name", "is required for kind %s", c.Kind)
		}
		if !envName.MatchString(c.Env) {
			v.Add("credential.env", "must name an environment variable (A-Z, 0-9, _)")
		}
	}
	if p.RequiredLevel != "" && !slices.Contains(access.Levels, p.RequiredLevel) {
		v.Add("requiredLevel", "must be one of %s", strings.Join(access.Levels, ", "))
	}
	return v.Err()
}

// ValidateOperations checks the policy's operations against the review's:
// each must name an operation by tool name, operationId or tag (the rule
// the wrapper's generation applies, kit.Tool.Named). A name that matches
// nothing is a ValidationError on operations[i] listing the valid names, so
// a typo is refused before the decision is taken, not after onboarding
// fails.
func (p Policy) ValidateOperations(ops []ReviewOperation) error {
	v := &fault.ValidationError{}
	for i, want := range p.Operations {
		found := false
		for _, o := range ops {
			if (kit.Tool{Name: o.Name, OperationID: o.OperationID, Tags: o.Tags}).Named(want) {
				found = true
				break
			}
		}
		if !found {
			v.Add(fmt.Sprintf("operations[%d]", i), "no operation, operationId or tag is named %q; valid names: %s", want, strings.Join(operationNames(ops), ", "))
		}
	}
	return v.Err()
}

// operationNames lists what a policy's operations may name: each
// operation's tool name and operationId, then the tags, each once, sorted.
func operationNames(ops []ReviewOperation) []string {
	var names, tags []string
	for _, o := range ops {
		names = append(names, o.Name)
		if o.OperationID != "" && o.OperationID != o.Name {
			names = append(names, o.OperationID)
		}
		tags = append(tags, o.Tags...)
	}
	slices.Sort(names)
	slices.Sort(tags)
	names = slices.Compact(names)
	for _, t := range slices.Compact(tags) {
		if !slices.Contains(names, t) {
			names = append(names, t+" (tag)")
		}
	}
	if len(names) == 0 {
		return []string{"(none: the review lists no operations)"}
	}
	return names
}

// Permits reports whether the caller may execute a tool under this policy
// (the visibility rules of package access apply on top).
func (p Policy) Permits(c access.Caller) bool {
	if len(p.AllowedUsers) == 0 && len(p.AllowedRoles) == 0 {
		return true
	}
	if c.UserID != "" && slices.Contains(p.AllowedUsers, c.UserID) {
		return true
	}
	for _, r := range c.Roles {
		if slices.Contains(p.AllowedRoles, r) {
			return true
		}
	}
	return false
}
