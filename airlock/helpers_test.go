package airlock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolsmith/toolsmith/codegen"
	"github.com/toolsmith/toolsmith/templates"
)

// testOnboarder builds the real generator and the wrapper build's module
// requirements, as the worker does; validate, when set, is the registry's
// check of each manifest.
func testOnboarder(t *testing.T, ctx context.Context) *Onboarder {
	t.Helper()
	reqs, err := codegen.BuildRequires(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	g, err := codegen.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	return &Onboarder{Generator: g, Requires: reqs}
}

// petsAPI is the upstream an approved pet-clinic wrapper calls: every
// request gets the one pet.
func petsAPI(t *testing.T) *httptest.Server {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"id": "rex-1", "name": "Rex", "species": "dog"}]`))
	}))
	t.Cleanup(api.Close)
	return api
}
