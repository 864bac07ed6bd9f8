package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestDevDecision runs the decision in the default make-run shape (dev
// wiring, the demo catalogue, the built-in USE-Lite embedder and the
// default rule): a paraphrase of a catalogue tool, with inputs that fill
// its parameters, substitutes it; a verb no tool serves does not
// substitute anything. It needs the USE-Lite weights (TOOLSMITH_MODEL_DIR).
func TestDevDecision(t *testing.T) {
	modelDir := os.Getenv("TOOLSMITH_MODEL_DIR")
	if modelDir == "" {
		t.Skip("set TOOLSMITH_MODEL_DIR (USE-Lite weights) to run the decision as make run does")
	}
	in := startDev(t, t.TempDir(), "--embedder", "use-lite", "--model-dir", modelDir)
	type result struct {
		Branch        string   `json:"branch"`
		Reason        string   `json:"reason"`
		Tools         []string `json:"tools"`
		Tool          string   `json:"tool"`
		MissingInputs []string `json:"missingInputs"`
		Scores        []struct {
			ToolID     string  `json:"toolId"`
			Similarity float64 `json:"similarity"`
			Score      float64 `json:"score"`
		} `json:"scores"`
	}
	fulfil := func(verb, desc string, inputs map[string]any) result {
		t.Helper()
		code, env := in.call(t, http.MethodPost, "/api/v1/verbs?wait=60s", map[string]any{
			"verb": verb, "description": desc, "inputs": inputs, "options": map[string]any{"dryRun": true},
		}, "Authorization", in.auth)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", verb, code, env.Data)
		}
		var run struct {
			Result result `json:"result"`
		}
		if err := json.Unmarshal(env.Data, &run); err != nil {
			t.Fatalf("%s: %v in %s", verb, err, env.Data)
		}
		return run.Result
	}

	exchange := fulfil("EXCHANGE_MONEY", "change my dollars into yen", map[string]any{"amount": 100, "from": "USD", "to": "JPY"})
	if exchange.Branch != "substitute" || len(exchange.Tools) != 1 || exchange.Tools[0] != "currency.convert" {
		t.Fatalf("EXCHANGE_MONEY: branch %q tools %v (%s; scores %+v), want currency.convert substituted", exchange.Branch, exchange.Tools, exchange.Reason, exchange.Scores)
	}
	t.Logf("EXCHANGE_MONEY: %s", exchange.Reason)

	pizza := fulfil("ORDER_PIZZA", "order a large pizza for delivery", map[string]any{"size": "large", "toppings": []string{"mushrooms"}, "address": "1 Main St"})
	if pizza.Branch == "substitute" || len(pizza.Tools) != 0 {
		t.Fatalf("ORDER_PIZZA: branch %q tools %v (%s), want nothing substituted", pizza.Branch, pizza.Tools, pizza.Reason)
	}
	t.Logf("ORDER_PIZZA: %s (%s)", pizza.Branch, pizza.Reason)
	// Without inputs the inputs' fit says nothing; the best candidate
	// (restaurant.search) is a module dev does not serve, so it could not
	// run anyway.
	pizza = fulfil("ORDER_PIZZA", "order a large pizza for delivery", nil)
	if pizza.Branch == "substitute" || len(pizza.Tools) != 0 || !strings.Contains(pizza.Reason, "cannot run") {
		t.Fatalf("ORDER_PIZZA without inputs: branch %q tools %v (%s), want nothing substituted", pizza.Branch, pizza.Tools, pizza.Reason)
	}
	t.Logf("ORDER_PIZZA without inputs: %s (%s)", pizza.Branch, pizza.Reason)

	// A confident match whose required parameters a verb without inputs
	// cannot fill is named, with what it needs, and does not run.
	for _, c := range []struct{ verb, desc, tool string }{
		{"CONVERT_CURRENCY", "convert an amount of money between currencies", "currency.convert"},
		{"CONVERT_UNITS", "convert miles to kilometres", "units.convert"},
	} {
		for _, inputs := range []map[string]any{nil, {}} {
			r := fulfil(c.verb, c.desc, inputs)
			if r.Branch != "needs_inputs" || r.Tool != c.tool || len(r.MissingInputs) == 0 || len(r.Tools) != 0 {
				t.Fatalf("%s without inputs (%v): branch %q tool %q missing %v tools %v (%s), want needs_inputs naming %s",
					c.verb, inputs, r.Branch, r.Tool, r.MissingInputs, r.Tools, r.Reason, c.tool)
			}
			t.Logf("%s without inputs: %s", c.verb, r.Reason)
		}
	}
}
