package kit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// Preflight decides, without any network, whether an operation can ever
// succeed through a wrapper: its path is a real path template, some input
// satisfies its schema, the request built from that input satisfies the
// spec, and some response satisfies the spec. An operation that fails
// preflight contradicts its own spec; the generator leaves it out and tells
// the reviewer why.
func Preflight(specJSON []byte, t Tool) error {
	w, err := New(specJSON, []Tool{t}, Options{BaseURL: "https://preflight.invalid"})
	if err != nil {
		return err
	}
	schema, _ := w.InputSchema(t.Name)
	args, err := ValidInput(schema)
	if err != nil {
		return fmt.Errorf("no input satisfies the operation's parameters and body schema")
	}
	item, op, err := Operation(w.doc, t)
	if err != nil {
		return err
	}
	for _, p := range Parameters(item, op) {
		if p.In == "path" && !strings.Contains(t.Path, "{"+p.Name+"}") {
			return fmt.Errorf("path parameter %q does not appear in the path %q, so no request can carry it", p.Name, t.Path)
		}
	}
	ctx := context.Background()
	req, pathParams, err := w.build(ctx, t, item, op, args)
	if err != nil {
		return fmt.Errorf("building a request: %v", err)
	}
	route := &routers.Route{Spec: w.doc, Path: t.Path, PathItem: item, Method: t.Method, Operation: op}
	vin := &openapi3filter.RequestValidationInput{Request: req, PathParams: pathParams, Route: route, Options: requestOptions(req)}
	if err := openapi3filter.ValidateRequest(ctx, vin); err != nil {
		return fmt.Errorf("the request built from valid input breaks the spec: %s", StableReason(err))
	}
	status, ctype, body := ValidResponse(op)
	h := http.Header{}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: vin, Status: status, Header: absentHeaders(op, status, h),
		Body: io.NopCloser(bytes.NewReader(body)), Options: responseOptions(op, status, ctype)}
	if err := openapi3filter.ValidateResponse(ctx, rin); err != nil {
		return fmt.Errorf("no response can satisfy the spec: %s", StableReason(err))
	}
	return nil
}
