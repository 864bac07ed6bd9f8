package demomodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/tool"
)

func post(t *testing.T, h http.Handler, key string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req := httptest.NewRequest(http.MethodPost, "/execute", bytes.NewReader(b))
	if key != "" {
		req.Header.Set(HeaderIdempotencyKey, key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func TestTools(t *testing.T) {
	cases := []struct {
		module string
		tool   string
		args   map[string]any
		want   map[string]any
		err    string
	}{
		{"currency", "currency.convert", map[string]any{"amount": 100, "from": "USD", "to": "EUR"}, map[string]any{"converted": 92.14, "rate": 0.9214, "as_of": RatesAsOf, "source": RatesSource}, ""},
		{"currency", "currency.convert", map[string]any{"amount": 50, "from": "gbp", "to": "jpy"}, map[string]any{"converted": 9737.31, "rate": 194.746284, "to": "JPY"}, ""},
		{"currency", "currency.convert", map[string]any{"amount": 1, "from": "USD", "to": "XYZ"}, nil, `unsupported currency "XYZ"`},
		{"currency", "currency.convert", map[string]any{"amount": "1", "from": "USD", "to": "EUR"}, nil, `"amount" must be a number`},
		{"currency", "currency.rates", map[string]any{"base": "USD", "symbols": []any{"EUR", "JPY"}}, map[string]any{"rates": map[string]any{"EUR": 0.9214, "JPY": 152.0}}, ""},
		{"currency", "currency.list_currencies", map[string]any{}, nil, ""},
		{"units", "units.convert", map[string]any{"value": 10, "from_unit": "km", "to_unit": "mi"}, map[string]any{"value": 6.2137, "unit": "mi"}, ""},
		{"units", "units.convert", map[string]any{"value": 100, "from_unit": "C", "to_unit": "degF"}, map[string]any{"value": 212.0}, ""},
		{"units", "units.convert", map[string]any{"value": -40, "from_unit": "F", "to_unit": "celsius"}, map[string]any{"value": -40.0}, ""},
		{"units", "units.convert", map[string]any{"value": 1, "from_unit": "kg", "to_unit": "km"}, nil, "cannot convert kg (mass) to km (length)"},
		{"units", "units.calculate", map[string]any{"expression": "(2 + 3) * -4 / 8"}, map[string]any{"result": -2.5}, ""},
		{"units", "units.calculate", map[string]any{"expression": "1 / (3 - 3)"}, nil, "division by zero"},
		{"units", "units.calculate", map[string]any{"expression": "2 ** 3"}, nil, "unexpected"},
		{"units", "units.calculate", map[string]any{"expression": "os.exit(1)"}, nil, "unexpected"},
		{"timezone", "timezone.convert_time", map[string]any{"time": "2025-03-10T12:00", "from_zone": "Europe/Paris", "to_zone": "America/New_York"},
			map[string]any{"time": "2025-03-10T07:00", "utc": "2025-03-10T11:00:00Z", "offset": "-04:00"}, ""},
		{"timezone", "timezone.convert_time", map[string]any{"time": "2025-01-10T09:30:15", "from_zone": "UTC", "to_zone": "Asia/Tokyo"},
			map[string]any{"time": "2025-01-10T18:30:15", "offset": "+09:00"}, ""},
		{"timezone", "timezone.convert_time", map[string]any{"time": "noon", "from_zone": "UTC", "to_zone": "UTC"}, nil, "is not YYYY-MM-DD"},
		{"timezone", "timezone.convert_time", map[string]any{"time": "2025-01-10T09:30", "from_zone": "Mars/Olympus", "to_zone": "UTC"}, nil, "unknown time zone"},
		{"timezone", "timezone.world_clock", map[string]any{"zones": []any{"Nowhere/City"}}, nil, "unknown time zone"},
		{"text", "text.stats", map[string]any{"text": "Hello world. This is Toolsmith."}, map[string]any{"words": 5.0, "sentences": 2.0, "characters": 31.0, "lines": 1.0, "reading_time_seconds": 2.0}, ""},
		{"text", "text.stats", map[string]any{"text": ""}, map[string]any{"words": 0.0, "sentences": 0.0, "lines": 0.0}, ""},
		{"text", "text.nope", map[string]any{}, nil, `unknown tool "text.nope"`},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %v", c.tool, c.args), func(t *testing.T) {
			m, err := New(c.module)
			if err != nil {
				t.Fatal(err)
			}
			code, out := post(t, m, "", map[string]any{"tool_name": c.tool, "arguments": c.args, "user_id": "u1"})
			if code != 200 || out["tool_name"] != c.tool {
				t.Fatalf("code %d out %v", code, out)
			}
			if c.err != "" {
				if out["success"] != false || !strings.Contains(fmt.Sprint(out["error"]), c.err) {
					t.Fatalf("out = %v, want error %q", out, c.err)
				}
				return
			}
			res, _ := out["result"].(map[string]any)
			if out["success"] != true {
				t.Fatalf("out = %v", out)
			}
			for k, v := range c.want {
				if fmt.Sprint(res[k]) != fmt.Sprint(v) {
					t.Errorf("%s = %v, want %v (result %v)", k, res[k], v, res)
				}
			}
		})
	}
}

func TestIdempotencyAndRecording(t *testing.T) {
	m, _ := New("currency")
	body := map[string]any{"tool_name": "currency.convert", "arguments": map[string]any{"amount": 1, "from": "USD", "to": "EUR"}}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(t, m, "wf/7", body)
		}()
	}
	wg.Wait()
	post(t, m, "wf/8", body)
	post(t, m, "", body)
	post(t, m, "", body)
	if got := m.Executions("wf/7"); got != 1 {
		t.Fatalf("key wf/7 executed %d times, want 1", got)
	}
	if got, calls := m.Executions(""), len(m.Calls()); got != 4 || calls != 11 {
		t.Fatalf("executions %d calls %d, want 4 and 11", got, calls)
	}
}

func TestFailuresAndDelay(t *testing.T) {
	m, _ := New("units")
	m.FailWith("units.convert", http.StatusBadGateway)
	body := map[string]any{"tool_name": "units.convert", "arguments": map[string]any{"value": 1, "from_unit": "m", "to_unit": "ft"}}
	if code, _ := post(t, m, "k1", body); code != http.StatusBadGateway {
		t.Fatalf("code %d", code)
	}
	m.FailWith("units.convert", 0)
	// A failed call is not remembered: the retry with the same key runs.
	if _, out := post(t, m, "k1", body); out["success"] != true {
		t.Fatalf("retry after failure: %v", out)
	}
	m.SetDelay(30 * time.Millisecond)
	start := time.Now()
	post(t, m, "", body)
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("delay not applied")
	}
}

func TestHTTPSurface(t *testing.T) {
	mux, mods := Mux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if len(mods) != len(Names()) {
		t.Fatalf("mods = %v", mods)
	}
	resp, err := http.Get(srv.URL + "/units/manifest")
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Name  string          `json:"name"`
		Tools []tool.Manifest `json:"tools"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&man)
	resp.Body.Close()
	if man.Name != "units" || len(man.Tools) != 2 || man.Tools[1].ToolID != "units.convert" {
		t.Fatalf("manifest = %+v", man)
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{{"POST", "/units/manifest", 405}, {"GET", "/units/execute", 405}, {"GET", "/units/other", 404}} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s %s = %d, want %d", c.method, c.path, resp.StatusCode, c.code)
		}
	}
	resp, err = http.Post(srv.URL+"/text/execute", "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("malformed body: %d", resp.StatusCode)
	}
	if _, err := New("weather"); err == nil {
		t.Fatal("unknown module accepted")
	}
}

// TestManifestsAreValid runs every demo manifest through Toolsmith's own
// manifest validation (schemas, examples against both schemas) and checks
// each example against the tool's actual behaviour.
func TestManifestsAreValid(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC) }
	for _, name := range Names() {
		m, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		m.SetClock(clock)
		for _, man := range m.Manifests() {
			man := man
			tool.Normalize(&man)
			if err := tool.Validate(&man); err != nil {
				t.Errorf("%s: %v", man.ToolID, err)
			}
			for i, ex := range man.Examples {
				var args map[string]any
				_ = json.Unmarshal(ex.Input, &args)
				_, out := post(t, m, "", map[string]any{"tool_name": man.ToolID, "arguments": args})
				var want any
				_ = json.Unmarshal(ex.Output, &want)
				if !covers(out["result"], want) {
					got, _ := json.Marshal(out["result"])
					t.Errorf("%s example %d: tool returns %s, example says %s", man.ToolID, i, got, ex.Output)
				}
			}
		}
	}
}

// covers reports whether got contains everything want says: every key of a
// wanted object with a covered value, every element of a wanted array
// covered by some element of got's array, equal scalars.
func covers(got, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !covers(g[k], v) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return false
		}
		for _, wv := range w {
			found := false
			for _, gv := range g {
				found = found || covers(gv, wv)
			}
			if !found {
				return false
			}
		}
		return true
	default:
		return fmt.Sprint(got) == fmt.Sprint(want)
	}
}

// TestOverflowIsAnInputError: a conversion overflowing to +Inf is the
// caller's inputs out of range: a 422 naming it, not a 500 a retry repeats.
func TestOverflowIsAnInputError(t *testing.T) {
	for _, c := range []struct {
		module, tool string
		args         map[string]any
	}{
		{"units", "units.convert", map[string]any{"value": 1e308, "from_unit": "mi", "to_unit": "km"}},
		{"currency", "currency.convert", map[string]any{"amount": 1e308, "from": "USD", "to": "JPY"}},
	} {
		m, _ := New(c.module)
		code, out := post(t, m, "", map[string]any{"tool_name": c.tool, "arguments": c.args})
		if code != http.StatusUnprocessableEntity || out["success"] != false || !strings.Contains(fmt.Sprint(out["error"]), "out of range") {
			t.Fatalf("%s overflowing: %d %v, want 422 saying the inputs are out of range", c.tool, code, out)
		}
	}
}
