package kit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"
)

// Check is the outcome of one verification of a tool.
type Check struct {
	Name    string
	Skipped string // non-empty: not applicable, with the reason
	Err     error
}

// Verification names, in the order VerifyTool runs them.
const (
	CheckValidCall       = "valid_call_passes"
	CheckInvalidInput    = "invalid_input_refused_before_request"
	CheckInvalidResponse = "invalid_response_reported"
	CheckForeignHost     = "other_host_refused"
)

// VerifyTool proves a tool's wrapper behaves, against mocks of the spec on
// loopback: a valid call passes, an invalid input is refused before any
// request, an invalid response is reported, and a redirect to another host
// is refused. The generated test of every wrapper calls it once per tool.
func VerifyTool(spec []byte, t Tool) []Check {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var checks []Check
	add := func(name string, err error) { checks = append(checks, Check{Name: name, Err: err}) }

	mock, err := NewMock(spec, t)
	if err != nil {
		return []Check{{Name: CheckValidCall, Err: err}}
	}
	srv := httptest.NewServer(mock)
	defer srv.Close()
	if u, _ := url.Parse(srv.URL); !IsLoopback(u.Host) {
		return []Check{{Name: CheckValidCall, Err: fmt.Errorf("mock is not on loopback: %s", srv.URL)}}
	}
	// A transport of its own, without keep-alives: the tests of a wrapper
	// run in parallel, and a shared pool could hand this tool's POST a
	// connection another test's closed mock left behind on a reused port
	// (Go retries only idempotent requests on such a connection), so the
	// outcome would depend on the order the tests ran in.
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	w, err := New(spec, []Tool{t}, Options{BaseURL: srv.URL, Timeout: 20 * time.Second, Transport: tr})
	if err != nil {
		return []Check{{Name: CheckValidCall, Err: err}}
	}
	schema, _ := w.InputSchema(t.Name)
	valid, err := ValidInput(schema)
	if err != nil {
		return []Check{{Name: CheckValidCall, Err: err}}
	}

	// 1. A valid call passes and reaches the mock exactly once.
	res := w.Call(ctx, t.Name, valid)
	// The call passes when the wrapper sent a request the spec accepts and
	// the answer matched the spec; an operation that documents only error
	// statuses passes with that documented error.
	switch {
	case res.Stage != "" || len(mock.Problems()) > 0:
		add(CheckValidCall, fmt.Errorf("valid call failed at %s: %s (mock saw: %v)", res.Stage, res.Error, mock.Problems()))
	case mock.Requests() != 1:
		add(CheckValidCall, fmt.Errorf("mock received %d requests, want 1", mock.Requests()))
	default:
		add(CheckValidCall, nil)
	}

	// 2. An invalid input is refused before any request.
	before := mock.Requests()
	res = w.Call(ctx, t.Name, InvalidInput(schema, valid))
	switch {
	case res.Success || res.Stage != StageInput:
		add(CheckInvalidInput, fmt.Errorf("invalid input not refused at the input stage: success=%v stage=%q error=%q", res.Success, res.Stage, res.Error))
	case mock.Requests() != before:
		add(CheckInvalidInput, errors.New("a request was sent for an invalid input"))
	default:
		add(CheckInvalidInput, nil)
	}

	// 3. An invalid response is reported.
	_, op, _ := Operation(w.doc, t)
	if _, _, _, err := InvalidResponse(op); t.Method == http.MethodHead || errors.Is(err, ErrNoInvalidResponse) {
		reason := "HEAD responses carry no body and are not validated"
		if err != nil {
			reason = err.Error()
		}
		checks = append(checks, Check{Name: CheckInvalidResponse, Skipped: reason})
	} else {
		mock.Mode = MockInvalid
		res = w.Call(ctx, t.Name, valid)
		if res.Success || res.Stage != StageResponse {
			add(CheckInvalidResponse, fmt.Errorf("invalid response not reported: success=%v stage=%q error=%q", res.Success, res.Stage, res.Error))
		} else {
			add(CheckInvalidResponse, nil)
		}
	}

	// 4. A redirect to another host is refused without contacting it. The
	// other host is a reserved name (RFC 2606) that no resolver knows, so
	// only a refusal can produce the host stage, whatever else runs.
	foreignURL := "http://" + net.JoinHostPort("other-host.invalid", "80")
	mock.Mode, mock.RedirectTo = MockRedirect, foreignURL+"/elsewhere"
	res = w.Call(ctx, t.Name, valid)
	if res.Success || res.Stage != StageHost {
		add(CheckForeignHost, fmt.Errorf("redirect to another host not refused: success=%v stage=%q error=%q", res.Success, res.Stage, res.Error))
	} else {
		add(CheckForeignHost, nil)
	}
	mock.Mode = MockValid
	return checks
}
