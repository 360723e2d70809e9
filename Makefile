# clusterd: every set-up step lives here so that a fresh clone needs only Node 20 and npm.
SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.install-stamp
BUILD_STAMP := dist/.build-stamp
SOURCES := $(shell find cmd internal raft tools bench e2e -name '*.ts' -not -name '*.test.ts' 2>/dev/null) tsconfig.json tsconfig.build.json

.PHONY: cluster load install build run test test-unit test-e2e test-raft test-chaos test-bursts test-raft-long typecheck bench bench-native gen-schemas clean

install: $(NODE_MODULES_STAMP)

$(NODE_MODULES_STAMP): package.json package-lock.json
	@echo "==> installing npm dependencies"
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

build: install $(BUILD_STAMP)

$(BUILD_STAMP): $(SOURCES) $(NODE_MODULES_STAMP)
	@echo "==> compiling TypeScript"
	npx tsc -p tsconfig.build.json
	@echo "==> bundling the server (dist/cmd/clusterd)"
	node dist/tools/bundle-server/main.js
	@touch $@

# Starts one replica with data in ./data and prints how to reach it with kubectl.
run: build
	./bin/clusterd --data-dir ./data $(ARGS)

# Starts a three-replica cluster on 127.0.0.1 in the foreground (data under $CLUSTER_DIR, default
# ./cluster): each replica's name, address and kubeconfig are printed; SIGINT stops them all.
cluster: build
	node dist/cmd/clusterd-cluster/main.js

# Drives a running clusterd or cluster with a mix of requests and watchers for a fixed time and
# prints throughput, latency percentiles and errors: make load ARGS="--kubeconfig FILE --duration 30s"
# (all flags: make load ARGS=--help; README "Load tests").
load: build
	node dist/cmd/clusterd-load/main.js $(ARGS)

typecheck: install
	npx tsc -p tsconfig.json

test-deps:
	@./tools/ensure-test-deps.sh

# The whole suite: type-check (tests included), unit, integration and e2e tests.
test: build typecheck test-deps bench-native
	npx vitest run $(VITEST_ARGS)

test-unit: build
	npx vitest run --project unit

test-e2e: build test-deps
	npx vitest run --project e2e

# The Raft library's tests; its process tests run the replicas from dist/, hence the build.
test-raft: build
	npx vitest run raft/ e2e/raft

# The long chaos run of the multi-replica cluster (e2e/cluster-chaos.test.ts, which `make test`
# skips): hundreds of faults under load, tens of minutes. CHAOS_ROUNDS=n fault rounds (default
# 250), CHAOS_SEED=n the seed of the fault mix.
test-chaos: build
	CLUSTERD_CHAOS=1 CLUSTERD_CHAOS_ROUNDS=$(or $(CHAOS_ROUNDS),250) CLUSTERD_CHAOS_SEED=$(or $(CHAOS_SEED),7) \
		npx vitest run --project e2e e2e/cluster-chaos.test.ts

# Leader stability under bursts of writes through three replicas (e2e/cluster-burst-stability.test.ts,
# opt-in): counts term changes over BURSTS bursts of 90 concurrent creates (default 3).
test-bursts: build
	CLUSTERD_BURSTS=$(or $(BURSTS),3) npx vitest run --project e2e e2e/cluster-burst-stability.test.ts

test-raft-long: build
	RAFT_SIM_SEEDS=100000 npx vitest run raft/

# Figures next to their baselines (ceiling, etcd) in one run; QUICK=1 runs a subset in a few minutes.
# test-deps installs etcd, the store-level baseline, when it is missing.
bench: build test-deps bench-native
	node dist/bench/run.js $(if $(QUICK),--quick,)

# The bench's native watch client (nghttp2 + OpenSSL): receiving the fan-out costs it a
# fraction of what node:http2 costs the cores the server under test shares.
NATIVE_WATCH := dist/bench/native/h2watch
bench-native: test-deps $(NATIVE_WATCH)

$(NATIVE_WATCH): bench/native/h2watch.c
	@mkdir -p $(dir $@)
	cc -O2 -Wall -Wextra -Werror -o $@ $< -lnghttp2 -lssl -lcrypto -lm

gen-schemas: build
	node dist/tools/gen-schemas/main.js ../shared/schemas proto

clean:
	rm -rf dist node_modules
