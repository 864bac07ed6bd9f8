package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolsmith/toolsmith/internal/fault"
)

// Tool statuses a manifest may carry (the graph store's statuses).
const (
	StatusActive     = "active"
	StatusDeprecated = "deprecated"
	StatusDisabled   = "disabled"
)

// Pairing sequences: where a paired tool runs relative to this one.
const (
	SequenceBefore   = "before"
	SequenceAfter    = "after"
	SequenceParallel = "parallel"
)

// Defaults Normalize applies.
const (
	// DefaultVersion is the version of a manifest that names none: every
	// tool in the index then has a comparable semver.
	DefaultVersion = "1.0.0"
	// DefaultPermission is the permissionsRequired of a manifest that names none.
	DefaultPermission = "public"
)

// Limits.
const (
	MaxToolIDLen           = 128
	MaxShortDescriptionLen = 100 // in characters (runes)
	MaxNameLen             = 200
	// MaxDescriptionLen bounds a description (in runes): a search that
	// finds the tool sends it to the planner, and registration embeds it.
	MaxDescriptionLen = 16000
	// MaxListItemLen bounds one tag, group, state or use case (in runes).
	MaxListItemLen = 1000
	maxVerbLen     = 64
	// MaxSchemaBytes bounds inputSchema and outputSchema. Compiling a JSON
	// Schema costs more than linear time in its subschemas (a 3 MB one
	// took nearly a minute), and a planner has to read it.
	MaxSchemaBytes = 512 << 10
	// MaxJSONDepth bounds how deeply the free-form JSON of a manifest
	// (inputSchema, outputSchema, examples' input and output) nests
	// objects and arrays. It is counted on the raw bytes before anything
	// decodes or compiles them: compiling a schema nested thousands deep
	// ran for minutes, and the MCP SDK refuses JSON nested 1000 deep, so
	// such a tool could be neither listed nor found over MCP.
	MaxJSONDepth = 32
	// MaxListItems bounds every list of a manifest (tags, groups,
	// availableInStates, useCases, permissionsRequired, entities and their
	// aliases, relationships, commonErrors): each item is indexed and
	// searched, so a list of 200,000 made every search slow for everyone.
	MaxListItems = 100
	// MaxParameters bounds an inputSchema's parameters (its top-level
	// properties and required): they are indexed and listed with the tool.
	// Real APIs take more than a hundred (an environmental agency's
	// facility search takes 113), so it is wider than MaxListItems.
	MaxParameters = 500
	// MaxExamples bounds examples: each is validated against the schemas
	// and carried by every manifest read.
	MaxExamples = 20
	// MaxTextLen bounds one of the shorter free texts (in runes): an
	// example's scenario or explanation, an entity's name or type, a
	// common error or its resolution, each field of source.
	MaxTextLen = 2000
	// MaxExampleBytes bounds an example's input or output JSON.
	MaxExampleBytes = 64 << 10
)

// ValidPermission reports whether p is a permissionsRequired item a
// manifest may carry (public, authenticated, role:NAME, permission:NAME or
// any:role:NAME|user:ID…): the check a policy's roles and users must pass
// before they become a tool's requirement.
func ValidPermission(p string) bool { return permissionRe.MatchString(p) }

var (
	toolIDRe     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$`)
	verbRe       = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)
	moduleRe     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
	permissionRe = regexp.MustCompile(`^(public|authenticated|role:[A-Za-z0-9_.\-]+|permission:[A-Za-z0-9_.:\-]+|any:(role|user):[A-Za-z0-9_.:@\-]+(\|(role|user):[A-Za-z0-9_.:@\-]+)*)$`)
	// semverRe is semver.org's 2.0.0 grammar (no leading "v").
	semverRe = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
)

var (
	complexities = []string{ComplexityLow, ComplexityMedium, ComplexityHigh}
	statuses     = []string{StatusActive, StatusDeprecated, StatusDisabled}
	sequences    = []string{SequenceBefore, SequenceAfter, SequenceParallel}
)

// Parse decodes a manifest strictly. Unlike encoding/json it reports every
// unknown field and every JSON type mismatch with its path
// ("relationships.commonPairings[0].score: unknown field"), all at once, as a
// *fault.ValidationError marked Malformed (HTTP 400): such a document cannot be
// read as a manifest at all. Rule violations are Validate's job (HTTP 422).
func Parse(raw []byte) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return m, fault.Malformed("", "is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return m, fault.Malformed("", "unexpected data after the JSON object")
	}
	if _, ok := doc.(map[string]any); !ok {
		return m, fault.Malformed("", "must be a JSON object, got %s", jsonKind(doc))
	}
	verr := &fault.ValidationError{Malformed: true}
	checkShape(reflect.TypeFor[Manifest](), doc, "", verr)
	if err := verr.Err(); err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, fault.Malformed("", "%v", err)
	}
	return m, nil
}

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// checkShape compares a generic JSON value with the Go type it will be
// decoded into. JSON null is accepted everywhere (it leaves the zero value).
func checkShape(t reflect.Type, v any, path string, verr *fault.ValidationError) {
	if v == nil || t == rawMessageType {
		return
	}
	if t.Kind() == reflect.Pointer {
		checkShape(t.Elem(), v, path, verr)
		return
	}
	// CommonError-style types accept a plain string as well as an object.
	if t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(unmarshalerType) {
		if _, ok := v.(string); ok {
			return
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			verr.Add(path, "must be an object, got %s", jsonKind(v))
			return
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			f, ok := fields[k]
			if !ok {
				if hint := suggest(k, fields); hint != "" {
					verr.Add(joinKey(path, k), "unknown field (did you mean %q?)", hint)
				} else {
					verr.Add(joinKey(path, k), "unknown field")
				}
				continue
			}
			checkShape(f.Type, obj[k], joinKey(path, k), verr)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			verr.Add(path, "must be an array, got %s", jsonKind(v))
			return
		}
		for i, item := range arr {
			checkShape(t.Elem(), item, path+"["+strconv.Itoa(i)+"]", verr)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			verr.Add(path, "must be a string, got %s", jsonKind(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			verr.Add(path, "must be a boolean, got %s", jsonKind(v))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			verr.Add(path, "must be a number, got %s", jsonKind(v))
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			verr.Add(path, "must be an integer, got %s", jsonKind(v))
		} else if _, err := n.Int64(); err != nil {
			verr.Add(path, "must be an integer, got %s", n)
		}
	}
}

// jsonFields maps a struct's JSON names to its fields.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// suggest returns the known field equal to k ignoring case and underscores
// (e.g. "tool_id" → "toolId"), if any.
func suggest(k string, fields map[string]reflect.StructField) string {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for name := range fields {
		if norm(name) == norm(k) {
			return name
		}
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func joinKey(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// Normalize applies the defaults of the specs to m in place:
//   - groups ["default"], status "active", version "1.0.0",
//     complexity "low", requiredPermission "guest",
//     permissionsRequired ["public"];
//   - shortDescription, when empty, is the first sentence of description cut
//     to at most 100 characters on a word boundary with "…";
//   - surrounding white space is trimmed from the scalar text fields, and
//     enum values (complexity, requiredPermission, status, pairing
//     sequences) are lower-cased.
//
// Normalize never invents required fields, so Validate still reports them.
func Normalize(m *Manifest) {
	m.ToolID = strings.TrimSpace(m.ToolID)
	m.Verb = strings.TrimSpace(m.Verb)
	m.Name = strings.TrimSpace(m.Name)
	m.Description = strings.TrimSpace(m.Description)
	m.ShortDescription = strings.TrimSpace(m.ShortDescription)
	m.Category = strings.TrimSpace(m.Category)
	m.Module = strings.TrimSpace(m.Module)
	m.State = strings.TrimSpace(m.State)
	m.Version = strings.TrimSpace(m.Version)
	m.Complexity = strings.ToLower(strings.TrimSpace(m.Complexity))
	m.RequiredPermission = strings.ToLower(strings.TrimSpace(m.RequiredPermission))
	m.Status = strings.ToLower(strings.TrimSpace(m.Status))
	if len(m.Groups) == 0 {
		m.Groups = []string{DefaultGroup}
	}
	if m.Status == "" {
		m.Status = StatusActive
	}
	if m.Version == "" {
		m.Version = DefaultVersion
	}
	if m.Complexity == "" {
		m.Complexity = ComplexityLow
	}
	if m.RequiredPermission == "" {
		m.RequiredPermission = LevelGuest
	}
	if len(m.PermissionsRequired) == 0 {
		m.PermissionsRequired = []string{DefaultPermission}
	}
	if m.ShortDescription == "" {
		m.ShortDescription = ShortDescription(m.Description)
	}
	if m.Relationships != nil {
		for i := range m.Relationships.Pairings {
			p := &m.Relationships.Pairings[i]
			p.Sequence = strings.ToLower(strings.TrimSpace(p.Sequence))
		}
	}
}

// ShortDescription derives a summary of at most 100 characters from a
// description: its first sentence with white space collapsed, cut on a word
// boundary and ended with "…" when too long.
func ShortDescription(description string) string {
	s := strings.Join(strings.Fields(description), " ")
	if i := sentenceEnd(s); i > 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) <= MaxShortDescriptionLen {
		return s
	}
	runes := []rune(s)
	cut := runes[:MaxShortDescriptionLen-1] // leave room for "…"
	// Back up to the last space so that no word is split; a single
	// overlong word is cut hard.
	if i := lastSpace(cut); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(strings.TrimRight(string(cut), ",;:-"), unicode.IsSpace) + "…"
}

// sentenceEnd returns the index just after the first sentence's final
// punctuation ('.', '!' or '?' followed by a space), or -1.
func sentenceEnd(s string) int {
	for i := 0; i < len(s)-1; i++ {
		switch s[i] {
		case '.', '!', '?':
			if s[i+1] == ' ' {
				return i + 1
			}
		}
	}
	return -1
}

func lastSpace(r []rune) int {
	for i := len(r) - 1; i > 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

// Validate checks every rule of the manifest and returns a
// *fault.ValidationError (errors.Is fault.ErrInvalid) listing each problem
// with its field path, or nil. It accepts both raw and normalized manifests:
// empty optional fields are not errors. Rules:
//   - toolId: required, ≤ 128 chars, `^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$`;
//   - verb: required UPPER_SNAKE; name, description, category: required;
//   - shortDescription ≤ 100 chars; name ≤ 200 chars;
//   - complexity low|medium|high; requiredPermission guest|user|admin|owner;
//     status active|deprecated|disabled; version semver (1.2.3[-pre][+build]);
//   - permissionsRequired items public|authenticated|role:X|permission:X;
//   - tags, groups, availableInStates, useCases: non-empty strings;
//   - module: an identifier, and the tool id must be "module.name": the router
//     sends a call by the id's prefix before the first ".", so a module that
//     differs from that prefix would send calls to the wrong service;
//   - entities need a name; relationships need non-empty, well-formed ids
//     other than the tool's own, pairings a cooccurrenceScore in [0,1] and a
//     typicalSequence before|after|parallel;
//   - inputSchema and outputSchema compile as JSON Schema (2020-12 default),
//     inputSchema is `type: object`; examples need an input, which must
//     validate against inputSchema, and their output against outputSchema;
//   - commonErrors need their error text; source.specUrl is an absolute URL;
//   - bounds: every list, inputSchema's top-level properties and required
//     among them, at most MaxListItems items (examples MaxExamples),
//     the shorter texts MaxTextLen runes, schemas MaxSchemaBytes and example
//     JSON MaxExampleBytes, free-form JSON nested at most MaxJSONDepth deep
//     (checked on the raw bytes, before any compile); free text, a schema's
//     member names, titles and descriptions among it, refuses control
//     characters other than tab, newline and carriage return.
func Validate(m *Manifest) error {
	v := &fault.ValidationError{}

	switch {
	case m.ToolID == "":
		v.Add("toolId", "is required")
	case len(m.ToolID) > MaxToolIDLen:
		v.Add("toolId", "must be at most %d characters, got %d", MaxToolIDLen, len(m.ToolID))
	case !toolIDRe.MatchString(m.ToolID):
		v.Add("toolId", "must match %s (letters, digits, _ and -, dot-separated, starting with a letter)", toolIDRe)
	}
	switch {
	case m.Verb == "":
		v.Add("verb", "is required")
	case len(m.Verb) > maxVerbLen:
		v.Add("verb", "must be at most %d characters", maxVerbLen)
	case !verbRe.MatchString(m.Verb):
		v.Add("verb", "must be UPPER_SNAKE_CASE (e.g. CONVERT_CURRENCY), got %q", m.Verb)
	}
	for _, f := range []struct{ path, text string }{
		{"name", m.Name}, {"description", m.Description}, {"shortDescription", m.ShortDescription}, {"category", m.Category},
		{"state", m.State},
	} {
		if i := controlAt(f.text); i >= 0 {
			v.Add(f.path, "must not contain control characters, got %U at byte %d", []rune(f.text[i:])[0], i)
		}
	}
	checkText(v, "explanation", m.Explanation, MaxDescriptionLen)
	checkText(v, "inputGuidance", m.InputGuidance, MaxDescriptionLen)
	if strings.TrimSpace(m.Name) == "" {
		v.Add("name", "is required")
	} else if n := utf8.RuneCountInString(m.Name); n > MaxNameLen {
		v.Add("name", "must be at most %d characters, got %d", MaxNameLen, n)
	}
	if strings.TrimSpace(m.Description) == "" {
		v.Add("description", "is required")
	} else if n := utf8.RuneCountInString(m.Description); n > MaxDescriptionLen {
		v.Add("description", "must be at most %d characters, got %d: every search that finds the tool carries it", MaxDescriptionLen, n)
	}
	if n := utf8.RuneCountInString(m.ShortDescription); n > MaxShortDescriptionLen {
		v.Add("shortDescription", "must be at most %d characters, got %d", MaxShortDescriptionLen, n)
	}
	if strings.TrimSpace(m.Category) == "" {
		v.Add("category", "is required")
	}
	checkEnum(v, "complexity", m.Complexity, complexities)
	checkEnum(v, "requiredPermission", m.RequiredPermission, Levels)
	checkEnum(v, "status", m.Status, statuses)
	if m.Version != "" && !semverRe.MatchString(m.Version) {
		v.Add("version", "must be a semantic version like 1.2.3, got %q", m.Version)
	}
	checkStrings(v, "tags", m.Tags)
	checkStrings(v, "groups", m.Groups)
	checkStrings(v, "availableInStates", m.AvailableInStates)
	checkStrings(v, "useCases", m.UseCases)
	if m.State != "" && strings.TrimSpace(m.State) == "" {
		v.Add("state", "must not be blank")
	}
	perms := m.PermissionsRequired
	if !checkCount(v, "permissionsRequired", len(perms), MaxListItems) {
		perms = nil // one error for the list, not one per item
	}
	for i, p := range perms {
		if !permissionRe.MatchString(p) {
			v.Add(fmt.Sprintf("permissionsRequired[%d]", i), "must be public, authenticated, role:NAME, permission:NAME or any:role:NAME|user:ID…, got %q", p)
		}
	}
	if m.Module != "" {
		prefix, _, dotted := strings.Cut(m.ToolID, ".")
		switch {
		case !moduleRe.MatchString(m.Module):
			v.Add("module", "must match %s, got %q", moduleRe, m.Module)
		case m.ToolID == "" || !toolIDRe.MatchString(m.ToolID):
			// toolId already reported.
		case !dotted:
			v.Add("toolId", "must be %q for a tool of module %q (calls are routed by the id's prefix)", m.Module+"."+m.ToolID, m.Module)
		case prefix != m.Module:
			v.Add("module", "must equal the toolId prefix %q (calls are routed by the id's prefix), got %q", prefix, m.Module)
		}
	}
	entities := m.Entities
	if !checkCount(v, "entities", len(entities), MaxListItems) {
		entities = nil
	}
	for i, e := range entities {
		p := fmt.Sprintf("entities[%d]", i)
		if strings.TrimSpace(e.Name) == "" {
			v.Add(p+".name", "is required")
		} else {
			checkText(v, p+".name", e.Name, MaxNameLen)
		}
		checkText(v, p+".type", e.Type, MaxNameLen)
		checkStrings(v, p+".aliases", e.Aliases)
	}
	if r := m.Relationships; r != nil {
		deps, alts, pairs := r.Dependencies, r.Alternatives, r.Pairings
		if !checkCount(v, "relationships.dependencies", len(deps), MaxListItems) {
			deps = nil
		}
		if !checkCount(v, "relationships.alternatives", len(alts), MaxListItems) {
			alts = nil
		}
		if !checkCount(v, "relationships.commonPairings", len(pairs), MaxListItems) {
			pairs = nil
		}
		for i, id := range deps {
			checkRef(v, fmt.Sprintf("relationships.dependencies[%d]", i), id, m.ToolID)
		}
		for i, id := range alts {
			checkRef(v, fmt.Sprintf("relationships.alternatives[%d]", i), id, m.ToolID)
		}
		for i, pr := range pairs {
			p := fmt.Sprintf("relationships.commonPairings[%d]", i)
			checkRef(v, p+".toolId", pr.ToolID, m.ToolID)
			if pr.Score < 0 || pr.Score > 1 {
				v.Add(p+".cooccurrenceScore", "must be between 0 and 1, got %g", pr.Score)
			}
			checkEnum(v, p+".typicalSequence", pr.Sequence, sequences)
		}
	}
	commonErrors := m.CommonErrors
	if !checkCount(v, "commonErrors", len(commonErrors), MaxListItems) {
		commonErrors = nil
	}
	for i, ce := range commonErrors {
		p := fmt.Sprintf("commonErrors[%d]", i)
		if strings.TrimSpace(ce.Error) == "" {
			v.Add(p+".error", "is required")
		} else {
			checkText(v, p+".error", ce.Error, MaxTextLen)
		}
		checkText(v, p+".resolution", ce.Resolution, MaxTextLen)
	}
	if src := m.Source; src != nil {
		checkText(v, "source.origin", src.Origin, MaxTextLen)
		checkText(v, "source.specUrl", src.SpecURL, MaxTextLen)
		checkText(v, "source.license", src.License, MaxTextLen)
		checkText(v, "source.version", src.Version, MaxTextLen)
	}
	if m.Source != nil && m.Source.SpecURL != "" && controlAt(m.Source.SpecURL) < 0 {
		if u, err := url.Parse(m.Source.SpecURL); err != nil || !u.IsAbs() || u.Host == "" && u.Scheme != "file" {
			v.Add("source.specUrl", "must be an absolute URL, got %q", m.Source.SpecURL)
		}
	}

	in := compileField(v, "inputSchema", m.InputSchema, true)
	out := compileField(v, "outputSchema", m.OutputSchema, false)
	examples := m.Examples
	if !checkCount(v, "examples", len(examples), MaxExamples) {
		examples = nil
	}
	for i, ex := range examples {
		p := fmt.Sprintf("examples[%d]", i)
		checkText(v, p+".scenario", ex.Scenario, MaxTextLen)
		checkText(v, p+".explanation", ex.Explanation, MaxTextLen)
		switch {
		case isEmptyJSON(ex.Input):
			v.Add(p+".input", "is required")
		case !checkJSONSize(v, p+".input", ex.Input, MaxExampleBytes):
		case in != nil:
			v.Fields = append(v.Fields, ValidateJSON(in, p+".input", ex.Input)...)
		case !json.Valid(ex.Input):
			v.Add(p+".input", "is not valid JSON")
		}
		if !isEmptyJSON(ex.Output) && checkJSONSize(v, p+".output", ex.Output, MaxExampleBytes) && out != nil {
			v.Fields = append(v.Fields, ValidateJSON(out, p+".output", ex.Output)...)
		}
	}
	return v.Err()
}

// checkJSONSize records in v a free-form JSON field over max bytes or
// nested deeper than MaxJSONDepth, and reports whether it is within both.
func checkJSONSize(v *fault.ValidationError, path string, raw json.RawMessage, max int) bool {
	return checkJSONBounds(v, path, raw, max, "", "")
}

// checkJSONBounds is checkJSONSize with a hint after each message.
func checkJSONBounds(v *fault.ValidationError, path string, raw json.RawMessage, max int, sizeHint, depthHint string) bool {
	if len(raw) > max {
		v.Add(path, "must be at most %d bytes of JSON, got %d%s", max, len(raw), sizeHint)
		return false
	}
	if DeeperThan(raw, MaxJSONDepth) {
		v.Add(path, "must nest objects and arrays at most %d deep%s", MaxJSONDepth, depthHint)
		return false
	}
	return true
}

// DeeperThan reports whether the JSON text raw nests objects and arrays
// more than max levels deep. It scans the bytes once, skipping strings,
// and stops at the first level past max, so a document nested thousands
// deep is refused before anything decodes it; it does not check that raw
// is valid JSON.
func DeeperThan(raw []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// ValueDeeperThan is DeeperThan for a decoded JSON value (maps, slices
// and scalars as encoding/json decodes them into an any).
func ValueDeeperThan(v any, max int) bool {
	switch x := v.(type) {
	case map[string]any:
		if max <= 0 {
			return true
		}
		for _, e := range x {
			if ValueDeeperThan(e, max-1) {
				return true
			}
		}
	case []any:
		if max <= 0 {
			return true
		}
		for _, e := range x {
			if ValueDeeperThan(e, max-1) {
				return true
			}
		}
	}
	return false
}

// compileField compiles one schema field, recording its problems in v. It
// returns nil when the field is absent or broken.
func compileField(v *fault.ValidationError, path string, raw json.RawMessage, mustBeObject bool) *jsonschema.Schema {
	if isEmptyJSON(raw) {
		return nil
	}
	if !checkJSONBounds(v, path, raw, MaxSchemaBytes, "; refer to fewer or shallower subschemas",
		"; use $defs and $ref for deep or recursive structures") {
		return nil
	}
	before := len(v.Fields)
	if checkSchemaText(v, path, raw); len(v.Fields) > before {
		return nil
	}
	if mustBeObject {
		var head struct {
			Type       any                        `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []any                      `json:"required"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			// A schema that is not an object, or whose properties or
			// required are not, is for the compiler to name below.
			var probe any
			if json.Unmarshal(raw, &probe) == nil {
				if _, ok := probe.(map[string]any); !ok {
					v.Add(path, "must be a JSON Schema object, got %s", strings.TrimSpace(string(raw)))
					return nil
				}
			}
		}
		if head.Type != "object" {
			v.Add(path+".type", `must be "object" (tool inputs are named parameters), got %s`, typeText(head.Type))
		}
		// The parameters are indexed and listed with the tool.
		if !checkCount(v, path+".properties", len(head.Properties), MaxParameters) ||
			!checkCount(v, path+".required", len(head.Required), MaxParameters) {
			return nil
		}
	}
	s, err := CompileSchema(path, raw)
	if err != nil {
		v.Fields = append(v.Fields, fault.Fields(err)...)
		return nil
	}
	return s
}

func typeText(t any) string {
	if t == nil {
		return "nothing"
	}
	b, _ := json.Marshal(t)
	return string(b)
}

func isEmptyJSON(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

func checkEnum(v *fault.ValidationError, path, val string, allowed []string) {
	if val != "" && !slices.Contains(allowed, val) {
		v.Add(path, "must be one of %s, got %q", strings.Join(allowed, ", "), val)
	}
}

// checkCount records in v a list of more than max items and reports
// whether the list is within the bound (its items are then checked one by
// one; an overlong list is one error, not one per item).
func checkCount(v *fault.ValidationError, path string, n, max int) bool {
	if n > max {
		v.Add(path, "must have at most %d items, got %d", max, n)
		return false
	}
	return true
}

// checkText records in v an optional free text with a refused control
// character or more than max runes.
func checkText(v *fault.ValidationError, path, s string, max int) {
	if j := controlAt(s); j >= 0 {
		v.Add(path, "must not contain control characters, got %U at byte %d", []rune(s[j:])[0], j)
	} else if n := utf8.RuneCountInString(s); n > max {
		v.Add(path, "must be at most %d characters, got %d", max, n)
	}
}

// schemaTextKeywords are the schema keywords whose values are prose a
// planner or a person reads.
var schemaTextKeywords = []string{"title", "description", "$comment"}

// checkSchemaText records in v the control characters of a schema's
// member names (property names among them) and of its titles,
// descriptions and comments, with the path of each. raw is already known
// to nest at most MaxJSONDepth deep; JSON that does not decode is left to
// the compiler to report.
func checkSchemaText(v *fault.ValidationError, path string, raw json.RawMessage) {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return
	}
	var walk func(p string, x any)
	walk = func(p string, x any) {
		switch x := x.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if j := controlAt(k); j >= 0 {
					v.Add(p, "member name %q must not contain control characters, got %U at byte %d", k, []rune(k[j:])[0], j)
					continue
				}
				if s, ok := x[k].(string); ok && slices.Contains(schemaTextKeywords, k) {
					checkText(v, joinKey(p, k), s, MaxDescriptionLen)
					continue
				}
				walk(joinKey(p, k), x[k])
			}
		case []any:
			for i, e := range x {
				walk(p+"["+strconv.Itoa(i)+"]", e)
			}
		}
	}
	walk(path, doc)
}

func checkStrings(v *fault.ValidationError, path string, vals []string) {
	if !checkCount(v, path, len(vals), MaxListItems) {
		return
	}
	for i, s := range vals {
		if strings.TrimSpace(s) == "" {
			v.Add(fmt.Sprintf("%s[%d]", path, i), "must be a non-empty string")
		} else if j := controlAt(s); j >= 0 {
			v.Add(fmt.Sprintf("%s[%d]", path, i), "must not contain control characters, got %U at byte %d", []rune(s[j:])[0], j)
		} else if n := utf8.RuneCountInString(s); n > MaxListItemLen {
			v.Add(fmt.Sprintf("%s[%d]", path, i), "must be at most %d characters, got %d", MaxListItemLen, n)
		}
	}
}

func checkRef(v *fault.ValidationError, path, id, self string) {
	switch {
	case strings.TrimSpace(id) == "":
		v.Add(path, "must be a non-empty tool id")
	case !toolIDRe.MatchString(id) || len(id) > MaxToolIDLen:
		v.Add(path, "must be a tool id, got %q", id)
	case id == self:
		v.Add(path, "must not refer to the tool itself")
	}
}

// ControlAt is the byte offset of the first control character of s that
// Validate refuses (any but tab, newline and carriage return), or -1: the
// check other free text Toolsmith stores (a verb's description, a
// deprecation reason, a usage event) shares with tool texts.
func ControlAt(s string) int { return controlAt(s) }

// controlAt is the byte offset of the first control character of s that
// Validate refuses (refusedControl), or -1.
func controlAt(s string) int {
	return strings.IndexFunc(s, refusedControl)
}

// refusedControl reports a control character other than tab, newline and
// carriage return (NUL, escape, DEL, …), or a bidirectional override or
// isolate (U+202A–U+202E, U+2066–U+2069), which makes a text read
// otherwise than it is stored ("Detect \u202elanguage" shows reversed in
// every list and console). The marks right-to-left text needs (U+200E,
// U+200F, U+061C) stay allowed.
func refusedControl(r rune) bool {
	return r != '\t' && r != '\n' && r != '\r' && unicode.IsControl(r) ||
		r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// StripControl drops the control characters Validate refuses, for text
// taken from documents Toolsmith did not write, such as an OpenAPI spec's
// summaries.
func StripControl(s string) string {
	if controlAt(s) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if refusedControl(r) {
			return -1
		}
		return r
	}, s)
}
