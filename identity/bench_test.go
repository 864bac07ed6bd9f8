package identity_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolsmith/toolsmith/graph/sqlite"
	"github.com/toolsmith/toolsmith/identity"
	"github.com/toolsmith/toolsmith/identity/identitytest"
)

// BenchmarkAuthenticate measures authenticating an API key per request,
// with the key cache warm (the common case) and cold (every request hashes
// the secret and reads the store), and reports the p95 of single calls.
func BenchmarkAuthenticate(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", identity.DefaultKeyCacheTTL}, {"uncached", 0}} {
		b.Run(tc.name+"/sqlite", func(b *testing.B) {
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "keys.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			keys := identity.NewKeyService(st)
			keys.SetCacheTTL(tc.ttl)
			auth := &identity.Authenticator{Keys: keys}
			header := identitytest.Bearer(b, keys, identity.NewKey{Level: "user", Roles: []string{"approver"}})
			if _, err := auth.Authenticate(ctx, header); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := auth.Authenticate(ctx, header); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds())/1e3, "p95-µs")
		})
	}
}
