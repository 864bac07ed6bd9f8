package registry_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/embed/use"
	"github.com/toolsmith/toolsmith/internal/cputime"
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

// BenchmarkBatchRegisterUSELite registers batches of 100 tools (the
// batch-register call `toolsmith bench` makes) into SQLite with the built-in
// USE-Lite embedder, from TOOLSMITH_MODEL_DIR. One op is one batch. The
// near-limit case holds a live heap of many small pointer objects (as a
// 100,000-tool catalogue does) with the memory limit about 100 MB above it,
// as `toolsmith bench --tools 100000 --memory-limit 1073741824` runs: there
// every byte registration allocates brings the next full mark of that heap
// closer, so what a registration allocates, not only its CPU, sets the
// rate. It reports tools/s, the collections per batch, the bytes
// allocated per tool and the process's CPU time per tool (on a shared
// machine wall time also measures the scheduler).
func BenchmarkBatchRegisterUSELite(b *testing.B) {
	dir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if dir == "" {
		b.Skip("TOOLSMITH_MODEL_DIR not set; run through `make bench`")
	}
	m, err := use.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		ballast int // live objects of 64 bytes
	}{{"heap=small", 0}, {"heap=near-limit", 4 << 20}} {
		b.Run(tc.name, func(b *testing.B) {
			svc := registry.New(openSQLite(b), m)
			ballast := make([]*ballastObj, tc.ballast)
			for i := range ballast {
				ballast[i] = &ballastObj{}
				if i > 0 {
					ballast[i].next = ballast[i-1]
				}
			}
			if tc.ballast > 0 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(ms.Sys-ms.HeapReleased) + 96<<20))
			}
			const batch = 100
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0, _ := cputime.Process()
			b.ResetTimer()
			n := 0
			for i := range b.N {
				reqs := make([]registry.Request, batch)
				for j := range reqs {
					id := fmt.Sprintf("bench.u%05d_%03d", i, j)
					reqs[j] = registry.Request{Manifest: manifest(id, `"description":`+q(benchDescription(i*batch+j)))}
				}
				for _, r := range svc.BatchRegister(context.Background(), reqs, registry.BatchOptions{}) {
					if r.Status != registry.StatusCreated {
						b.Fatalf("item %d: %+v", r.Index, r.Error)
					}
				}
				n += batch
			}
			b.StopTimer()
			cpu1, _ := cputime.Process()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tools/s")
			b.ReportMetric(float64(after.NumGC-before.NumGC)/float64(b.N), "GCs/op")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n), "B/tool")
			b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/float64(n), "cpu-ms/tool")
			runtime.KeepAlive(ballast)
		})
	}
}

type ballastObj struct {
	next *ballastObj
	_    [56]byte // 64 bytes an object, as a catalogue's small records
}

// benchDescription is a tool description of 15 to 30 words, different for
// every i.
func benchDescription(i int) string {
	verbs := []string{"List", "Create", "Update", "Delete", "Fetch", "Search", "Export", "Archive", "Validate", "Summarise", "Translate"}
	things := []string{"invoices", "calendar events", "pull requests", "support tickets", "shipping labels", "weather forecasts", "exchange rates", "user accounts", "playlists", "product reviews", "DNS records", "build artifacts", "survey responses"}
	extras := []string{"filtered by date range and status", "for the signed-in customer", "with pagination and sorting options", "in the given region", "including their attachments and comments", "as CSV or JSON", "newest first, with authors and labels", "for a project and an environment"}
	return fmt.Sprintf("%s the %s of workspace %d %s; returns at most %d items %s and the total count.",
		verbs[i%len(verbs)], things[(i/len(verbs))%len(things)], i, extras[(i/7)%len(extras)], 10+i%90, extras[(i/3)%len(extras)])
}
