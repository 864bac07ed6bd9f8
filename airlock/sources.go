package airlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/codegen/kit"
	"github.com/toolsmith/toolsmith/internal/fault"
)

// Source types. Both scan the same way: the location says
// whether it is one spec, a folder or a list (Fetcher.Scan).
const (
	// SourceOpenAPI (the default) is an OpenAPI source: one spec (an
	// http(s) URL or a local file), a local folder of specs, or an
	// APIs.guru-style list.json.
	SourceOpenAPI = "openapi"
	// SourceDirectory is the older name for a folder or list source, kept
	// so that sources registered with it still scan.
	SourceDirectory = "directory"
)

// Source is a registered place to find tool definitions.
type Source struct {
	ID            string    `json:"id"`
	Type          string    `json:"type"`
	Location      string    `json:"location"`
	CreatedAt     time.Time `json:"createdAt"`
	LastScannedAt time.Time `json:"lastScannedAt,omitempty"`
	LastError     string    `json:"lastError,omitempty"`
	Specs         int       `json:"specs"`
}

// ValidateSource checks a source as submitted; problems name the field.
// An empty type is SourceOpenAPI.
func ValidateSource(s Source) error {
	v := &fault.ValidationError{}
	if s.Type != "" && s.Type != SourceOpenAPI && s.Type != SourceDirectory {
		v.Add("type", "must be %q (the default: a spec, a folder or a list.json) or %q", SourceOpenAPI, SourceDirectory)
	}
	loc := strings.TrimSpace(s.Location)
	switch {
	case loc == "":
		v.Add("location", "is required: an http(s) URL or a local path")
	case strings.Contains(loc, "://"):
		u, err := url.Parse(loc)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
			v.Add("location", "must be an http(s) URL, a file:// URL or a local path")
		}
	}
	return v.Err()
}

// IsLocal reports whether a source's location is on this server's file
// system: a path or a file:// URL, not an http(s) one.
func IsLocal(location string) bool {
	loc := strings.TrimSpace(location)
	if !strings.Contains(loc, "://") {
		return true
	}
	u, err := url.Parse(loc)
	return err != nil || u.Scheme != "http" && u.Scheme != "https"
}

// FoundSpec is a spec document fetched from a source.
type FoundSpec struct {
	Location string `json:"location"`
	Hash     string `json:"hash"` // sha256 of the bytes, hex
	Data     []byte `json:"-"`
}

// Fetcher reads sources with bounded size and time and never follows a
// spec's external $refs (codegen.Normalise refuses them).
type Fetcher struct {
	Client *http.Client
	// MaxBytes bounds each download (default 10 MiB).
	MaxBytes int64
	// Timeout bounds each download (default 30 s).
	Timeout time.Duration
	// MaxSpecs bounds how many specs one directory source yields (default 1000).
	MaxSpecs int
}

func (f *Fetcher) maxBytes() int64 {
	if f.MaxBytes > 0 {
		return f.MaxBytes
	}
	return 10 << 20
}

// ErrTooLarge is returned for a document over the size bound.
var ErrTooLarge = errors.New("document exceeds the size limit")

// ErrNotRegular is returned for a local location that is not a regular
// file (a FIFO, a device, a socket): reading one could block forever or
// never end.
var ErrNotRegular = errors.New("not a regular file")

// ErrNotHTTP is returned for an entry of a remote directory list that is
// not an http(s) URL: a list fetched from the network may not make the
// server read its own files.
var ErrNotHTTP = errors.New("a remote list may name only http(s) URLs")

func isHTTP(location string) bool {
	return strings.HasPrefix(location, "http://") || strings.HasPrefix(location, "https://")
}

func (f *Fetcher) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return 30 * time.Second
}

// Fetch reads one document from an http(s) URL, a file:// URL or a path.
// Both kinds of read are bounded by MaxBytes, Timeout and ctx.
func (f *Fetcher) Fetch(ctx context.Context, location string) (FoundSpec, error) {
	var data []byte
	var err error
	if isHTTP(location) {
		data, err = f.get(ctx, location)
	} else {
		data, err = f.readFile(ctx, strings.TrimPrefix(location, "file://"))
	}
	if err != nil {
		return FoundSpec{}, err
	}
	sum := sha256.Sum256(data)
	return FoundSpec{Location: location, Hash: hex.EncodeToString(sum[:]), Data: data}, nil
}

func (f *Fetcher) get(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("airlock: fetch %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json, application/yaml, text/yaml, */*;q=0.5")
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("airlock: fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("airlock: fetch %s: HTTP %d", u, resp.StatusCode)
	}
	return readBounded(resp.Body, f.maxBytes(), u)
}

// readFile reads a local spec. It opens without blocking (opening a FIFO
// for reading would otherwise wait for a writer forever), accepts only a
// regular file, and reads under the size bound, the timeout and ctx.
func (f *Fetcher) readFile(ctx context.Context, p string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout())
	defer cancel()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("airlock: read %s: %w", p, err)
	}
	fh, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("airlock: read %s: %w", p, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("airlock: read %s: %w", p, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("airlock: read %s: %w (%s)", p, ErrNotRegular, st.Mode().Type())
	}
	return readBounded(ctxReader{ctx: ctx, r: fh}, f.maxBytes(), p)
}

// ctxReader stops a read once its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

func readBounded(r io.Reader, limit int64, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("airlock: read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("airlock: %s: %w (%d bytes)", name, ErrTooLarge, limit)
	}
	return data, nil
}

// Scan fetches every spec a source names. Its location may be one spec (an
// http(s) URL or a local file), a local folder of specs, or an
// APIs.guru-style list.json (an http(s) URL or a local file): the kind is
// found from the location itself (a folder on disk, a fetched document
// that is an API list), so the type ("openapi", the default, or
// "directory") does not have to match it. A source that fails as a whole
// is an error; individual specs of a folder or list that fail come back in
// errs.
func (f *Fetcher) Scan(ctx context.Context, s Source) (specs []FoundSpec, errs []error, err error) {
	switch s.Type {
	case SourceOpenAPI, SourceDirectory, "":
	default:
		return nil, nil, fmt.Errorf("airlock: source type %q: %w", s.Type, fault.ErrInvalid)
	}
	var listed []string
	if folder, ok := localFolder(s.Location); ok {
		ctx, cancel := context.WithTimeout(ctx, f.timeout())
		listed, err = specFiles(ctx, folder)
		cancel()
		if err != nil {
			return nil, nil, err
		}
	} else {
		doc, err := f.Fetch(ctx, s.Location)
		if err != nil {
			return nil, nil, err
		}
		if !IsAPIList(doc.Data) {
			return []FoundSpec{doc}, nil, nil
		}
		if listed, err = ParseAPIList(doc.Data); err != nil {
			return nil, nil, err
		}
		if !isHTTP(s.Location) {
			listed = relativeTo(strings.TrimPrefix(s.Location, "file://"), listed)
		}
	}
	var locations []string
	for _, loc := range listed {
		// Only a local folder or a local list may name local files;
		// what a remote list names is fetched over http(s) or not at all.
		if isHTTP(s.Location) && !isHTTP(loc) {
			errs = append(errs, fmt.Errorf("airlock: %s lists %q: %w", s.Location, loc, ErrNotHTTP))
			continue
		}
		locations = append(locations, loc)
	}
	max := f.MaxSpecs
	if max <= 0 {
		max = 1000
	}
	if len(locations) > max {
		errs = append(errs, fmt.Errorf("airlock: %s lists %d specs; only the first %d are read", s.Location, len(locations), max))
		locations = locations[:max]
	}
	for _, loc := range locations {
		if ctx.Err() != nil {
			return specs, errs, ctx.Err()
		}
		spec, err := f.Fetch(ctx, loc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		specs = append(specs, spec)
	}
	return specs, errs, nil
}

// localFolder reports whether location names a local folder (a path or a
// file:// URL), and its path.
func localFolder(location string) (string, bool) {
	if isHTTP(location) {
		return "", false
	}
	p := strings.TrimPrefix(location, "file://")
	st, err := os.Stat(p)
	return p, err == nil && st.IsDir()
}

// relativeTo resolves the relative local paths a local list names against
// the list's folder; URLs and absolute paths stay as they are.
func relativeTo(list string, locations []string) []string {
	out := make([]string, len(locations))
	for i, loc := range locations {
		if !strings.Contains(loc, "://") && !filepath.IsAbs(loc) {
			loc = filepath.Join(filepath.Dir(list), loc)
		}
		out[i] = loc
	}
	return out
}

// IsAPIList reports whether a document is an APIs.guru-style list.json
// rather than a spec: a JSON object with no "openapi" or "swagger" member
// whose members each carry "versions".
func IsAPIList(data []byte) bool {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || len(top) == 0 {
		return false
	}
	if _, ok := top["openapi"]; ok {
		return false
	}
	if _, ok := top["swagger"]; ok {
		return false
	}
	for _, raw := range top {
		var api struct {
			Versions map[string]json.RawMessage `json:"versions"`
		}
		if err := json.Unmarshal(raw, &api); err != nil || api.Versions == nil {
			return false
		}
	}
	return true
}

// ParseAPIList reads an APIs.guru-style list.json: for each API, the
// preferred version's spec URL (openapi 3 first, else swagger).
func ParseAPIList(data []byte) ([]string, error) {
	var list map[string]struct {
		Preferred string `json:"preferred"`
		Versions  map[string]struct {
			SwaggerURL string `json:"swaggerUrl"`
			OpenAPIURL string `json:"openapiUrl"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("airlock: not an API list (list.json): %w", err)
	}
	names := make([]string, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		api := list[n]
		v, ok := api.Versions[api.Preferred]
		if !ok {
			continue
		}
		switch {
		case v.OpenAPIURL != "":
			out = append(out, v.OpenAPIURL)
		case v.SwaggerURL != "":
			out = append(out, v.SwaggerURL)
		}
	}
	return out, nil
}

// Definition is one operation of an un-onboarded spec: searchable so that
// find-or-build can find it, never executable.
type Definition struct {
	ID          string   `json:"id"` // "<spec hash prefix>:<tool name>"
	SpecHash    string   `json:"specHash"`
	Location    string   `json:"location"`
	Slug        string   `json:"slug"`
	API         string   `json:"api"`
	Tool        kit.Tool `json:"tool"`
	Description string   `json:"description"`
}

// Text is what a definition's embedding and full-text row are made from.
func (d Definition) Text() string {
	return strings.Join(append([]string{d.API, strings.ReplaceAll(d.Tool.Name, "_", " "), d.Description}, d.Tool.Tags...), " ")
}

// Definitions lists the operations of a normalised spec as definitions.
func Definitions(n *codegen.Normalised, spec FoundSpec) []Definition {
	api := ""
	if n.Doc.Info != nil {
		api = n.Doc.Info.Title
	}
	slug := Slug(n.Doc, strings.TrimSuffix(filepath.Base(spec.Location), filepath.Ext(spec.Location)))
	var out []Definition
	for _, t := range kit.Operations(n.Doc) {
		_, op, err := kit.Operation(n.Doc, t)
		if err != nil {
			continue
		}
		desc := strings.TrimSpace(op.Summary + " " + kit.FirstLine(op.Description))
		out = append(out, Definition{ID: spec.Hash[:16] + ":" + t.Name, SpecHash: spec.Hash, Location: spec.Location, Slug: slug, API: api, Tool: t, Description: desc})
	}
	return out
}

// SpecFiles lists the spec documents (SpecExtensions) under a folder, sorted.
func SpecFiles(root string) ([]string, error) {
	return specFiles(context.Background(), root)
}

// specFiles is SpecFiles that stops when ctx ends (a huge or looping tree).
func specFiles(ctx context.Context, root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("airlock: list %s: %w", root, err)
		}
		if !d.IsDir() {
			for _, ext := range SpecExtensions {
				if strings.EqualFold(filepath.Ext(p), ext) {
					out = append(out, p)
				}
			}
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}
