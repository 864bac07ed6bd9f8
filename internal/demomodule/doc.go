// Package demomodule is a module service (GET /manifest,
// POST /execute) used by `toolsmith dev`, the examples and the tests. It
// serves four small modules that need no network, each exposing the demo
// catalogue's manifests (demo/catalog) of the tools it implements:
//
//   - currency: currency.convert, currency.rates and currency.list_currencies
//     over a FIXED DEMO RATE TABLE (Rates, dated RatesAsOf). These are
//     illustrative numbers chosen to agree with the catalogue's examples,
//     not live market data; every result says so in its "source" field.
//   - units: units.convert (length, mass, volume, time, temperature; 5
//     significant digits) and units.calculate (+ - * / and parentheses).
//   - timezone: timezone.convert_time between IANA zones and
//     timezone.world_clock.
//   - text: text.stats (characters, words, sentences, lines, reading time),
//     described by the module's own manifest.
//
// Every module records each call it receives and honours the Idempotency-Key
// header: a repeated key gets the first successful answer again without
// running the tool twice, so tests can assert "called once per step".
package demomodule
