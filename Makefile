# Toolsmith: `make run` starts the whole system, `make test` runs every test.
# Go always runs with GOTOOLCHAIN=local: the go.mod toolchain is the one installed.

SHELL        := bash
.SHELLFLAGS  := -eu -o pipefail -c
GO           ?= go
export GOTOOLCHAIN := local

BIN          := bin/toolsmith
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS      := -s -w -X main.version=$(VERSION)
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

.PHONY: all run build test fuzz model cypher-lint mcp-client axe browser bench lint fmt tidy-check clean help

all: build

help:
	@echo "make run         build, then run 'bin/toolsmith dev' (API on http://127.0.0.1:8080; RUN_FLAGS='--flag …' adds flags)"
	@echo "make test        the one test command (fetches embedder weights, the Cypher linter, the MCP client, axe-core and Chromium first)"
	@echo "make bench       run the Go benchmarks (BENCH=regexp, BENCHTIME=1s)"
	@echo "make fuzz        run every fuzz target for FUZZTIME=10m, one after another (FUZZPARALLEL=n, FUZZ=regexp)"
	@echo "make build       build $(BIN)"
	@echo "make lint        go vet + gofmt check"
	@echo "make tidy-check  fail when go.mod/go.sum are not tidy"

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/toolsmith

run: build
	TOOLSMITH_MODEL_DIR=$${TOOLSMITH_MODEL_DIR:-$(MODEL_DIR)} $(BIN) dev $(RUN_FLAGS)

# model makes sure the embedder weights are in MODEL_DIR (a no-op once they are).
model: build
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

test: model cypher-lint mcp-client axe browser
	TOOLSMITH_MODEL_DIR=$(MODEL_DIR) TOOLSMITH_REQUIRE_MODEL=1 TOOLSMITH_REQUIRE_CYPHER_LINT=1 TOOLSMITH_REQUIRE_MCP_CLIENT=1 TOOLSMITH_REQUIRE_BROWSER=1 TOOLSMITH_REQUIRE_AXE=1 \
		$(GO) test -count=1 ./...
	@echo "== which store and sandbox paths ran (go test hides passing tests' logs):"
	@$(GO) test -count=1 -v -run 'TestContract' ./graph/sqlite/ ./graph/neo4j/ 2>&1 | grep -E 'graphtest: running|contract suite (SKIPPED|ran)' || true
	@$(GO) test -count=1 -v -run 'TestVerifyBuildsAndRunsTheGeneratedTest' ./codegen/ 2>&1 | grep -E 'sandbox=' || true
	@echo "== a short fuzz pass ($(TEST_FUZZTIME) per target; make fuzz runs them longer)"
	FUZZTIME=$(TEST_FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) FUZZ='$(FUZZ)' GO=$(GO) scripts/fuzz

# fuzz runs every native fuzz target (scripts/fuzz -l lists them) for
# FUZZTIME each; a failing input lands in the package's testdata/fuzz/.
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZPARALLEL=$(FUZZPARALLEL) FUZZ='$(FUZZ)' GO=$(GO) scripts/fuzz

bench: model
	TOOLSMITH_MODEL_DIR=$(MODEL_DIR) $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem ./...

lint:
	$(GO) vet ./...
	@unformatted="$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files --cached --others --exclude-standard '*.go')

tidy-check:
	$(GO) mod tidy -diff

clean:
	rm -rf bin
