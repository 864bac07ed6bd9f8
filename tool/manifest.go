// Package tool holds Toolsmith's tool manifest: the one Go model covering
// retrieval metadata, module routing, groups and states, schemas and
// examples, entities and relationships, and provenance; its validation; and
// its projection onto the graph store's records.
package tool

import (
	"encoding/json"
)

// Permission levels, lowest first.
const (
	LevelGuest = "guest"
	LevelUser  = "user"
	LevelAdmin = "admin"
	LevelOwner = "owner"
)

// Levels lists the permission levels in ascending order.
var Levels = []string{LevelGuest, LevelUser, LevelAdmin, LevelOwner}

// Complexity values.
const (
	ComplexityLow    = "low"
	ComplexityMedium = "medium"
	ComplexityHigh   = "high"
)

// DefaultGroup is the group of a tool that names none.
const DefaultGroup = "default"

// Manifest describes one tool. JSON names are camelCase.
type Manifest struct {
	// ToolID is the unique id. For module tools it is "module.tool".
	ToolID string `json:"toolId"`
	// Verb is the action verb the tool provides, UPPER_SNAKE (e.g. CONVERT_CURRENCY).
	Verb string `json:"verb"`
	// Name is a human-readable title.
	Name string `json:"name"`
	// Description is the full description the LLM and the indexes see.
	Description string `json:"description"`
	// ShortDescription (≤ 100 chars) is derived from Description when empty.
	ShortDescription string `json:"shortDescription,omitempty"`
	// Explanation and InputGuidance are optional extra text.
	Explanation   string   `json:"explanation,omitempty"`
	InputGuidance string   `json:"inputGuidance,omitempty"`
	Category      string   `json:"category"`
	Tags          []string `json:"tags,omitempty"`
	// Groups defaults to ["default"].
	Groups []string `json:"groups,omitempty"`
	// State is the agent state a successful execution moves to.
	State string `json:"state,omitempty"`
	// AvailableInStates lists the states the tool is available in; empty = all.
	AvailableInStates []string `json:"availableInStates,omitempty"`
	// PermissionsRequired: "public", "authenticated", "role:X", "permission:X".
	PermissionsRequired []string `json:"permissionsRequired,omitempty"`
	// RequiredPermission is the minimum level: guest < user < admin < owner.
	RequiredPermission string `json:"requiredPermission,omitempty"`
	// Module routes execution: POST {moduleURL}/execute.
	Module       string          `json:"module,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Examples are validated against InputSchema and OutputSchema.
	Examples      []Example      `json:"examples,omitempty"`
	Complexity    string         `json:"complexity,omitempty"`
	Version       string         `json:"version,omitempty"`
	Entities      []Entity       `json:"entities,omitempty"`
	Relationships *Relationships `json:"relationships,omitempty"`
	UseCases      []string       `json:"useCases,omitempty"`
	CommonErrors  []CommonError  `json:"commonErrors,omitempty"`
	Source        *Source        `json:"source,omitempty"`
	// Status: active (default), deprecated or disabled.
	Status string `json:"status,omitempty"`
}

// Example is a worked call of the tool.
type Example struct {
	Scenario    string          `json:"scenario,omitempty"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output,omitempty"`
	Explanation string          `json:"explanation,omitempty"`
}

// Entity ties a tool to a thing of the world: Name "Southwest", Type "Airline".
type Entity struct {
	Name    string   `json:"name"`
	Type    string   `json:"type,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
}

// Relationships are a tool's edges to other tools.
type Relationships struct {
	Dependencies []string  `json:"dependencies,omitempty"`
	Alternatives []string  `json:"alternatives,omitempty"`
	Pairings     []Pairing `json:"commonPairings,omitempty"`
}

// Pairing is a tool commonly used together with this one.
type Pairing struct {
	ToolID string  `json:"toolId"`
	Score  float64 `json:"cooccurrenceScore"`
	// Sequence is before, after or parallel.
	Sequence string `json:"typicalSequence,omitempty"`
}

// CommonError is a known failure and how to recover from it. In JSON it is
// either an object or a plain string (the error text alone).
type CommonError struct {
	Error      string `json:"error"`
	Resolution string `json:"resolution,omitempty"`
}

// UnmarshalJSON accepts "text" as well as {"error": "text", "resolution": "..."}.
func (c *CommonError) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = CommonError{Error: s}
		return nil
	}
	type plain CommonError
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = CommonError(p)
	return nil
}

// Source is a tool's provenance.
type Source struct {
	// Origin: "demo", "module", "openapi", "manual", …
	Origin  string `json:"origin,omitempty"`
	SpecURL string `json:"specUrl,omitempty"`
	License string `json:"license,omitempty"`
	Version string `json:"version,omitempty"`
}
