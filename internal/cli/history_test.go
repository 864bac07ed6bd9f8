package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/internal/testwait"
	"github.com/toolsmith/toolsmith/retrieval"
)

// useLiteDir finds the USE-Lite weights for a test that runs the dev
// system as `make run` does: $TOOLSMITH_MODEL_DIR, else the module's
// .cache/models/use-lite-0.2.0. It skips without them (fails with
// TOOLSMITH_REQUIRE_MODEL=1, as `make test` sets).
func useLiteDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, ".cache", "models", "use-lite-0.2.0")
				break
			}
			if filepath.Dir(d) == d {
				t.Fatal(errors.New("go.mod not found above the test directory"))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err != nil {
		msg := fmt.Sprintf("USE-Lite weights not found in %s (set TOOLSMITH_MODEL_DIR)", dir)
		if os.Getenv("TOOLSMITH_REQUIRE_MODEL") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// search runs a hybrid search with the given Authorization ("" = guest)
// and returns its ranked hits and whether the result came from the cache.
func (in *instance) search(t *testing.T, q, auth string) ([]retrieval.Hit, bool) {
	t.Helper()
	var headers []string
	if auth != "" {
		headers = []string{"Authorization", auth}
	}
	code, env := in.call(t, http.MethodGet, "/api/v1/tools/retrieval/search?strategy=hybrid&q="+url.QueryEscape(q), nil, headers...)
	if code != http.StatusOK {
		t.Fatalf("search %q: %d %s", q, code, env.Data)
	}
	var res struct {
		Ranked   []retrieval.Hit `json:"ranked"`
		Metadata struct {
			CacheHit bool `json:"cacheHit"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(env.Data, &res); err != nil {
		t.Fatal(err)
	}
	return res.Ranked, res.Metadata.CacheHit
}

// TestHistoryNeverHurtsDev: in the shape of `make run` (the dev wiring,
// the demo catalogue, USE-Lite), after twenty successful CONVERT_CURRENCY
// runs (each substituting and executing currency.convert), a search for a
// restaurant table still ranks restaurant.reserve_table first for the
// owner and leaves a guest's ranking as it was, a currency question does
// learn from those uses, and EXCHANGE_MONEY "change my dollars into yen"
// still substitutes currency.convert.
func TestHistoryNeverHurtsDev(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev system with USE-Lite")
	}
	dir := useLiteDir(t)
	in := startDev(t, t.TempDir(), "--embedder", "use-lite", "--model-dir", dir)
	const table = "book a table for two"
	const fx = "convert 300 US dollars into euros"
	testwait.Eventually(t, 2*time.Minute, func() error {
		if hits, _ := in.search(t, table, in.auth); len(hits) == 0 || hits[0].Tool.ID != "restaurant.reserve_table" {
			return fmt.Errorf("before any use, %q ranks %v for the owner; want restaurant.reserve_table first", table, hitIDs(hits))
		}
		return nil
	})
	// Module discovery registers the demo modules' tools just after ready;
	// wait for the catalogue to settle, so "before" and "after" differ only
	// by the uses.
	in.waitCatalogueSettled(t)
	// The demo's restaurant.reserve_table needs a signed-in user, so a
	// guest never sees it; a guest's ranking must then be what it was.
	guestBefore, _ := in.search(t, table, "")
	before, _ := in.search(t, fx, in.auth)

	// Twenty successful CONVERT_CURRENCY runs, as planners submit them:
	// each substitutes currency.convert, executes it, and its success
	// teaches the ranking (the query and the tool that served it).
	descs := []string{"convert an amount of money between currencies", "convert US dollars to euros",
		"how much is this in pounds", "change euros into swiss francs", ""}
	codes := [][2]string{{"USD", "EUR"}, {"GBP", "USD"}, {"EUR", "CHF"}, {"JPY", "USD"}}
	for i := range 20 {
		c := codes[i%len(codes)]
		code, env := in.call(t, http.MethodPost, "/api/v1/verbs?wait=60s", map[string]any{
			"verb": "CONVERT_CURRENCY", "description": descs[i%len(descs)],
			"inputs": map[string]any{"amount": 20 + 10*i, "from": c[0], "to": c[1]},
		}, "Authorization", in.auth)
		if code != http.StatusOK {
			t.Fatalf("CONVERT_CURRENCY run %d: %d %s", i, code, env.Data)
		}
		var run struct {
			Result struct {
				Branch string   `json:"branch"`
				Tools  []string `json:"tools"`
				Reason string   `json:"reason"`
			} `json:"result"`
		}
		if err := json.Unmarshal(env.Data, &run); err != nil {
			t.Fatal(err)
		}
		if r := run.Result; r.Branch != "substitute" || len(r.Tools) != 1 || r.Tools[0] != "currency.convert" {
			t.Fatalf("CONVERT_CURRENCY run %d: branch %q tools %v (%s); want currency.convert substituted", i, r.Branch, r.Tools, r.Reason)
		}
	}
	// Each run recorded its use in its execute activity, before it
	// answered.

	for _, who := range []struct{ name, auth string }{{"guest", ""}, {"owner", in.auth}} {
		hits, cached := in.search(t, table, who.auth)
		if cached {
			t.Fatalf("%s: %q came from the cache; the uses must invalidate it", who.name, table)
		}
		switch {
		case who.auth == "" && !slices.Contains(hitIDs(guestBefore), "restaurant.reserve_table"):
			if !slices.Equal(hitIDs(hits), hitIDs(guestBefore)) {
				t.Fatalf("guest: after 20 CONVERT_CURRENCY runs, %q ranks %v; before them %v", table, hitIDs(hits), hitIDs(guestBefore))
			}
		case len(hits) == 0 || hits[0].Tool.ID != "restaurant.reserve_table":
			t.Fatalf("%s: after 20 CONVERT_CURRENCY runs, %q ranks %v; want restaurant.reserve_table first", who.name, table, hitIDs(hits))
		}
		for _, h := range hits {
			if h.Tool.ID == "currency.convert" && h.Breakdown.Neighbours.Weighted+h.Breakdown.Usage.Weighted+h.Breakdown.QueryLog.Weighted+h.Breakdown.Popularity.Weighted > 0 {
				t.Errorf("%s: currency.convert gains usage evidence for %q: %+v", who.name, table, h.Breakdown)
			}
		}
	}
	// The uses do teach: the currency question's top hit gains evidence.
	after, _ := in.search(t, fx, in.auth)
	if len(after) == 0 || after[0].Tool.ID != "currency.convert" {
		t.Fatalf("after 20 uses, %q ranks %v; want currency.convert first", fx, hitIDs(after))
	}
	if b := after[0].Breakdown; b.Neighbours.Weighted+b.Usage.Weighted <= 0 {
		t.Fatalf("currency.convert has no usage evidence for %q: %+v (before: %v)", fx, b, hitIDs(before))
	}
	// And a paraphrase of the verb, with inputs that fill its parameters,
	// still substitutes it after those uses.
	code, env := in.call(t, http.MethodPost, "/api/v1/verbs?wait=60s", map[string]any{
		"verb": "EXCHANGE_MONEY", "description": "change my dollars into yen",
		"inputs": map[string]any{"amount": 100, "from": "USD", "to": "JPY"},
	}, "Authorization", in.auth)
	var run struct {
		Result struct {
			Branch string   `json:"branch"`
			Tools  []string `json:"tools"`
			Reason string   `json:"reason"`
		} `json:"result"`
	}
	if code != http.StatusOK || json.Unmarshal(env.Data, &run) != nil {
		t.Fatalf("EXCHANGE_MONEY: %d %s", code, env.Data)
	}
	if r := run.Result; r.Branch != "substitute" || len(r.Tools) != 1 || r.Tools[0] != "currency.convert" {
		t.Fatalf("EXCHANGE_MONEY after 20 CONVERT_CURRENCY runs: branch %q tools %v (%s); want currency.convert substituted", r.Branch, r.Tools, r.Reason)
	}
}

func hitIDs(hits []retrieval.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Tool.ID
	}
	return out
}

// waitCatalogueSettled waits until the owner's tool list has kept its size
// for two seconds (module discovery registers tools after ready).
func (in *instance) waitCatalogueSettled(t *testing.T) {
	t.Helper()
	count := func() int {
		code, env := in.call(t, http.MethodGet, "/api/v1/tools?limit=1000", nil, "Authorization", in.auth)
		var page struct {
			Count int `json:"count"`
		}
		if code != http.StatusOK || json.Unmarshal(env.Data, &page) != nil {
			t.Fatalf("list: %d %s", code, env.Data)
		}
		return page.Count
	}
	last, since := count(), time.Now()
	testwait.Eventually(t, time.Minute, func() error {
		if n := count(); n != last {
			last, since = n, time.Now()
		}
		if quiet := time.Since(since); quiet < 2*time.Second {
			return fmt.Errorf("the catalogue changed %v ago (%d tools); want two quiet seconds", quiet.Round(time.Millisecond), last)
		}
		return nil
	})
}
