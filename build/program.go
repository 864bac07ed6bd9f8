package build

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrRefused marks a program the guard rails refuse before it is built (a
// forbidden import, a malformed field). The message names the rule.
var ErrRefused = errors.New("build: program refused")

// Limits of a program.
const (
	MaxSourceBytes = 64 << 10
	MaxTests       = 20
	MaxHosts       = 5
)

// Program is what the model writes: one Go source file in package main that
// defines
//
//	func run(ctx context.Context, in map[string]any, web Web) (any, error)
//
// its test cases, the JSON schemas of its input and output, and the hosts
// it needs, each with a reason.
type Program struct {
	// Tool is the tool's name (lower_snake); the registered tool id is
	// "built-<verb>.<tool>".
	Tool        string          `json:"tool"`
	Description string          `json:"description"`
	Source      string          `json:"source"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema describes what run returns.
	OutputSchema json.RawMessage `json:"outputSchema"`
	Tests        []TestCase      `json:"tests"`
	Hosts        []Host          `json:"hosts"`
}

// Host is a host the program asks to call, and why.
type Host struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// TestCase is one call of run and what it must give back: Want (compared
// as JSON) or an error containing WantError. HTTP fakes the answers the
// program's Web gets in this case, keyed by "METHOD URL" or by URL; a call
// without a fake fails the case (tests never reach a network).
type TestCase struct {
	Name      string             `json:"name"`
	Input     map[string]any     `json:"input"`
	Want      json.RawMessage    `json:"want,omitempty"`
	WantError string             `json:"wantError,omitempty"`
	HTTP      map[string]Fixture `json:"http,omitempty"`
}

// Fixture is a faked HTTP answer.
type Fixture struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

var (
	toolRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	caseRE = regexp.MustCompile(`^[a-z0-9_]{1,40}$`)
	hostRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)
)

// HostNames returns the program's hosts, in order.
func (p Program) HostNames() []string {
	out := make([]string, len(p.Hosts))
	for i, h := range p.Hosts {
		out[i] = h.Host
	}
	return out
}

// Validate checks every field but the source's Go (CheckSource does that).
// A problem wraps ErrRefused and names the field.
func (p Program) Validate() error {
	var problems []string
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if !toolRE.MatchString(p.Tool) {
		add("tool: must be lower_snake (a letter, then letters, digits, _; at most 64), got %q", p.Tool)
	}
	if strings.TrimSpace(p.Description) == "" {
		add("description: is required")
	}
	switch {
	case strings.TrimSpace(p.Source) == "":
		add("source: is required")
	case len(p.Source) > MaxSourceBytes:
		add("source: is %d bytes, more than %d", len(p.Source), MaxSourceBytes)
	}
	if err := objectSchema(p.InputSchema); err != nil {
		add("inputSchema: %v", err)
	}
	if len(bytes.TrimSpace(p.OutputSchema)) == 0 || !json.Valid(p.OutputSchema) {
		add("outputSchema: must be a JSON schema")
	}
	if len(p.Tests) == 0 || len(p.Tests) > MaxTests {
		add("tests: need 1 to %d cases, got %d", MaxTests, len(p.Tests))
	}
	seen := map[string]bool{}
	for i, t := range p.Tests {
		switch {
		case !caseRE.MatchString(t.Name):
			add("tests[%d].name: must match %s, got %q", i, caseRE, t.Name)
		case seen[t.Name]:
			add("tests[%d].name: %q is used twice", i, t.Name)
		}
		seen[t.Name] = true
		if len(bytes.TrimSpace(t.Want)) == 0 && t.WantError == "" {
			add("tests[%d]: needs want or wantError", i)
		}
		if len(t.Want) > 0 && !json.Valid(t.Want) {
			add("tests[%d].want: is not JSON", i)
		}
	}
	if len(p.Hosts) > MaxHosts {
		add("hosts: at most %d, got %d", MaxHosts, len(p.Hosts))
	}
	hosts := map[string]bool{}
	for i, h := range p.Hosts {
		if !hostRE.MatchString(h.Host) {
			add("hosts[%d].host: must be a lower-case DNS name without scheme or port, got %q", i, h.Host)
		}
		if hosts[h.Host] {
			add("hosts[%d].host: %q is listed twice", i, h.Host)
		}
		hosts[h.Host] = true
		if strings.TrimSpace(h.Reason) == "" {
			add("hosts[%d].reason: is required (why the tool calls %s)", i, h.Host)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrRefused, strings.Join(problems, "; "))
	}
	return nil
}

// objectSchema checks that raw is a JSON schema of an object.
func objectSchema(raw json.RawMessage) error {
	var s struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("must be a JSON schema object: %v", err)
	}
	if s.Type != "object" {
		return fmt.Errorf(`must have "type": "object", got %v`, s.Type)
	}
	return nil
}

// Check runs every guard rail that needs no compiler: Validate, then
// CheckSource.
func (p Program) Check() error {
	if err := p.Validate(); err != nil {
		return err
	}
	return CheckSource(p.Source)
}
