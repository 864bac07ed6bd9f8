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
