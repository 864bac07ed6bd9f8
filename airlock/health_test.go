package airlock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestProberAndHealthRecord(t *testing.T) {
	var methods []string
	status := http.StatusMethodNotAllowed
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method)
		if r.Method == http.MethodHead {
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	p := &Prober{}
	ctx := context.Background()
	if got := p.Probe(ctx, srv.URL); !got.OK || got.Status != 404 || len(methods) != 2 || methods[0] != "HEAD" {
		t.Fatalf("probe %+v methods %v", got, methods)
	}
	status = http.StatusBadGateway
	if got := p.Probe(ctx, srv.URL); got.OK || got.Status != 502 {
		t.Fatalf("5xx must fail: %+v", got)
	}
	srv.Close()
	down := p.Probe(ctx, srv.URL)
	if down.OK || down.Error == "" {
		t.Fatalf("closed server must fail: %+v", down)
	}
	var h Health
	var disable bool
	for i := 0; i < 3; i++ {
		h, disable = h.Record(down, 3)
		if disable != (i == 2) {
			t.Fatalf("probe %d: disable=%v", i, disable)
		}
	}
	if h, disable = h.Record(down, 3); disable {
		t.Fatal("disable is raised once, when the threshold is reached")
	}
	h, _ = h.Record(Probe{OK: true, LatencyMs: 10}, 3)
	if h.Consecutive != 0 || h.Probes != 5 || h.ErrorRate() != 0.8 {
		t.Fatalf("health %+v rate %v", h, h.ErrorRate())
	}
}

type statusLog map[string]string

func (s statusLog) SetStatus(_ context.Context, id, status, _ string) error {
	s[id] = status
	return nil
}

func TestHealthCheckerDisablesAfterThresholdAndEnableRestores(t *testing.T) {
	ctx := context.Background()
	files := &Files{Root: t.TempDir()}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer down.Close()
	if err := files.SaveApproval(Approval{ID: "a1", Slug: "pets", BaseURL: down.URL, ToolIDs: []string{"pets.list_pets"}}); err != nil {
		t.Fatal(err)
	}
	tools := statusLog{}
	store, _ := openShared(t)
	notes := NewNotificationLog(store)
	hc := &HealthChecker{Files: files, Prober: &Prober{}, Tools: tools, Notifier: notes, Threshold: 2}
	for i := 0; i < 2; i++ {
		rep, err := hc.CheckAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if (len(rep.Disabled) == 1) != (i == 1) {
			t.Fatalf("round %d: %+v", i, rep)
		}
	}
	if listed, err := notes.List(ctx, 0); tools["pets.list_pets"] != "disabled" || len(listed) != 1 || err != nil {
		t.Fatalf("after failures: %v notes=%v %v", tools, listed, err)
	}
	h, _ := files.Health(context.Background(), "pets")
	if h.Consecutive != 2 || h.ErrorRate() != 1 {
		t.Fatalf("health %+v", h)
	}
	ids, err := hc.Enable(ctx, "pets", "fixed upstream")
	if err != nil || len(ids) != 1 || tools["pets.list_pets"] != "active" {
		t.Fatalf("enable: %v %v %v", ids, err, tools)
	}
	if h, _ := files.Health(context.Background(), "pets"); h.Consecutive != 0 {
		t.Fatalf("health after enable: %+v", h)
	}
}
