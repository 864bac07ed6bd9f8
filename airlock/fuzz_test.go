package airlock

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzSourceList parses arbitrary bytes as an APIs.guru-style list.json, as
// a directory source's scan does. Seeds are in testdata/fuzz/FuzzSourceList
// (the list of TestFetcherScansURLsListsAndFolders). Properties:
//   - a document that is not a JSON object of APIs is an error, not a panic;
//   - each location listed is the openapiUrl (else the swaggerUrl) of an
//     API's preferred version, at most one per API, none empty;
//   - the order is the APIs' names sorted, so parsing twice gives the same
//     list.
func FuzzSourceList(f *testing.F) {
	f.Add([]byte(`{"pets.example": {"preferred": "2", "versions": {"1": {"swaggerUrl": "http://127.0.0.1/old.yaml"}, "2": {"openapiUrl": "http://127.0.0.1/pets.yaml"}}},
	  "gone.example": {"preferred": "1", "versions": {"1": {"swaggerUrl": "http://127.0.0.1/missing.json"}}}}`))
	f.Add([]byte(`{"a": {"preferred": "x"}, "b": null, "c": {"versions": {"": {"openapiUrl": "u"}}}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The scan reads a fetched document as a list only when IsAPIList
		// says so: never a spec (openapi or swagger at the top), and never
		// a document whose members do not all carry versions.
		if IsAPIList(data) {
			var top map[string]map[string]json.RawMessage
			if err := json.Unmarshal(data, &top); err != nil || len(top) == 0 {
				t.Fatalf("IsAPIList took a document that is not an object of objects: %v", err)
			}
			for name, api := range top {
				// Member names match as encoding/json matches fields (and
				// as ParseAPIList reads them): ignoring case.
				versions := false
				for k, v := range api {
					versions = versions || strings.EqualFold(k, "versions") && string(v) != "null"
				}
				if name == "openapi" || name == "swagger" || !versions {
					t.Fatalf("IsAPIList took member %q (%s)", name, data)
				}
			}
			if IsAPIList(data) != true {
				t.Fatal("IsAPIList is not deterministic")
			}
		}
		locs, err := ParseAPIList(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "airlock: ") {
				t.Fatalf("error %q does not say where it comes from", err)
			}
			return
		}
		// Decode independently to know what each API's preferred version says.
		var list map[string]json.RawMessage
		if err := json.Unmarshal(data, &list); err != nil {
			t.Fatalf("ParseAPIList accepted what is not a JSON object: %v", err)
		}
		if len(locs) > len(list) {
			t.Fatalf("%d locations from %d APIs", len(locs), len(list))
		}
		var want []string
		names := make([]string, 0, len(list))
		for n := range list {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			var api struct {
				Preferred string `json:"preferred"`
				Versions  map[string]struct {
					SwaggerURL string `json:"swaggerUrl"`
					OpenAPIURL string `json:"openapiUrl"`
				} `json:"versions"`
			}
			if err := json.Unmarshal(list[n], &api); err != nil {
				t.Fatalf("API %q does not decode although the list did: %v", n, err)
			}
			v := api.Versions[api.Preferred]
			switch {
			case v.OpenAPIURL != "":
				want = append(want, v.OpenAPIURL)
			case v.SwaggerURL != "":
				want = append(want, v.SwaggerURL)
			}
		}
		// A location may be refused (e.g. one a remote list may not name),
		// never invented or reordered.
		k := 0
		for _, l := range locs {
			if l == "" {
				t.Fatal("an empty location")
			}
			for k < len(want) && want[k] != l {
				k++
			}
			if k == len(want) {
				t.Fatalf("location %q is not a preferred version's spec, in order (want a subsequence of %q)", l, want)
			}
			k++
		}
		again, err := ParseAPIList(data)
		if err != nil || !slices.Equal(locs, again) {
			t.Fatalf("parsing twice differs: %q then %q (%v)", locs, again, err)
		}
	})
}
