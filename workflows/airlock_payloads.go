package workflows

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/build"
	"github.com/toolsmith/toolsmith/codegen/kit"
)

// The airlock's and the build's payloads: a reviewer's policy, the review
// a reviewer sees, a source's scan report, and a built program with its
// test reports, as the workflows hold them in history and state. Each
// has the JSON shape of the domain or activity type it mirrors, so
// histories recorded when the workflows held those types still decode,
// and each is converted at the activity call and at the review service,
// so a change to airlock, build or activities does not change what
// history holds.

// Policy is what a reviewer sets when approving (airlock.Policy's shape).
type Policy struct {
	RateLimitPerMinute int         `json:"rateLimitPerMinute,omitempty"`
	QuotaPerDay        int         `json:"quotaPerDay,omitempty"`
	CostPerCall        float64     `json:"costPerCall,omitempty"`
	SoftBudget         float64     `json:"softBudget,omitempty"`
	HardBudget         float64     `json:"hardBudget,omitempty"`
	AllowedUsers       []string    `json:"allowedUsers,omitempty"`
	AllowedRoles       []string    `json:"allowedRoles,omitempty"`
	AllowedGroups      []string    `json:"allowedGroups,omitempty"`
	Operations         []string    `json:"operations,omitempty"`
	BaseURL            string      `json:"baseUrl,omitempty"`
	Credential         *Credential `json:"credential,omitempty"`
	RequiredLevel      string      `json:"requiredLevel,omitempty"`
}

// Credential names the secret a wrapper sends (kit.CredentialRef's shape).
type Credential struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	Env  string `json:"env"`
}

// PolicyOf is the workflows' copy of a reviewer's policy.
func PolicyOf(p airlock.Policy) Policy {
	out := Policy{RateLimitPerMinute: p.RateLimitPerMinute, QuotaPerDay: p.QuotaPerDay, CostPerCall: p.CostPerCall,
		SoftBudget: p.SoftBudget, HardBudget: p.HardBudget, AllowedUsers: slices.Clone(p.AllowedUsers),
		AllowedRoles: slices.Clone(p.AllowedRoles), AllowedGroups: slices.Clone(p.AllowedGroups),
		Operations: slices.Clone(p.Operations), BaseURL: p.BaseURL, RequiredLevel: p.RequiredLevel}
	if c := p.Credential; c != nil {
		out.Credential = &Credential{Kind: c.Kind, Name: c.Name, Env: c.Env}
	}
	return out
}

// Airlock is the policy as the airlock domain holds it.
func (p Policy) Airlock() airlock.Policy {
	out := airlock.Policy{RateLimitPerMinute: p.RateLimitPerMinute, QuotaPerDay: p.QuotaPerDay, CostPerCall: p.CostPerCall,
		SoftBudget: p.SoftBudget, HardBudget: p.HardBudget, AllowedUsers: slices.Clone(p.AllowedUsers),
		AllowedRoles: slices.Clone(p.AllowedRoles), AllowedGroups: slices.Clone(p.AllowedGroups),
		Operations: slices.Clone(p.Operations), BaseURL: p.BaseURL, RequiredLevel: p.RequiredLevel}
	if c := p.Credential; c != nil {
		out.Credential = &kit.CredentialRef{Kind: c.Kind, Name: c.Name, Env: c.Env}
	}
	return out
}

// Validate checks the policy by the airlock's rules (pure, so
// deterministic in a workflow); every problem names its field.
func (p Policy) Validate() error { return p.Airlock().Validate() }

// SpecReview is what a reviewer sees of a pending spec (airlock.Review's
// shape).
type SpecReview struct {
	SpecHash    string            `json:"specHash"`
	Location    string            `json:"location"`
	Slug        string            `json:"slug"`
	Title       string            `json:"title"`
	Description string            `json:"description,omitempty"`
	Version     string            `json:"version,omitempty"`
	License     string            `json:"license,omitempty"`
	Servers     []string          `json:"servers"`
	AuthSchemes []string          `json:"authSchemes"`
	Operations  []ReviewOperation `json:"operations"`
	Warnings    []string          `json:"warnings"`
	NameTakenBy string            `json:"nameTakenBy,omitempty"`
	NamePending bool              `json:"namePending,omitempty"`
}

// ReviewOperation is one operation of a pending spec.
type ReviewOperation struct {
	Name        string   `json:"name"`
	Method      string   `json:"method"`
	Path        string   `json:"path"`
	OperationID string   `json:"operationId,omitempty"`
	Summary     string   `json:"summary,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// SpecReviewOf is the workflows' copy of a prepared review.
func SpecReviewOf(r airlock.Review) SpecReview {
	out := SpecReview{SpecHash: r.SpecHash, Location: r.Location, Slug: r.Slug, Title: r.Title, Description: r.Description,
		Version: r.Version, License: r.License, Servers: slices.Clone(r.Servers), AuthSchemes: slices.Clone(r.AuthSchemes),
		Warnings: slices.Clone(r.Warnings), NameTakenBy: r.NameTakenBy, NamePending: r.NamePending}
	if r.Operations != nil {
		out.Operations = make([]ReviewOperation, len(r.Operations))
		for i, o := range r.Operations {
			out.Operations[i] = ReviewOperation{Name: o.Name, Method: o.Method, Path: o.Path, OperationID: o.OperationID, Summary: o.Summary, Tags: slices.Clone(o.Tags)}
		}
	}
	return out
}

// Airlock is the review as the airlock domain holds it.
func (r SpecReview) Airlock() airlock.Review {
	out := airlock.Review{SpecHash: r.SpecHash, Location: r.Location, Slug: r.Slug, Title: r.Title, Description: r.Description,
		Version: r.Version, License: r.License, Servers: slices.Clone(r.Servers), AuthSchemes: slices.Clone(r.AuthSchemes),
		Warnings: slices.Clone(r.Warnings), NameTakenBy: r.NameTakenBy, NamePending: r.NamePending}
	if r.Operations != nil {
		out.Operations = make([]airlock.ReviewOperation, len(r.Operations))
		for i, o := range r.Operations {
			out.Operations[i] = airlock.ReviewOperation{Name: o.Name, Method: o.Method, Path: o.Path, OperationID: o.OperationID, Summary: o.Summary, Tags: slices.Clone(o.Tags)}
		}
	}
	return out
}

// ScanReport reports the scan of one source (activities.ScanSourceOutput's
// shape).
type ScanReport struct {
	SourceID    string      `json:"sourceId"`
	Specs       int         `json:"specs"`
	NewSpecs    []FoundSpec `json:"newSpecs"`
	Known       int         `json:"known"`
	Definitions int         `json:"definitions"`
	Errors      []string    `json:"errors,omitempty"`
	Error       string      `json:"error,omitempty"`
}

// FoundSpec names a spec a scan saw for the first time.
type FoundSpec struct {
	Hash     string `json:"hash"`
	Location string `json:"location"`
}

func scanReportOf(o activities.ScanSourceOutput) ScanReport {
	out := ScanReport{SourceID: o.SourceID, Specs: o.Specs, Known: o.Known, Definitions: o.Definitions,
		Errors: slices.Clone(o.Errors), Error: o.Error}
	if o.NewSpecs != nil {
		out.NewSpecs = make([]FoundSpec, len(o.NewSpecs))
		for i, s := range o.NewSpecs {
			out.NewSpecs[i] = FoundSpec{Hash: s.Hash, Location: s.Location}
		}
	}
	return out
}

// BuiltProgram is a program the model wrote, as a build's state holds it
// (build.Program's shape).
type BuiltProgram struct {
	Tool         string          `json:"tool"`
	Description  string          `json:"description"`
	Source       string          `json:"source"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Tests        []BuiltTestCase `json:"tests"`
	Hosts        []BuiltHost     `json:"hosts"`
}

// BuiltHost is a host a built program asks to call, and why.
type BuiltHost struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// BuiltTestCase is one test case of a built program (build.TestCase's
// shape).
type BuiltTestCase struct {
	Name      string                  `json:"name"`
	Input     map[string]any          `json:"input"`
	Want      json.RawMessage         `json:"want,omitempty"`
	WantError string                  `json:"wantError,omitempty"`
	HTTP      map[string]BuiltFixture `json:"http,omitempty"`
}

// BuiltFixture is a faked HTTP answer of a test case.
type BuiltFixture struct {
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
}

// BuildReport is what building and testing a round's program found
// (build.Report's shape).
type BuildReport struct {
	Refused  string        `json:"refused,omitempty"`
	Built    bool          `json:"built"`
	Passed   bool          `json:"passed"`
	Sandbox  string        `json:"sandbox,omitempty"`
	Tests    []TestOutcome `json:"tests,omitempty"`
	Output   string        `json:"output,omitempty"`
	Duration time.Duration `json:"durationNs"`
}

// TestOutcome is one test's result: PASS, FAIL or SKIP.
type TestOutcome struct {
	Name   string `json:"name"`
	Result string `json:"result"`
}

func builtProgramOf(p build.Program) BuiltProgram {
	out := BuiltProgram{Tool: p.Tool, Description: p.Description, Source: p.Source,
		InputSchema: slices.Clone(p.InputSchema), OutputSchema: slices.Clone(p.OutputSchema)}
	if p.Tests != nil {
		out.Tests = make([]BuiltTestCase, len(p.Tests))
		for i, c := range p.Tests {
			tc := BuiltTestCase{Name: c.Name, Input: maps.Clone(c.Input), Want: slices.Clone(c.Want), WantError: c.WantError}
			if c.HTTP != nil {
				tc.HTTP = make(map[string]BuiltFixture, len(c.HTTP))
				for k, f := range c.HTTP {
					tc.HTTP[k] = BuiltFixture{Status: f.Status, Body: slices.Clone(f.Body)}
				}
			}
			out.Tests[i] = tc
		}
	}
	if p.Hosts != nil {
		out.Hosts = make([]BuiltHost, len(p.Hosts))
		for i, h := range p.Hosts {
			out.Hosts[i] = BuiltHost{Host: h.Host, Reason: h.Reason}
		}
	}
	return out
}

func buildReportOf(r build.Report) BuildReport {
	out := BuildReport{Refused: r.Refused, Built: r.Built, Passed: r.Passed, Sandbox: r.Sandbox, Output: r.Output, Duration: r.Duration}
	if r.Tests != nil {
		out.Tests = make([]TestOutcome, len(r.Tests))
		for i, t := range r.Tests {
			out.Tests[i] = TestOutcome{Name: t.Name, Result: t.Result}
		}
	}
	return out
}
