package analytics_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	domain "github.com/toolsmith/toolsmith/analytics"
	"github.com/toolsmith/toolsmith/api"
	apianalytics "github.com/toolsmith/toolsmith/api/analytics"
	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// GET /tools/admin/series answers a series at the asked resolution, the
// finer points not yet rolled up included, with p50 and p95; bad input is
// a 400 naming the field.
func TestSeries(t *testing.T) {
	gin.SetMode(gin.TestMode)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hour := graph.Truncate(time.Now(), graph.ResHour).Add(-time.Hour)
	hist := make([]float64, len(graph.LatencyBucketsMs))
	hist[3] = 4 // four searches of at most 50 ms
	if err := st.AddSeriesPoints(context.Background(), []graph.SeriesPoint{
		{Series: "search", Res: graph.ResHour, At: hour, Count: 4, Sum: 120, Hist: hist},
		{Series: "search", Res: graph.ResMinute, At: hour.Add(5 * time.Minute), Count: 4, Sum: 120, Hist: hist},
	}); err != nil {
		t.Fatal(err)
	}
	keys := identity.NewKeyService(identitytest.NewMem())
	h := api.New(api.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Auth: &identity.Authenticator{Keys: keys}},
		apianalytics.New(st, nil)).Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Owner: "op", Level: "admin"})
	get := func(q string) (int, []byte) {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/tools/admin/series?"+q, nil)
		req.Header.Set("Authorization", admin)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes()
	}
	code, body := get("series=search&res=hour")
	var out struct {
		Data struct {
			Points []apianalytics.SeriesPoint `json:"points"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil || code != http.StatusOK || len(out.Data.Points) != 1 {
		t.Fatalf("series: %d %s", code, body)
	}
	if p := out.Data.Points[0]; p.Count != 8 || p.Mean != 30 || p.P50 != 50 || p.P95 != 50 || !p.At.Equal(hour) {
		t.Fatalf("point: %+v", p)
	}
	soon := time.Now().Add(domain.SinceSkew / 2).UTC().Format(time.RFC3339) // within the clock skew allowed
	if code, body := get("series=search&since=" + soon); code != http.StatusOK {
		t.Errorf("since a moment ahead: %d %s", code, body)
	}
	for q, fields := range map[string][]string{"series=search&res=week": {"res"}, "res=hour": {"series"}, "series=search&since=yesterday": {"since"},
		"series=search&since=9999-12-31T23:59:59Z": {"since"}, "series=x&prefix=y": {"series", "prefix"}} {
		code, body := get(q)
		if code != http.StatusBadRequest || !json.Valid(body) {
			t.Errorf("%s: %d %s", q, code, body)
		}
		for _, field := range fields {
			if !strings.Contains(string(body), `"path":"`+field+`"`) {
				t.Errorf("%s: %d %s, want %s named", q, code, body, field)
			}
		}
	}
}

// A report's since in the future (past the clock skew allowed) is a 400
// naming since, not an empty report echoing it.
func TestReportRefusesSinceInTheFuture(t *testing.T) {
	gin.SetMode(gin.TestMode)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys := identity.NewKeyService(identitytest.NewMem())
	h := api.New(api.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Auth: &identity.Authenticator{Keys: keys}},
		apianalytics.New(st, nil)).Handler()
	admin := identitytest.Bearer(t, keys, identity.NewKey{Owner: "op", Level: "admin"})
	for since, want := range map[string]int{
		"9999-12-31T23:59:59Z":                                http.StatusBadRequest,
		time.Now().Add(time.Hour).UTC().Format(time.RFC3339):  http.StatusBadRequest,
		time.Now().Add(-time.Hour).UTC().Format(time.RFC3339): http.StatusOK,
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/tools/admin/analytics?since="+since, nil)
		req.Header.Set("Authorization", admin)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want || (want != http.StatusOK && !strings.Contains(rec.Body.String(), `"path":"since"`)) {
			t.Errorf("since=%s: %d %s, want %d", since, rec.Code, rec.Body, want)
		}
	}
}

// An admin's analytics (live or scheduled) name no tool only a role it
// lacks may execute, nor a query only such a tool served; the owner's
// name them all.
func TestReportShowsOnlyToolsTheReaderMayExecute(t *testing.T) {
	gin.SetMode(gin.TestMode)
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "g.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.EnsureEmbedder(ctx, graph.EmbedderInfo{Model: "m", Dimension: 2}); err != nil {
		t.Fatal(err)
	}
	for id, perms := range map[string][]string{"deployer.deploy_app": {"role:developer"}, "currency.convert": nil} {
		if _, err := st.UpsertTool(ctx, graph.Tool{ToolSummary: graph.ToolSummary{ID: id, Verb: "DO", Name: id, Category: "c",
			Status: graph.StatusActive, Permissions: perms}, Embedding: []float32{1, 0}}); err != nil {
			t.Fatal(err)
		}
	}
	var ev []graph.UsageEvent
	for i := 0; i < 6; i++ {
		ev = append(ev, graph.UsageEvent{ToolID: "deployer.deploy_app", Query: "ship the secret app", Success: i == 0},
			graph.UsageEvent{ToolID: "currency.convert", Query: "convert eur", Success: true})
	}
	if err := st.RecordUsage(ctx, ev); err != nil {
		t.Fatal(err)
	}
	full, err := domain.Build(ctx, st, nil, domain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := domain.Publish(ctx, st, full); err != nil {
		t.Fatal(err)
	}
	keys := identity.NewKeyService(identitytest.NewMem())
	h := api.New(api.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Auth: &identity.Authenticator{Keys: keys}},
		apianalytics.New(st, nil)).Handler()
	for _, level := range []string{"admin", "owner"} {
		key := identitytest.Bearer(t, keys, identity.NewKey{Owner: "op-" + level, Level: level})
		for _, src := range []string{"live", "scheduled"} {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/tools/admin/analytics?source="+src, nil)
			req.Header.Set("Authorization", key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, "currency.convert") || !strings.Contains(body, "convert eur") {
				t.Fatalf("%s %s: %d %s", level, src, rec.Code, body)
			}
			for _, hidden := range []string{"deployer.deploy_app", "ship the secret app"} {
				if strings.Contains(body, hidden) != (level == "owner") {
					t.Errorf("%s %s: %q shown = %v: %s", level, src, hidden, level != "owner", body)
				}
			}
			if strings.Contains(body, "queryTools") {
				t.Errorf("%s %s: the scheduled report's query index leaked: %s", level, src, body)
			}
		}
	}
}
