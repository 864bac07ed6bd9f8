package workflows

import (
	"slices"

	"github.com/toolsmith/toolsmith/activities"
	"github.com/toolsmith/toolsmith/airlock"
	"github.com/toolsmith/toolsmith/codegen/kit"
)

// The airlock's payloads: a reviewer's policy, the review a reviewer sees
// and a source's scan report, as the workflows hold them in history. Each
// has the JSON shape of the domain or activity type it mirrors, so
// histories recorded when the workflows held those types still decode,
// and each is converted at the activity call and at the review service,
// so a change to airlock or activities does not change what history holds.

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
	Name    string   `json:"name"`
	Method  string   `json:"method"`
	Path    string   `json:"path"`
	Summary string   `json:"summary,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

// SpecReviewOf is the workflows' copy of a prepared review.
func SpecReviewOf(r airlock.Review) SpecReview {
	out := SpecReview{SpecHash: r.SpecHash, Location: r.Location, Slug: r.Slug, Title: r.Title, Description: r.Description,
		Version: r.Version, License: r.License, Servers: slices.Clone(r.Servers), AuthSchemes: slices.Clone(r.AuthSchemes),
		Warnings: slices.Clone(r.Warnings), NameTakenBy: r.NameTakenBy, NamePending: r.NamePending}
	if r.Operations != nil {
		out.Operations = make([]ReviewOperation, len(r.Operations))
		for i, o := range r.Operations {
			out.Operations[i] = ReviewOperation{Name: o.Name, Method: o.Method, Path: o.Path, Summary: o.Summary, Tags: slices.Clone(o.Tags)}
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
			out.Operations[i] = airlock.ReviewOperation{Name: o.Name, Method: o.Method, Path: o.Path, Summary: o.Summary, Tags: slices.Clone(o.Tags)}
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
