# Toolsmith: `make run` starts the whole system, `make test` runs every test.
# Go always runs with GOTOOLCHAIN=local: the go.mod toolchain is the one installed.

SHELL        := bash
.SHELLFLAGS  := -eu -o pipefail -c
GO           ?= go
export GOTOOLCHAIN := local

# Two binaries from one module: bin/toolsmith has every command, including
# `dev` on the in-process Temporal server and its Web UI (what make run
# starts); bin/toolsmith-server is the production binary (api, worker,
# keys, mcp, airlock, model fetch, healthcheck, version) without that
# server, the one the Dockerfile ships.
BIN          := bin/toolsmith
SERVER_BIN   := bin/toolsmith-server
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS      := -s -w -X github.com/toolsmith/toolsmith/internal/cli.version=$(VERSION)
# The built-in USE-Lite embedder's weights, fetched once into one cache that
# make run, make test and make bench share (the binary's own default is
# <data-dir>/models/use-lite-0.2.0; make passes this one as TOOLSMITH_MODEL_DIR,
# so --model-dir in RUN_FLAGS still wins).
MODEL_DIR    := $(CURDIR)/.cache/models/use-lite-0.2.0
CYPHER_LINT  := scripts/cypher-lint
MCP_CLIENT   := scripts/mcp-client
AXE          := scripts/axe
# RUN_FLAGS are extra flags for `toolsmith dev` in make run, e.g.
# make run RUN_FLAGS='--http-addr 127.0.0.1:9090 --no-demo'.
RUN_FLAGS    ?=
BENCH        ?= .
BENCHTIME    ?= 1s
# FUZZTIME is each fuzz target's time in make fuzz, TEST_FUZZTIME in make
# test's short pass; FUZZPARALLEL sets go test -parallel (fuzzing
# processes per target; empty: GOMAXPROCS). FUZZ selects targets by name.
FUZZTIME      ?= 10m
TEST_FUZZTIME ?= 3s
FUZZPARALLEL  ?=
FUZZ          ?= .
# STATICCHECK is the pinned linter make lint runs with `go run`, so it is
# not a dependency of the module (staticcheck.conf configures it).
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all run build build-toolsmith build-server test fuzz model cypher-lint mcp-client axe browser bench lint fmt tidy-check clean help

all: build

help:
	@echo "make run         build, then run 'bin/toolsmith dev' (API on http://127.0.0.1:8080; RUN_FLAGS='--flag …' adds flags)"
	@echo "make test        the one test command (fetches embedder weights, the Cypher linter, the MCP client, axe-core and Chromium first)"
	@echo "make bench       run the Go benchmarks (BENCH=regexp, BENCHTIME=1s)"
	@echo "make fuzz        run every fuzz target for FUZZTIME=10m, one after another (FUZZPARALLEL=n, FUZZ=regexp)"
	@echo "make build       build $(BIN) (everything, with the dev Temporal server) and $(SERVER_BIN) (production)"
	@echo "make lint        gofmt check, go vet and staticcheck (staticcheck.conf); make test runs it first"
	@echo "make tidy-check  fail when go.mod/go.sum are not tidy"

build: build-toolsmith build-server

build-toolsmith:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/toolsmith

build-server:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(SERVER_BIN) ./cmd/toolsmith-server

run: build-toolsmith
	TOOLSMITH_MODEL_DIR=$${TOOLSMITH_MODEL_DIR:-$(MODEL_DIR)} $(BIN) dev $(RUN_FLAGS)

# model makes sure the embedder weights are in MODEL_DIR (a no-op once they are).
model: build-toolsmith
	$(BIN) model fetch --model-dir $(MODEL_DIR)

# cypher-lint installs the pinned Cypher linter the Neo4j golden tests run.
cypher-lint:
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(CYPHER_LINT) --no-audit --no-fund --loglevel=error; \
	else \
		echo "npm not found: the Cypher lint tests will fail (TOOLSMITH_REQUIRE_CYPHER_LINT=1)" >&2; \
	fi

# mcp-client installs the official TypeScript MCP SDK the e2e tests drive
# /mcp with (a client this project did not write).
mcp-client:
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(MCP_CLIENT) --no-audit --no-fund --loglevel=error; \
	else \
		echo "npm not found: the TypeScript MCP client test will fail (TOOLSMITH_REQUIRE_MCP_CLIENT=1)" >&2; \
	fi

# axe installs axe-core, the accessibility rules the console's browser
# tests run on every page they visit (a checker this project did not write).
axe:
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(AXE) --no-audit --no-fund --loglevel=error; \
	else \
		echo "npm not found: the console's accessibility check will fail (TOOLSMITH_REQUIRE_AXE=1)" >&2; \
	fi

# browser makes sure Chromium is on PATH for the console's browser tests
# (Debian's chromium package; installing it needs root or passwordless sudo).
browser:
	@scripts/install-chromium || echo "the console's browser tests will fail (TOOLSMITH_REQUIRE_BROWSER=1)" >&2

# test lints first, then runs every test, then says which store suites and
# sandbox ran or skipped (scripts/test-summary; TOOLSMITH_REQUIRE_NEO4J=1
# makes a skipped Neo4j contract suite fail).
test: lint model cypher-lint mcp-client axe browser
	TOOLSMITH_MODEL_DIR=$(MODEL_DIR) TOOLSMITH_REQUIRE_MODEL=1 TOOLSMITH_REQUIRE_CYPHER_LINT=1 TOOLSMITH_REQUIRE_MCP_CLIENT=1 TOOLSMITH_REQUIRE_BROWSER=1 TOOLSMITH_REQUIRE_AXE=1 \
		$(GO) test -count=1 ./...
	GO=$(GO) scripts/test-summary
	@echo "== a short fuzz pass ($(TEST_FUZZTIME) per target; make fuzz runs them longer)"
	FUZZTIME=$(TEST_FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) FUZZ='$(FUZZ)' GO=$(GO) scripts/fuzz

# fuzz runs every native fuzz target (scripts/fuzz -l lists them) for
# FUZZTIME each; a failing input lands in the package's testdata/fuzz/.
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) FUZZ='$(FUZZ)' GO=$(GO) scripts/fuzz

# bench passes the record tag: workflows/replay's benchmark runs the
# in-process Temporal server, which ordinary builds of that package leave out.
bench: model
	TOOLSMITH_MODEL_DIR=$(MODEL_DIR) $(GO) test -tags record -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem ./...

# lint passes the record tag so that workflows/replay's recorder and
# benchmark are vetted and linted too.
lint:
	@unformatted="$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet -tags record ./...
	$(GO) run $(STATICCHECK) -tags record ./...

fmt:
	gofmt -w $$(git ls-files --cached --others --exclude-standard '*.go')

tidy-check:
	$(GO) mod tidy -diff

clean:
	rm -rf bin
