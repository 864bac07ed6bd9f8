package neo4j

import (
	"context"

	neo4jdriver "github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// record is one result row, keyed by the RETURN aliases.
type record map[string]any

// txRunner runs statements inside one transaction.
type txRunner interface {
	run(ctx context.Context, cypher string, params map[string]any) ([]record, error)
}

// runner is the store's whole view of Neo4j: a function run inside a read or
// a write transaction. The production runner uses the driver's managed
// transactions, which retry transient failures by calling work again, so work
// must reset any state it accumulates. Tests substitute a recording fake.
type runner interface {
	read(ctx context.Context, work func(tx txRunner) error) error
	write(ctx context.Context, work func(tx txRunner) error) error
	close(ctx context.Context) error
}

// driverRunner is the runner backed by a neo4j.DriverWithContext.
type driverRunner struct {
	driver   neo4jdriver.DriverWithContext
	database string
}

func (d *driverRunner) session(ctx context.Context, mode neo4jdriver.AccessMode) neo4jdriver.SessionWithContext {
	return d.driver.NewSession(ctx, neo4jdriver.SessionConfig{DatabaseName: d.database, AccessMode: mode})
}

func (d *driverRunner) read(ctx context.Context, work func(tx txRunner) error) error {
	s := d.session(ctx, neo4jdriver.AccessModeRead)
	defer s.Close(ctx)
	_, err := s.ExecuteRead(ctx, func(tx neo4jdriver.ManagedTransaction) (any, error) {
		return nil, work(managedTx{tx})
	})
	return err
}

func (d *driverRunner) write(ctx context.Context, work func(tx txRunner) error) error {
	s := d.session(ctx, neo4jdriver.AccessModeWrite)
	defer s.Close(ctx)
	_, err := s.ExecuteWrite(ctx, func(tx neo4jdriver.ManagedTransaction) (any, error) {
		return nil, work(managedTx{tx})
	})
	return err
}

func (d *driverRunner) close(ctx context.Context) error { return d.driver.Close(ctx) }

// managedTx adapts a driver transaction to txRunner.
type managedTx struct {
	tx neo4jdriver.ManagedTransaction
}

func (m managedTx) run(ctx context.Context, cypher string, params map[string]any) ([]record, error) {
	res, err := m.tx.Run(ctx, cypher, params)
	if err != nil {
		return nil, err
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]record, len(recs))
	for i, r := range recs {
		out[i] = r.AsMap()
	}
	return out, nil
}
