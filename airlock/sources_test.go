package airlock

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/internal/fault"
)

func TestFetcherScansURLsListsAndFolders(t *testing.T) {
	pets, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pets.yaml":
			_, _ = w.Write(pets)
		case "/list.json":
			fmt.Fprintf(w, `{"pets.example": {"preferred": "2", "versions": {"1": {"swaggerUrl": "%[1]s/old.yaml"}, "2": {"openapiUrl": "%[1]s/pets.yaml"}}},
			  "gone.example": {"preferred": "1", "versions": {"1": {"swaggerUrl": "%[1]s/missing.json"}}}}`, srv.URL)
		case "/huge.json":
			_, _ = w.Write([]byte(strings.Repeat(" ", 2048)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	f := &Fetcher{MaxBytes: 1 << 20}

	specs, errs, err := f.Scan(ctx, Source{Type: SourceOpenAPI, Location: srv.URL + "/pets.yaml"})
	if err != nil || len(specs) != 1 || len(errs) != 0 || len(specs[0].Hash) != 64 {
		t.Fatalf("openapi source: %v %v %v", specs, errs, err)
	}
	specs, errs, err = f.Scan(ctx, Source{Type: SourceDirectory, Location: srv.URL + "/list.json"})
	if err != nil || len(specs) != 1 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "404") {
		t.Fatalf("list.json source: specs=%d errs=%v err=%v", len(specs), errs, err)
	}
	dir := t.TempDir()
	_ = os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "a", "pets.yaml"), pets, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	specs, _, err = f.Scan(ctx, Source{Type: SourceDirectory, Location: dir})
	if err != nil || len(specs) != 1 {
		t.Fatalf("folder source: %v %v", specs, err)
	}
	small := &Fetcher{MaxBytes: 1024}
	if _, err := small.Fetch(ctx, srv.URL+"/huge.json"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("size bound: %v", err)
	}
	if _, err := f.Fetch(ctx, srv.URL+"/nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404: %v", err)
	}

	n, err := codegen.Normalise(ctx, specs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	defs := Definitions(n, specs[0])
	if len(defs) != 4 || defs[0].Slug != "pet_clinic" || !strings.Contains(defs[0].Text(), "Pet Clinic") {
		t.Fatalf("definitions: %+v", defs)
	}
}

func TestValidateSourceNamesFields(t *testing.T) {
	for _, c := range []struct {
		s     Source
		field string
	}{
		{Source{Type: "git", Location: "https://x.example/a.yaml"}, "type"},
		{Source{Type: SourceOpenAPI}, "location"},
		{Source{Type: SourceOpenAPI, Location: "ftp://x.example/a.yaml"}, "location"},
	} {
		err := ValidateSource(c.s)
		if !errors.Is(err, fault.ErrInvalid) || fault.Fields(err)[0].Path != c.field {
			t.Errorf("%+v: %v", c.s, err)
		}
	}
	if err := ValidateSource(Source{Type: SourceDirectory, Location: "specs/"}); err != nil {
		t.Fatal(err)
	}
}

// A list.json fetched over the network may name only http(s) specs: its
// local paths and file:// URLs are reported, never read.
func TestRemoteListNamesOnlyHTTP(t *testing.T) {
	pets, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "local.yaml")
	if err := os.WriteFile(local, pets, 0o644); err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pets.yaml":
			_, _ = w.Write(pets)
		case "/list.json":
			fmt.Fprintf(w, `{"a": {"preferred": "1", "versions": {"1": {"openapiUrl": %q}}},
			  "b": {"preferred": "1", "versions": {"1": {"openapiUrl": %q}}},
			  "c": {"preferred": "1", "versions": {"1": {"openapiUrl": "%s/pets.yaml"}}}}`, local, "file://"+local, srv.URL)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	specs, errs, err := (&Fetcher{}).Scan(context.Background(), Source{Type: SourceDirectory, Location: srv.URL + "/list.json"})
	if err != nil || len(specs) != 1 || specs[0].Location != srv.URL+"/pets.yaml" {
		t.Fatalf("specs=%v err=%v", specs, err)
	}
	if len(errs) != 2 || !errors.Is(errs[0], ErrNotHTTP) || !errors.Is(errs[1], ErrNotHTTP) {
		t.Fatalf("errs=%v", errs)
	}
	// A local list may still name local files (the operator wrote it).
	list := filepath.Join(t.TempDir(), "list.json")
	_ = os.WriteFile(list, []byte(fmt.Sprintf(`{"a": {"preferred": "1", "versions": {"1": {"openapiUrl": %q}}}}`, local)), 0o644)
	specs, errs, err = (&Fetcher{}).Scan(context.Background(), Source{Type: SourceDirectory, Location: list})
	if err != nil || len(specs) != 1 || len(errs) != 0 {
		t.Fatalf("local list: specs=%d errs=%v err=%v", len(specs), errs, err)
	}
}

// An openapi source (the type the console and docs/airlock.md use, and the default
// when none is given) may be a folder, a remote list.json or a local one:
// the kind is found from the location, a spec is never taken for a list,
// and a remote list still names only http(s) specs.
func TestOpenAPISourceMayBeAFolderOrAList(t *testing.T) {
	pets, err := os.ReadFile(petstore)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_ = os.MkdirAll(filepath.Join(dir, "specs", "nested"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "specs", "pets.yaml"), pets, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "specs", "nested", "more-pets.yaml"), append(append([]byte{}, pets...), "\n# more\n"...), 0o644)
	local := filepath.Join(dir, "specs", "pets.yaml")
	jsonSpec := `{"openapi": "3.0.3", "info": {"title": "J", "version": "1"}, "paths": {}}`
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pets.yaml":
			_, _ = w.Write(pets)
		case "/spec.json":
			_, _ = w.Write([]byte(jsonSpec))
		case "/list.json":
			fmt.Fprintf(w, `{"pets.example": {"preferred": "2", "versions": {"2": {"openapiUrl": "%s/pets.yaml"}}},
			  "local.example": {"preferred": "1", "versions": {"1": {"openapiUrl": %q}}}}`, srv.URL, local)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	// A local list names a remote spec, an absolute path and a path relative
	// to the list's folder.
	list := filepath.Join(dir, "list.json")
	_ = os.WriteFile(list, []byte(fmt.Sprintf(`{"a": {"preferred": "1", "versions": {"1": {"openapiUrl": "%s/pets.yaml"}}},
	  "b": {"preferred": "1", "versions": {"1": {"swaggerUrl": %q}}},
	  "c": {"preferred": "1", "versions": {"1": {"openapiUrl": "specs/nested/more-pets.yaml"}}}}`, srv.URL, local)), 0o644)
	ctx := context.Background()
	f := &Fetcher{}
	for _, typ := range []string{SourceOpenAPI, ""} {
		specs, errs, err := f.Scan(ctx, Source{Type: typ, Location: filepath.Join(dir, "specs")})
		if err != nil || len(errs) != 0 || len(specs) != 2 {
			t.Fatalf("type %q, folder: specs=%d errs=%v err=%v", typ, len(specs), errs, err)
		}
		specs, errs, err = f.Scan(ctx, Source{Type: typ, Location: "file://" + filepath.Join(dir, "specs")})
		if err != nil || len(errs) != 0 || len(specs) != 2 {
			t.Fatalf("type %q, file:// folder: specs=%d errs=%v err=%v", typ, len(specs), errs, err)
		}
		specs, errs, err = f.Scan(ctx, Source{Type: typ, Location: srv.URL + "/list.json"})
		if err != nil || len(specs) != 1 || specs[0].Location != srv.URL+"/pets.yaml" || len(errs) != 1 || !errors.Is(errs[0], ErrNotHTTP) {
			t.Fatalf("type %q, remote list: specs=%v errs=%v err=%v", typ, specs, errs, err)
		}
		specs, errs, err = f.Scan(ctx, Source{Type: typ, Location: list})
		if err != nil || len(errs) != 0 || len(specs) != 3 || specs[2].Location != filepath.Join(dir, "specs", "nested", "more-pets.yaml") {
			t.Fatalf("type %q, local list: specs=%v errs=%v err=%v", typ, specs, errs, err)
		}
		specs, errs, err = f.Scan(ctx, Source{Type: typ, Location: srv.URL + "/spec.json"})
		if err != nil || len(errs) != 0 || len(specs) != 1 || string(specs[0].Data) != jsonSpec {
			t.Fatalf("type %q, a JSON spec is one spec: specs=%v errs=%v err=%v", typ, specs, errs, err)
		}
		specs, _, err = f.Scan(ctx, Source{Type: typ, Location: local})
		if err != nil || len(specs) != 1 {
			t.Fatalf("type %q, a file: specs=%v err=%v", typ, specs, err)
		}
	}
	if err := ValidateSource(Source{Location: dir}); err != nil {
		t.Fatalf("no type: %v", err)
	}
	if IsAPIList([]byte(`{}`)) || IsAPIList([]byte(jsonSpec)) || !IsAPIList([]byte(`{"x": {"versions": {}}}`)) {
		t.Fatal("IsAPIList")
	}
}
