package demomodule

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // timezone tools must work on machines without zoneinfo
	"unicode"

	"github.com/toolsmith/toolsmith/tool"
)

// RatesAsOf is the timestamp of the demo rate table.
const RatesAsOf = "2026-11-22T08:00:00Z"

// RatesSource labels every currency result so nobody mistakes it for live data.
const RatesSource = "Toolsmith demo rate table (fixed, illustrative, not live market data)"

// Rates are DEMO units of each currency per 1 USD. They are fixed,
// illustrative numbers chosen to agree with the demo catalogue's examples;
// they are not market data and must not be used for money.
var Rates = map[string]float64{
	"USD": 1,
	"EUR": 0.9214,
	"GBP": 0.7804,
	"JPY": 151.98,
	"CHF": 0.8790,
	"CAD": 1.3950,
	"AUD": 1.5320,
	"CNY": 7.2410,
	"INR": 84.40,
	"MXN": 20.31,
	"BRL": 5.7800,
	"SEK": 10.92,
}

// currencyNames are the names and symbols list_currencies returns.
var currencyNames = map[string][2]string{
	"USD": {"US dollar", "$"}, "EUR": {"Euro", "€"}, "GBP": {"Pound sterling", "£"}, "JPY": {"Japanese yen", "¥"},
	"CHF": {"Swiss franc", "Fr."}, "CAD": {"Canadian dollar", "C$"}, "AUD": {"Australian dollar", "A$"},
	"CNY": {"Chinese yuan", "¥"}, "INR": {"Indian rupee", "₹"}, "MXN": {"Mexican peso", "Mex$"},
	"BRL": {"Brazilian real", "R$"}, "SEK": {"Swedish krona", "kr"},
}

func currencyCodes() []string {
	codes := make([]string, 0, len(Rates))
	for c := range Rates {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

func rateOf(code string) (float64, error) {
	r, ok := Rates[strings.ToUpper(code)]
	if !ok {
		return 0, fmt.Errorf("unsupported currency %q (demo table has %s)", code, strings.Join(currencyCodes(), ", "))
	}
	return r, nil
}

func convertCurrency(args map[string]any) (any, error) {
	amount, err := number(args, "amount")
	if err != nil {
		return nil, err
	}
	if amount < 0 {
		return nil, fmt.Errorf("amount must not be negative, got %v", amount)
	}
	from, err := str(args, "from")
	if err != nil {
		return nil, err
	}
	to, err := str(args, "to")
	if err != nil {
		return nil, err
	}
	rf, err := rateOf(from)
	if err != nil {
		return nil, err
	}
	rt, err := rateOf(to)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"amount": amount, "from": strings.ToUpper(from), "to": strings.ToUpper(to),
		"rate": round(rt/rf, 6), "converted": round(amount*rt/rf, 2),
		"as_of": RatesAsOf, "source": RatesSource,
	}, nil
}

func exchangeRates(args map[string]any) (any, error) {
	base, err := str(args, "base")
	if err != nil {
		return nil, err
	}
	rb, err := rateOf(base)
	if err != nil {
		return nil, err
	}
	symbols := currencyCodes()
	if raw, ok := args["symbols"].([]any); ok && len(raw) > 0 {
		symbols = symbols[:0:0]
		for _, s := range raw {
			code, ok := s.(string)
			if !ok {
				return nil, fmt.Errorf("symbols must be strings, got %T", s)
			}
			symbols = append(symbols, strings.ToUpper(code))
		}
	}
	rates := map[string]any{}
	for _, code := range symbols {
		r, err := rateOf(code)
		if err != nil {
			return nil, err
		}
		if !strings.EqualFold(code, base) {
			rates[code] = sig(r/rb, 4) // 4 significant digits, as the catalogue quotes rates
		}
	}
	return map[string]any{"base": strings.ToUpper(base), "rates": rates, "as_of": RatesAsOf, "source": RatesSource}, nil
}

func listCurrencies(map[string]any) (any, error) {
	var out []any
	for _, code := range currencyCodes() {
		n := currencyNames[code]
		out = append(out, map[string]any{"code": code, "name": n[0], "symbol": n[1]})
	}
	return map[string]any{"currencies": out}, nil
}

// unit is a unit of one dimension: value_in_base = (v + offset) * factor.
type unit struct {
	name   string
	dim    string
	factor float64
	offset float64
}

var units = func() map[string]unit {
	m := map[string]unit{}
	add := func(dim string, factor, offset float64, names ...string) {
		for _, n := range names {
			m[strings.ToLower(n)] = unit{name: names[0], dim: dim, factor: factor, offset: offset}
		}
	}
	add("length", 1, 0, "m", "metre", "meter")
	add("length", 1000, 0, "km", "kilometre", "kilometer")
	add("length", 0.01, 0, "cm")
	add("length", 0.001, 0, "mm")
	add("length", 1609.344, 0, "mi", "mile", "miles")
	add("length", 0.9144, 0, "yd")
	add("length", 0.3048, 0, "ft", "foot", "feet")
	add("length", 0.0254, 0, "in", "inch")
	add("mass", 1, 0, "kg")
	add("mass", 0.001, 0, "g")
	add("mass", 1e-6, 0, "mg")
	add("mass", 0.45359237, 0, "lb", "lbs", "pound")
	add("mass", 0.028349523125, 0, "oz")
	add("volume", 1, 0, "l", "litre", "liter")
	add("volume", 0.001, 0, "ml")
	add("volume", 3.785411784, 0, "gal")
	add("volume", 0.946352946, 0, "qt")
	add("volume", 0.2365882365, 0, "cup")
	add("time", 1, 0, "s")
	add("time", 60, 0, "min")
	add("time", 3600, 0, "h")
	add("time", 86400, 0, "day")
	add("temperature", 1, 273.15, "degC", "C", "celsius")
	add("temperature", 1, 0, "K", "kelvin")
	add("temperature", 5.0/9.0, 459.67, "degF", "F", "fahrenheit")
	return m
}()

func unitNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, u := range units {
		if !seen[u.name] {
			seen[u.name] = true
			names = append(names, u.name)
		}
	}
	slices.Sort(names)
	return names
}

// convertUnits converts a quantity; the result keeps 5 significant digits.
func convertUnits(args map[string]any) (any, error) {
	v, err := number(args, "value")
	if err != nil {
		return nil, err
	}
	from, err := str(args, "from_unit")
	if err != nil {
		return nil, err
	}
	to, err := str(args, "to_unit")
	if err != nil {
		return nil, err
	}
	uf, ok := units[strings.ToLower(from)]
	if !ok {
		return nil, fmt.Errorf("unknown unit %q (have %s)", from, strings.Join(unitNames(), ", "))
	}
	ut, ok := units[strings.ToLower(to)]
	if !ok {
		return nil, fmt.Errorf("unknown unit %q (have %s)", to, strings.Join(unitNames(), ", "))
	}
	if uf.dim != ut.dim {
		return nil, fmt.Errorf("cannot convert %s (%s) to %s (%s)", from, uf.dim, to, ut.dim)
	}
	out := (v+uf.offset)*uf.factor/ut.factor - ut.offset
	return map[string]any{"value": sig(out, 5), "unit": to}, nil
}

// calculate evaluates an arithmetic expression (+ - * / parentheses).
func calculate(args map[string]any) (any, error) {
	expr, err := str(args, "expression")
	if err != nil {
		return nil, err
	}
	v, err := evalArithmetic(expr)
	if err != nil {
		return nil, err
	}
	return map[string]any{"result": sig(v, 12)}, nil
}

// localLayouts are the wall-clock formats timezone.convert_time accepts.
var localLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04"}

// convertTime converts a local wall-clock time between IANA zones and
// answers in the input's precision ("2026-12-23T23:00", "+01:00").
func convertTime(args map[string]any) (any, error) {
	ts, err := str(args, "time")
	if err != nil {
		return nil, err
	}
	fromName, err := str(args, "from_zone")
	if err != nil {
		return nil, err
	}
	toName, err := str(args, "to_zone")
	if err != nil {
		return nil, err
	}
	from, err := time.LoadLocation(fromName)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", fromName)
	}
	to, err := time.LoadLocation(toName)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", toName)
	}
	for _, layout := range localLayouts {
		t, perr := time.ParseInLocation(layout, ts, from)
		if perr != nil {
			continue
		}
		out := t.In(to)
		return map[string]any{"time": out.Format(layout), "offset": out.Format("-07:00"), "zone": toName, "utc": t.UTC().Format(time.RFC3339)}, nil
	}
	return nil, fmt.Errorf("time %q is not YYYY-MM-DDTHH:MM[:SS]", ts)
}

// worldClock returns the current time in each zone (from the module clock).
func (m *Module) worldClock(args map[string]any) (any, error) {
	raw, ok := args["zones"].([]any)
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf("argument \"zones\" must be a non-empty array of IANA zone names")
	}
	now := m.now()
	var out []any
	for _, z := range raw {
		name, ok := z.(string)
		if !ok {
			return nil, fmt.Errorf("zones must be strings, got %T", z)
		}
		loc, err := time.LoadLocation(name)
		if err != nil {
			return nil, fmt.Errorf("unknown time zone %q (use IANA names such as Asia/Tokyo)", name)
		}
		out = append(out, map[string]any{"zone": name, "time": now.In(loc).Format(time.RFC3339)})
	}
	return map[string]any{"times": out}, nil
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // static literals only
	}
	return b
}

// textManifest describes text.stats, which the demo catalogue does not
// list: discovery registers it from the module's own manifest.
func textManifest() tool.Manifest {
	return tool.Manifest{
		ToolID:           "text.stats",
		Verb:             "ANALYZE_TEXT_STATISTICS",
		Name:             "Text statistics",
		Description:      "Count the characters, words, sentences and lines of a text and estimate its reading time at 200 words per minute.",
		ShortDescription: "Count words, sentences and characters; estimate reading time",
		Category:         "text",
		Tags:             []string{"text", "word-count", "reading-time", "demo"},
		Module:           "text",
		InputSchema: raw(map[string]any{
			"type":                 "object",
			"required":             []string{"text"},
			"properties":           map[string]any{"text": map[string]any{"type": "string", "description": "The text to analyse"}},
			"additionalProperties": false,
		}),
		OutputSchema: raw(map[string]any{
			"type":     "object",
			"required": []string{"words", "characters"},
			"properties": map[string]any{
				"characters": map[string]any{"type": "integer"}, "words": map[string]any{"type": "integer"},
				"sentences": map[string]any{"type": "integer"}, "lines": map[string]any{"type": "integer"},
				"reading_time_seconds": map[string]any{"type": "integer"},
			},
		}),
		Examples: []tool.Example{{
			Scenario: "A two-sentence text",
			Input:    raw(map[string]any{"text": "Hello world. This is Toolsmith."}),
			Output:   raw(map[string]any{"characters": 31, "words": 5, "sentences": 2, "lines": 1, "reading_time_seconds": 2}),
		}},
		UseCases:   []string{"count words in a document", "estimate reading time of an article"},
		Complexity: tool.ComplexityLow,
		Version:    "1.0.0",
		Source:     &tool.Source{Origin: "demo", License: "Apache-2.0"},
	}
}

func textStats(args map[string]any) (any, error) {
	text, err := strAllowEmpty(args, "text")
	if err != nil {
		return nil, err
	}
	words := len(strings.FieldsFunc(text, unicode.IsSpace))
	sentences := 0
	inSentence := false
	for _, r := range text {
		switch {
		case r == '.' || r == '!' || r == '?':
			if inSentence {
				sentences++
				inSentence = false
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			inSentence = true
		}
	}
	if inSentence {
		sentences++
	}
	lines := 0
	if text != "" {
		lines = strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	}
	return map[string]any{
		"characters": len([]rune(text)), "words": words, "sentences": sentences, "lines": lines,
		"reading_time_seconds": int(math.Ceil(float64(words) / 200 * 60)),
	}, nil
}

func number(args map[string]any, name string) (float64, error) {
	v, ok := args[name]
	if !ok {
		return 0, fmt.Errorf("missing argument %q", name)
	}
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("argument %q must be a number, got %T", name, v)
	}
	return f, nil
}

func str(args map[string]any, name string) (string, error) {
	s, err := strAllowEmpty(args, name)
	if err == nil && strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("argument %q must not be empty", name)
	}
	return strings.TrimSpace(s), err
}

func strAllowEmpty(args map[string]any, name string) (string, error) {
	v, ok := args[name]
	if !ok {
		return "", fmt.Errorf("missing argument %q", name)
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string, got %T", name, v)
	}
	return s, nil
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// sig rounds v to n significant digits.
func sig(v float64, n int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	d := math.Ceil(math.Log10(math.Abs(v)))
	return round(v, n-int(d))
}
