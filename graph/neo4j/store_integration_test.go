package neo4j

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/graph/graphtest"
)

// TestContractSuite runs graph/graphtest's contract suite against a real
// Neo4j 5: the server named by NEO4J_URI (with NEO4J_USER, NEO4J_PASSWORD
// and optionally NEO4J_DATABASE) when set, else a neo4j:5 container started
// with testcontainers-go when Docker is healthy, else it skips saying why
// (fails, with TOOLSMITH_REQUIRE_NEO4J=1).
//
// Every store the suite opens starts from an empty database: Reset deletes
// all nodes and drops all indexes and constraints. Do not point NEO4J_URI at
// a database whose content matters.
func TestContractSuite(t *testing.T) {
	cfg, how := integrationConfig(t)
	t.Logf("graph/neo4j: running the contract suite on %s (%s)", cfg.URI, how)
	ctx := context.Background()
	connect := func(t *testing.T) *Store {
		t.Helper()
		s, err := Open(ctx, cfg)
		if err != nil {
			t.Fatalf("Open(%s): %v", cfg.URI, err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	}
	open := func(t *testing.T) graph.Store {
		t.Helper()
		s := connect(t)
		if err := s.Reset(ctx); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		return s
	}
	graphtest.Run(t, open)
	// Two stores on one database: two replicas.
	t.Run("Follow", func(t *testing.T) {
		graphtest.RunFollow(t, func(t *testing.T) (graph.Store, graph.Store) { return open(t), connect(t) })
	})
}

// integrationConfig finds a server or skips the test with the reason.
func integrationConfig(t *testing.T) (Config, string) {
	t.Helper()
	if uri := os.Getenv("NEO4J_URI"); uri != "" {
		return Config{
			URI:      uri,
			User:     os.Getenv("NEO4J_USER"),
			Password: os.Getenv("NEO4J_PASSWORD"),
			Database: os.Getenv("NEO4J_DATABASE"),
		}, "NEO4J_URI"
	}
	// SkipIfProviderIsNotHealthy skips the (sub)test it is given; probing
	// in a subtest lets this test skip with a message naming both paths.
	docker := false
	t.Run("docker-probe", func(t *testing.T) {
		testcontainers.SkipIfProviderIsNotHealthy(t)
		docker = true
	})
	if !docker {
		const why = "graph/neo4j: contract suite SKIPPED: NEO4J_URI is not set and no healthy Docker engine for testcontainers (set NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD to run it against a server)"
		if os.Getenv("TOOLSMITH_REQUIRE_NEO4J") == "1" {
			t.Fatal(why + "; TOOLSMITH_REQUIRE_NEO4J=1 makes that a failure")
		}
		t.Skip(why)
	}
	const password = "toolsmith-contract"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ctr, err := testcontainers.Run(ctx, "neo4j:5",
		testcontainers.WithEnv(map[string]string{
			"NEO4J_AUTH":                         "neo4j/" + password,
			"NEO4J_server_memory_heap_max__size": "512m",
			"NEO4J_server_memory_pagecache_size": "128m",
		}),
		testcontainers.WithExposedPorts("7687/tcp"),
		testcontainers.WithWaitStrategyAndDeadline(4*time.Minute,
			wait.ForListeningPort("7687/tcp"),
			wait.ForLog("Started."),
		),
	)
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatalf("start neo4j:5 container: %v", err)
	}
	uri, err := ctr.PortEndpoint(ctx, "7687/tcp", "neo4j")
	if err != nil {
		t.Fatalf("neo4j container endpoint: %v", err)
	}
	return Config{URI: uri, User: "neo4j", Password: password}, "testcontainers neo4j:5"
}
