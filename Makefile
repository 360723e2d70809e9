# clusterd: every set-up step lives here so that a fresh clone needs only Node 20 and npm.
SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.install-stamp
BUILD_STAMP := dist/.build-stamp
SOURCES := $(shell find cmd internal raft tools bench e2e -name '*.ts' -not -name '*.test.ts' 2>/dev/null) tsconfig.json tsconfig.build.json

.PHONY: install build run test test-unit test-e2e test-raft-long typecheck bench gen-schemas clean

install: $(NODE_MODULES_STAMP)

$(NODE_MODULES_STAMP): package.json package-lock.json
	@echo "==> installing npm dependencies"
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

build: install $(BUILD_STAMP)

$(BUILD_STAMP): $(SOURCES) $(NODE_MODULES_STAMP)
	@echo "==> compiling TypeScript"
	npx tsc -p tsconfig.build.json
	@touch $@

# Starts one replica with data in ./data and prints how to reach it with kubectl.
run: build
	./bin/clusterd --data-dir ./data $(ARGS)

typecheck: install
	npx tsc -p tsconfig.json

test-deps:
	@./tools/ensure-test-deps.sh

# The whole suite: type-check (tests included), unit, integration and e2e tests.
test: build typecheck test-deps
	npx vitest run $(VITEST_ARGS)

test-unit: build
	npx vitest run --project unit

test-e2e: build test-deps
	npx vitest run --project e2e

test-raft-long: build
	RAFT_SIM_SEEDS=100000 npx vitest run raft/

# Figures next to their baselines (ceiling, etcd) in one run; QUICK=1 runs a two-minute subset.
# test-deps installs etcd, the store-level baseline, when it is missing.
bench: build test-deps
	node dist/bench/run.js $(if $(QUICK),--quick,)

gen-schemas: build
	node dist/tools/gen-schemas/main.js ../shared/schemas proto

clean:
	rm -rf dist node_modules
