package builds_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/toolsmith/toolsmith/api/builds"
)

// A build's options are checked before anything starts: a value out of
// range is 422 naming the field, a wrong JSON type 400 naming it.
func TestStartRefusesBadOptions(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	// No build service: every case must be refused before it is needed.
	builds.New(nil).Mount(r.Group("/api/v1"))
	for _, c := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"reviewTimeout": "100000h"}`, http.StatusUnprocessableEntity, "reviewTimeout"},
		{`{"reviewTimeout": "721h"}`, http.StatusUnprocessableEntity, "reviewTimeout"},
		{`{"reviewTimeout": "30s"}`, http.StatusUnprocessableEntity, "reviewTimeout"},
		{`{"reviewTimeout": "soon"}`, http.StatusUnprocessableEntity, "reviewTimeout"},
		{`{"rounds": 9}`, http.StatusUnprocessableEntity, "rounds"},
		{`{"expected": "` + strings.Repeat("x", 1001) + `"}`, http.StatusUnprocessableEntity, "expected"},
		{`{"rounds": "3"}`, http.StatusBadRequest, "rounds"},
		{`{"reviewTimeout": 72}`, http.StatusBadRequest, "reviewTimeout"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/gaps/ROMAN_NUMERAL/build", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != c.code || !strings.Contains(w.Body.String(), c.field) {
			t.Errorf("%.60s: HTTP %d %s, want %d naming %s", c.body, w.Code, w.Body, c.code, c.field)
		}
	}
}
