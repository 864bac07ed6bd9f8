package modules

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/toolsmith/toolsmith/tool"
)

// DiscoverTimeout bounds one GET /manifest: 10 s per module.
const DiscoverTimeout = 10 * time.Second

// Registrar registers the tools a module offers. registry.Service satisfies
// it through a small adapter in the composition root; RegistrarFunc adapts a
// function.
type Registrar interface {
	RegisterTool(ctx context.Context, m tool.Manifest) error
}

// RegistrarFunc adapts a function to Registrar.
type RegistrarFunc func(ctx context.Context, m tool.Manifest) error

// RegisterTool calls f.
func (f RegistrarFunc) RegisterTool(ctx context.Context, m tool.Manifest) error { return f(ctx, m) }

// ModuleManifest is a module's GET /manifest body.
type ModuleManifest struct {
	Name  string            `json:"name"`
	Tools []json.RawMessage `json:"tools"`
}

// ToolDefinition is one tool of a ModuleManifest.
type ToolDefinition struct {
	Name               string      `json:"name"`
	Description        string      `json:"description"`
	Parameters         []Parameter `json:"parameters"`
	RequiredPermission string      `json:"required_permission"`
}

// Parameter is one argument of a ToolDefinition.
type Parameter struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Enum        []any  `json:"enum,omitempty"`
}

// ModuleReport is what discovery found for one module.
type ModuleReport struct {
	Module string   `json:"module"`
	URL    string   `json:"url"`
	Tools  []string `json:"tools,omitempty"`
	// Registered counts the tools the Registrar accepted.
	Registered int `json:"registered"`
	// Error says why the module was skipped ("" when it answered).
	Error string `json:"error,omitempty"`
	// ToolErrors maps a tool id to why it was not registered.
	ToolErrors map[string]string `json:"toolErrors,omitempty"`
}

// Discover fetches every configured module's manifest, converts its tools to
// Toolsmith manifests and registers them. Unreachable modules and bad
// manifests are logged and reported, never fatal; the error is non-nil only
// when ctx ends.
func (r *Router) Discover(ctx context.Context) ([]ModuleReport, error) {
	var reports []ModuleReport
	for _, name := range r.cfg.Names() {
		if err := ctx.Err(); err != nil {
			return reports, fmt.Errorf("modules: discover: %w", err)
		}
		rep := r.discoverOne(ctx, name)
		if rep.Error != "" {
			r.logf("module_unreachable module=%s url=%s error=%s", name, rep.URL, rep.Error)
		} else {
			r.logf("module_discovered module=%s tools=%d registered=%d", name, len(rep.Tools), rep.Registered)
		}
		reports = append(reports, rep)
	}
	return reports, nil
}

func (r *Router) discoverOne(ctx context.Context, module string) ModuleReport {
	base := r.cfg.Modules[module]
	rep := ModuleReport{Module: module, URL: base}
	manifests, err := r.FetchManifest(ctx, module)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	for _, m := range manifests {
		rep.Tools = append(rep.Tools, m.ToolID)
		if r.registrar == nil {
			continue
		}
		if err := r.registrar.RegisterTool(ctx, m); err != nil {
			if rep.ToolErrors == nil {
				rep.ToolErrors = map[string]string{}
			}
			rep.ToolErrors[m.ToolID] = err.Error()
			continue
		}
		rep.Registered++
	}
	return rep
}

// FetchManifest calls GET {url}/manifest for one module and converts its
// tools. Tools named outside the module ("other.x") are refused.
func (r *Router) FetchManifest(ctx context.Context, module string) ([]tool.Manifest, error) {
	base, ok := r.cfg.Modules[module]
	if !ok {
		return nil, fmt.Errorf("modules: Unknown module: %s", module)
	}
	cctx, cancel := context.WithTimeout(ctx, DiscoverTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, base+"/manifest", nil)
	if err != nil {
		return nil, fmt.Errorf("modules: manifest of %s: %w", module, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("modules: manifest of %s: %w", module, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("modules: manifest of %s: %w", module, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("modules: manifest of %s: status %d: %s", module, resp.StatusCode, excerpt(raw))
	}
	manifests, err := ConvertManifest(module, base, raw)
	if err == nil {
		r.remember(module, manifests)
	}
	return manifests, err
}

// ConvertManifest turns a module's GET /manifest body into Toolsmith
// manifests. Each tool is either a module ToolDefinition (name, description,
// parameters, required_permission) or a full Toolsmith manifest (it has a
// "toolId"). Parameters become a JSON Schema object; the verb is derived
// from the tool name (see DeriveVerb).
func ConvertManifest(module, baseURL string, raw []byte) ([]tool.Manifest, error) {
	var mm ModuleManifest
	if err := json.Unmarshal(raw, &mm); err != nil {
		return nil, fmt.Errorf("modules: manifest of %s: %w", module, err)
	}
	if mm.Name != "" && mm.Name != module {
		return nil, fmt.Errorf("modules: manifest of %s names module %q", module, mm.Name)
	}
	out := make([]tool.Manifest, 0, len(mm.Tools))
	for i, rawTool := range mm.Tools {
		var probe struct {
			ToolID *string `json:"toolId"`
		}
		if err := json.Unmarshal(rawTool, &probe); err != nil {
			return nil, fmt.Errorf("modules: manifest of %s: tools[%d]: %w", module, i, err)
		}
		var m tool.Manifest
		if probe.ToolID != nil {
			if err := json.Unmarshal(rawTool, &m); err != nil {
				return nil, fmt.Errorf("modules: manifest of %s: tools[%d]: %w", module, i, err)
			}
			if m.Module == "" {
				m.Module = module
			}
		} else {
			var td ToolDefinition
			if err := json.Unmarshal(rawTool, &td); err != nil {
				return nil, fmt.Errorf("modules: manifest of %s: tools[%d]: %w", module, i, err)
			}
			conv, err := fromDefinition(module, td)
			if err != nil {
				return nil, fmt.Errorf("modules: manifest of %s: tools[%d]: %w", module, i, err)
			}
			m = conv
		}
		if mod, _, ok := Split(m.ToolID); !ok || mod != module {
			return nil, fmt.Errorf("modules: manifest of %s: tools[%d]: tool %q must be named %s.<tool>", module, i, m.ToolID, module)
		}
		if m.Source == nil {
			m.Source = &tool.Source{Origin: "module", SpecURL: baseURL + "/manifest"}
		}
		out = append(out, m)
	}
	return out, nil
}

func fromDefinition(module string, td ToolDefinition) (tool.Manifest, error) {
	props := map[string]any{}
	required := []string{}
	for _, p := range td.Parameters {
		if p.Name == "" {
			return tool.Manifest{}, fmt.Errorf("tool %q: a parameter has no name", td.Name)
		}
		prop := map[string]any{}
		if p.Type != "" {
			prop["type"] = p.Type
		}
		if p.Description != "" {
			prop["description"] = p.Description
		}
		if len(p.Enum) > 0 {
			prop["enum"] = p.Enum
		}
		props[p.Name] = prop
		if p.Required {
			required = append(required, p.Name)
		}
	}
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
	if err != nil {
		return tool.Manifest{}, fmt.Errorf("tool %q: %w", td.Name, err)
	}
	level := strings.ToLower(td.RequiredPermission)
	return tool.Manifest{
		ToolID:             td.Name,
		Verb:               DeriveVerb(td.Name),
		Name:               td.Name,
		Description:        td.Description,
		Category:           module,
		Module:             module,
		RequiredPermission: level,
		InputSchema:        schema,
		Source:             &tool.Source{Origin: "module"},
	}, nil
}

var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

// DeriveVerb makes an UPPER_SNAKE verb from "module.tool": a one-word tool
// is read as verb + module object ("currency.convert" → CONVERT_CURRENCY),
// a longer one as already verb-first ("research.web_search" → WEB_SEARCH).
func DeriveVerb(toolName string) string {
	module, method, ok := Split(toolName)
	if !ok {
		return strings.Trim(strings.ToUpper(nonWord.ReplaceAllString(toolName, "_")), "_")
	}
	method = strings.Trim(nonWord.ReplaceAllString(method, "_"), "_")
	if !strings.Contains(method, "_") {
		method += "_" + strings.Trim(nonWord.ReplaceAllString(module, "_"), "_")
	}
	return strings.ToUpper(method)
}
