package registry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/registry"
)

// These benchmarks measure the registry's own cost — parsing, validation
// (including JSON Schema compilation and example checks), projection and the
// SQLite write — with a cheap fake embedder; add the real embedder's
// per-text cost to get end-to-end figures. They report registrations/s.

func BenchmarkRegister(b *testing.B) {
	ctx := context.Background()
	svc := registry.New(openSQLite(b), &fakeEmbedder{dim: 384})
	reqs := make([]registry.Request, b.N)
	for i := range reqs {
		reqs[i] = registry.Request{Manifest: manifest(fmt.Sprintf("bench.t%07d", i),
			`"examples":[{"input":{"amount":1,"from":"USD","to":"EUR"},"output":{"converted":0.9,"rate":0.9}}]`)}
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := svc.Register(ctx, reqs[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "regs/s")
}

func BenchmarkBatchRegister(b *testing.B) {
	ctx := context.Background()
	const batch = 256
	svc := registry.New(openSQLite(b), &fakeEmbedder{dim: 384})
	n := 0
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		reqs := make([]registry.Request, batch)
		for j := range reqs {
			reqs[j] = registry.Request{Manifest: manifest(fmt.Sprintf("bench.b%05d_%03d", i, j))}
		}
		for _, r := range svc.BatchRegister(ctx, reqs, registry.BatchOptions{}) {
			if r.Status != registry.StatusCreated {
				b.Fatalf("item %d: %+v", r.Index, r.Error)
			}
		}
		n += batch
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "regs/s")
}
