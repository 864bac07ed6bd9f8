package airlock

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolsmith/toolsmith/access"
	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/tool"
)

// SpecInfo is what the airlock knows of a spec's provenance.
type SpecInfo struct {
	// Slug names the wrapper and prefixes its tool ids ("petstore").
	Slug string
	// URL is where the spec came from (an http(s) URL or a file path).
	URL string
}

var slugClean = regexp.MustCompile(`[^a-z0-9]+`)

// Slug derives a wrapper slug from a spec's title, or from a fallback
// (file name, host) when the title gives nothing usable.
func Slug(doc *openapi3.T, fallback string) string {
	candidates := []string{fallback}
	if doc != nil && doc.Info != nil {
		candidates = append([]string{doc.Info.Title}, candidates...)
	}
	for _, c := range candidates {
		s := strings.Trim(slugClean.ReplaceAllString(strings.ToLower(c), "_"), "_")
		if len(s) > 40 {
			s = strings.TrimRight(s[:40], "_")
		}
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			return s
		}
		if s != "" {
			return "api_" + s
		}
	}
	return "api"
}

// Manifests turns each tool of a generated wrapper into a Toolsmith
// manifest: id "<slug>.<tool>", verb from the tool name, input schema from
// parameters and body, output schema from the success response, entities
// from the API title, tags and path nouns, provenance from the spec.
func Manifests(n *codegen.Normalised, w *codegen.Wrapper, info SpecInfo, p Policy) ([]tool.Manifest, error) {
	doc := n.Doc
	title, version, license := "", "", ""
	if doc.Info != nil {
		title, version = strings.TrimSpace(doc.Info.Title), doc.Info.Version
		if doc.Info.License != nil {
			license = doc.Info.License.Name
		}
	}
	if title == "" {
		title = info.Slug
	}
	groups := p.AllowedGroups
	if len(groups) == 0 {
		groups = []string{tool.DefaultGroup}
	}
	level := p.RequiredLevel
	if level == "" {
		level = tool.LevelUser
	}
	perms := []string{"public"}
	if anyOf := access.AnyOf(p.AllowedRoles, p.AllowedUsers); anyOf != "" {
		// The approval's allowed roles and users become the tools' own
		// permission, so every read path hides them from exactly the
		// callers execution (Policy.Permits) refuses.
		perms = []string{anyOf}
	}
	var out []tool.Manifest
	for _, t := range w.Tools {
		item, op, err := kit.Operation(doc, t)
		if err != nil {
			return nil, err
		}
		in, err := kit.InputSchema(doc, t)
		if err != nil {
			return nil, err
		}
		m := tool.Manifest{
			ToolID:              info.Slug + "." + t.Name,
			Verb:                strings.ToUpper(t.Name),
			Name:                tool.StripControl(displayName(op, t)),
			Description:         tool.StripControl(description(title, op, t)),
			Category:            category(op),
			Tags:                tags(op, info.Slug),
			Groups:              groups,
			PermissionsRequired: perms,
			RequiredPermission:  level,
			InputSchema:         codegen.ToJSONSchema(in),
			OutputSchema:        outputSchema(op),
			Complexity:          complexity(item, op),
			Version:             semver(version),
			Entities:            entities(title, op, t),
			UseCases:            useCases(op),
			Source:              &tool.Source{Origin: "openapi", SpecURL: specURL(info.URL), License: license, Version: version},
			Status:              "active",
		}
		out = append(out, m)
	}
	return out, nil
}

func displayName(op *openapi3.Operation, t kit.Tool) string {
	if s := strings.TrimSpace(op.Summary); s != "" && len(s) <= 80 {
		return s
	}
	return strings.ReplaceAll(t.Name, "_", " ")
}

func description(title string, op *openapi3.Operation, t kit.Tool) string {
	parts := []string{}
	if s := strings.TrimSpace(op.Summary); s != "" {
		parts = append(parts, strings.TrimSuffix(s, ".")+".")
	}
	if d := strings.TrimSpace(op.Description); d != "" && d != op.Summary {
		parts = append(parts, clip(strings.Join(strings.Fields(d), " "), 600))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("Calls %s %s.", t.Method, t.Path))
	}
	parts = append(parts, fmt.Sprintf("(%s API: %s %s)", title, t.Method, t.Path))
	return strings.Join(parts, " ")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func category(op *openapi3.Operation) string {
	if len(op.Tags) > 0 {
		if c := strings.Trim(slugClean.ReplaceAllString(strings.ToLower(op.Tags[0]), "-"), "-"); c != "" {
			return c
		}
	}
	return "external-api"
}

func tags(op *openapi3.Operation, slug string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, t := range append([]string{"openapi", slug}, op.Tags...) {
		t = strings.TrimSpace(t)
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// maxUseCase clips a use case taken from an operation's summary, which
// some specs fill with a paragraph (tool.MaxListItemLen bounds one).
const maxUseCase = 300

func useCases(op *openapi3.Operation) []string {
	var out []string
	if s := strings.TrimSpace(tool.StripControl(op.Summary)); s != "" {
		out = append(out, clip(strings.Join(strings.Fields(s), " "), maxUseCase))
	}
	return out
}

func complexity(item *openapi3.PathItem, op *openapi3.Operation) string {
	n := len(kit.Parameters(item, op))
	if op.RequestBody != nil {
		n += 3
	}
	switch {
	case n >= 8:
		return tool.ComplexityHigh
	case n >= 4:
		return tool.ComplexityMedium
	}
	return tool.ComplexityLow
}

// semver is the manifest's version of an API version (codegen.Semver).
func semver(v string) string { return codegen.Semver(v) }

// outputSchema is the JSON Schema of the success response's JSON body, or
// {} when the API answers something else.
func outputSchema(op *openapi3.Operation) json.RawMessage {
	if op.Responses == nil {
		return json.RawMessage(`{}`)
	}
	codes := []string{}
	for c := range op.Responses.Map() {
		if strings.HasPrefix(c, "2") {
			codes = append(codes, c)
		}
	}
	sort.Strings(codes)
	for _, c := range codes {
		r := op.Responses.Value(c)
		if r == nil || r.Value == nil {
			continue
		}
		for mt, media := range r.Value.Content {
			if strings.Contains(mt, "json") && media.Schema != nil && media.Schema.Value != nil {
				return codegen.ToJSONSchema(media.Schema.Value)
			}
		}
	}
	return json.RawMessage(`{}`)
}

var pathWord = regexp.MustCompile(`^[A-Za-z][A-Za-z-]{2,}$`)

// entities ties a tool to the API (as an entity of type API), to its tags
// (Topic) and to the resource nouns of its path (Resource), so that graph
// context can tell, say, a flight booking API from a restaurant one.
func entities(title string, op *openapi3.Operation, t kit.Tool) []tool.Entity {
	out := []tool.Entity{{Name: title, Type: "API"}}
	seen := map[string]bool{strings.ToLower(title): true}
	add := func(name, typ string) {
		k := strings.ToLower(name)
		if name == "" || seen[k] || len(out) >= 8 {
			return
		}
		seen[k] = true
		out = append(out, tool.Entity{Name: name, Type: typ})
	}
	for _, tag := range op.Tags {
		add(strings.TrimSpace(tag), "Topic")
	}
	for _, seg := range strings.Split(t.Path, "/") {
		if strings.Contains(seg, "{") || !pathWord.MatchString(seg) {
			continue
		}
		if v := strings.ToLower(seg); v == "api" || v == "rest" || v == "json" || strings.HasPrefix(v, "v") && len(v) <= 3 {
			continue
		}
		add(singular(seg), "Resource")
	}
	return out
}

func singular(w string) string {
	lw := strings.ToLower(w)
	switch {
	case strings.HasSuffix(lw, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(lw, "ses") || strings.HasSuffix(lw, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(lw, "s") && !strings.HasSuffix(lw, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// specURL makes a spec location absolute: URLs stay, local paths become
// file:// URLs of their absolute path.
func specURL(loc string) string {
	if loc == "" || strings.Contains(loc, "://") {
		return loc
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return loc
	}
	return "file://" + filepath.ToSlash(abs)
}
