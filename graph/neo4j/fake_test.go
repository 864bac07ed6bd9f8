package neo4j

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// call is one statement a Store sent, as recorded by fakeRunner.
type call struct {
	Tx        int            `json:"tx"`   // transaction number, from 1
	Mode      string         `json:"mode"` // read | write
	Statement string         `json:"statement"`
	Cypher    []string       `json:"cypher"`
	Params    map[string]any `json:"params,omitempty"`
}

// fakeRunner records every statement with its parameters and answers from
// canned records, queued per statement name (the last answer repeats).
type fakeRunner struct {
	mu      sync.Mutex
	names   map[string]string // cypher text → statement name
	calls   []call
	tx      int
	answers map[string][][]record
	errs    map[string]error
	closed  bool
}

func newFakeRunner(dims ...int) *fakeRunner {
	f := &fakeRunner{names: map[string]string{}, answers: map[string][][]record{}, errs: map[string]error{}}
	for _, st := range Statements() {
		f.names[st.Cypher] = st.Name
	}
	for _, d := range dims {
		qs := vectorIndexStatements(d)
		f.names[qs[0]] = "indexToolVector"
		f.names[qs[1]] = "indexUsageVector"
		f.names[qs[2]] = "indexDefinitionVector"
	}
	return f
}

// answer queues records for the named statement.
func (f *fakeRunner) answer(name string, recs ...record) *fakeRunner {
	if recs == nil {
		recs = []record{}
	}
	f.answers[name] = append(f.answers[name], recs)
	return f
}

func (f *fakeRunner) read(ctx context.Context, work func(tx txRunner) error) error {
	return f.do(ctx, "read", work)
}

func (f *fakeRunner) write(ctx context.Context, work func(tx txRunner) error) error {
	return f.do(ctx, "write", work)
}

func (f *fakeRunner) do(_ context.Context, mode string, work func(tx txRunner) error) error {
	f.mu.Lock()
	f.tx++
	n := f.tx
	f.mu.Unlock()
	return work(fakeTx{f: f, n: n, mode: mode})
}

func (f *fakeRunner) close(context.Context) error {
	f.closed = true
	return nil
}

type fakeTx struct {
	f    *fakeRunner
	n    int
	mode string
}

func (t fakeTx) run(_ context.Context, cypher string, params map[string]any) ([]record, error) {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	name, ok := f.names[cypher]
	if !ok {
		name = "UNNAMED"
		for _, prefix := range []string{"DROP INDEX", "DROP CONSTRAINT"} {
			if strings.HasPrefix(cypher, prefix) {
				name = strings.ToLower(strings.ReplaceAll(prefix, " ", "_"))
			}
		}
	}
	f.calls = append(f.calls, call{Tx: t.n, Mode: t.mode, Statement: name, Cypher: strings.Split(cypher, "\n"), Params: params})
	if err := f.errs[name]; err != nil {
		return nil, err
	}
	q := f.answers[name]
	if len(q) == 0 {
		return nil, nil
	}
	recs := q[0]
	if len(q) > 1 {
		f.answers[name] = q[1:]
	}
	return recs, nil
}

// list builds a driver-shaped LIST value.
func list[T any](xs ...T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func (c call) String() string { return fmt.Sprintf("%s %s", c.Mode, c.Statement) }
