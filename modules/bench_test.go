package modules

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/toolsmith/toolsmith/internal/demomodule"
)

// BenchmarkExecute measures one routed call to a local module: argument
// validation against inputSchema, the HTTP round trip to the demo currency
// module, result decoding and outputSchema validation. It is the module
// share of the substitute branch's latency budget.
func BenchmarkExecute(b *testing.B) {
	mod, err := demomodule.New("currency")
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(mod)
	defer srv.Close()
	cfg := NewConfig()
	if err := cfg.Add("currency=" + srv.URL); err != nil {
		b.Fatal(err)
	}
	r := NewRouter(cfg)
	man := mod.Manifests()[0]
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res := r.Execute(ctx, Call{ToolName: "currency.convert", Arguments: map[string]any{"amount": 100.0, "from": "USD", "to": "EUR"},
			IdempotencyKey: "bench/" + strconv.Itoa(i), InputSchema: man.InputSchema, OutputSchema: man.OutputSchema})
		if !res.Success {
			b.Fatal(res.Error)
		}
	}
}

// BenchmarkMapInputs measures fitting inputs to a schema by name.
func BenchmarkMapInputs(b *testing.B) {
	in := map[string]any{"Amount": 100.0, "FROM": "USD", "to": "EUR"}
	for b.Loop() {
		if _, err := MapInputs(convertIn, in); err != nil {
			b.Fatal(err)
		}
	}
}
