package graphtest

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/toolsmith/toolsmith/graph"
)

// testManifestRunes: one read gives every tool's manifest size, whatever
// its status, equal to the rune count of GetTool's Manifest, for text
// the JSON encoder escapes (HTML characters, line separators, quotes),
// non-ASCII text (accents, CJK, astral emoji), manifests registered with
// spaces and newlines, arrays, bare strings and no manifest at all.
func testManifestRunes(t *testing.T, open func(*testing.T) graph.Store) {
	s := fresh(t, open)
	manifests := map[string]string{
		"m.ascii":   `{"toolId":"m.ascii","verb":"SEND","description":"plain text"}`,
		"m.accents": `{"toolId":"m.accents","description":"réservez un billet à Zürich — naïve café"}`,
		"m.cjk":     `{"toolId":"m.cjk","description":"预订航班 日本語のテキスト 한국어"}`,
		"m.emoji":   `{"toolId":"m.emoji","description":"book 🛫 flights 😀 and 𝄞 music"}`,
		"m.html":    `{"toolId":"m.html","description":"a <b>bold</b> & \"quoted\" \\ line\u2028sep\u2029"}`,
		"m.escapes": `{"toolId":"m.escapes","description":"tab\there \u00e9 \ud83d\ude00 \/ slash"}`,
		"m.spaced":  "{\n  \"toolId\": \"m.spaced\",\n  \"params\": [ 1.50, 1e3, -0, true, null ],\n  \"nested\": { \"a\" : { \"b\" : [ ] } }\n}",
		"m.array":   `[ "one", "двa", {"k": "ü"} ]`,
		"m.string":  `"just a string with ß"`,
		"m.null":    `null`,
	}
	for id, m := range manifests {
		tl := mk(id, "SEND", "Tool "+id, "misc", "a tool", unit(1), func(t *graph.Tool) { t.Manifest = json.RawMessage(m) })
		if _, err := s.UpsertTool(ctx, tl); err != nil {
			t.Fatalf("UpsertTool(%s): %v", id, err)
		}
	}
	if err := s.SetStatus(ctx, "m.cjk", graph.StatusDisabled, "test"); err != nil {
		t.Fatalf("SetStatus: %v", err)
	}
	got, err := s.ManifestRunes(ctx)
	if err != nil {
		t.Fatalf("ManifestRunes: %v", err)
	}
	if len(got) != len(manifests) {
		t.Errorf("ManifestRunes has %d tools, want %d: %v", len(got), len(manifests), got)
	}
	for id := range manifests {
		tl, err := s.GetTool(ctx, id)
		if err != nil {
			t.Fatalf("GetTool(%s): %v", id, err)
		}
		want := utf8.RuneCount(tl.Manifest)
		if n, ok := got[id]; !ok || n != want {
			t.Errorf("ManifestRunes[%s] = %d (present %v), want %d, the runes of %s", id, n, ok, want, tl.Manifest)
		}
	}
	if got["m.null"] != 0 || got["m.ascii"] == 0 {
		t.Errorf("ManifestRunes: null manifest = %d (want 0), ascii = %d (want > 0)", got["m.null"], got["m.ascii"])
	}
}
