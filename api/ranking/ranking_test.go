package ranking_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api/ranking"
	"github.com/toolsmith/toolsmith/retrieval"
	"github.com/toolsmith/toolsmith/retrieval/retrain"
	"github.com/toolsmith/toolsmith/retrieval/retrievaltest"
)

// TestRoutesRefuseBadInput: bad bodies and queries get a 4xx naming the
// field before anything starts; without a Temporal client a retrain is
// 503; a missing version is 404.
func TestRoutesRefuseBadInput(t *testing.T) {
	gin.SetMode(gin.TestMode)
	emb := retrievaltest.Words{Dim: 16}
	st := retrievaltest.Store(t, emb)
	svc, err := retrain.New(st, emb, retrieval.New(st, emb, retrieval.Options{}), retrieval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := gin.New()
	ranking.New(svc, nil, "").Mount(r.Group("/api/v1"))
	call := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, c := range []struct {
		method, path, body string
		code               int
		field              string
	}{
		{"POST", "/api/v1/admin/ranking/retrain", `{"options":`, http.StatusBadRequest, ""},
		{"POST", "/api/v1/admin/ranking/retrain", `{"options":{"scales":[0]}}`, http.StatusUnprocessableEntity, "options.scales[0]"},
		{"POST", "/api/v1/admin/ranking/retrain", `{"options":{"heldOut":1}}`, http.StatusUnprocessableEntity, "options.heldOut"},
		{"POST", "/api/v1/admin/ranking/retrain", `{"gate":{"minHeldOut":-1}}`, http.StatusUnprocessableEntity, "gate.minHeldOut"},
		{"POST", "/api/v1/admin/ranking/retrain", `{"epochs":3}`, http.StatusBadRequest, "epochs"},
		{"POST", "/api/v1/admin/ranking/retrain", ``, http.StatusServiceUnavailable, ""},
		{"GET", "/api/v1/admin/ranking/versions?limit=0", ``, http.StatusBadRequest, "limit"},
		{"POST", "/api/v1/admin/ranking/versions/rv-x/rollback", ``, http.StatusNotFound, ""},
		// Rollback has no body fields: an unknown one is named, not ignored.
		{"POST", "/api/v1/admin/ranking/versions/none/rollback", `{"x":1}`, http.StatusBadRequest, `"path":"x"`},
		{"POST", "/api/v1/admin/ranking/versions/none/rollback", `[]`, http.StatusBadRequest, "body"},
		{"POST", "/api/v1/admin/ranking/versions/none/rollback", `{}`, http.StatusOK, "promoted"},
		{"POST", "/api/v1/admin/ranking/versions/none/rollback", ``, http.StatusOK, "promoted"},
	} {
		code, body := call(c.method, c.path, c.body)
		if code != c.code || !strings.Contains(body, c.field) {
			t.Errorf("%s %s %s: HTTP %d %s, want %d naming %q", c.method, c.path, c.body, code, body, c.code, c.field)
		}
	}
	code, body := call("GET", "/api/v1/admin/ranking/versions", "")
	var env struct {
		Data ranking.Versions `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &env); code != http.StatusOK || err != nil || env.Data.Promoted != retrain.Baseline || env.Data.Versions == nil {
		t.Fatalf("list: HTTP %d %s", code, body)
	}
}
