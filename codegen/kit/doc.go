// Package kit is the runtime of every wrapper plugin Toolsmith generates
// from an OpenAPI spec. The generator copies this package's source (not its
// tests) into each wrapper's module, so it imports nothing but the standard
// library and kin-openapi, and it is tested here once for all wrappers.
//
// A wrapper is a small program: the normalised spec, a table of the approved
// operations (Tool), and Main. Given JSON on stdin naming a tool and its
// arguments it validates the arguments against the tool's input schema,
// builds the HTTP request, validates it with openapi3filter, sends it only to
// the approved host (redirects elsewhere are refused), validates the response
// and prints a JSON Result on stdout.
//
// Mock, Sample and InvalidInput serve the wrapper's generated test: an
// httptest server built from the spec's examples and schemas.
package kit
