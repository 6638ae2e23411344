GO ?= go
BIN := bin

.PHONY: help build run test test-race compat compat-tcl compat-tcl-ratchet bench fuzz lint

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-20s %s\n", $$1, $$2}'

build: ## build every binary into bin/
	$(GO) build -o $(BIN)/ ./cmd/...

run: build ## start MyRedis, three queue instances (8081-8083) and the demo target (9000); Ctrl-C stops all
	BIN=$(BIN) bash scripts/run.sh

test: ## run every test (differential tests need redis-server; .ci/run installs it)
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...
	@if command -v node >/dev/null; then node --test examples/node/; else echo "node not installed: skipping examples/node"; fi

# The concurrency-heavy MyRedis tests (many clients, blocking, scripts, AOF, workers
# mode, INFO counters read across goroutines) under the race detector: about a minute
# of tests on two cores, plus the -race build.
RACE_TESTS := TestMaxClients|TestInfo$$|TestBzpop|TestExecIsAtomic|TestWatch|TestScriptIsAtomic|TestScriptKill|TestCloseStopsAScript|TestGoRedis50Clients|TestGoRedisWatchIncrementers|TestWorkersModeIsRaceFree|TestSingleExecutorSetNXHasOneWinner|TestWorkersSelectParallel|TestAOFRewriteUnderWritesKeepsEveryWrite|TestAOFAlwaysRepliesOnlyAfterFsync|TestAOFGroupCommitSharesFsyncs|TestAOFEverysecFsyncsInTheBackground|TestAOFWriteErrorHoldsWriteRepliesUntilTheFileWorks|TestAbuseDoesNotDisturbOthers|TestActiveExpire|TestReplyBuffersShrink|TestScanGuarantee

test-race: ## run the concurrency-heavy MyRedis tests under -race
	$(GO) test -race -count=1 -timeout 15m -run '$(RACE_TESTS)' ./myredis

compat: build ## compare MyRedis and real Redis with redis-benchmark
	bash scripts/compare-redis.sh

compat-tcl: ## Redis's own test suite (REDIS_TESTS, default ../shared/redis-tests), a fresh MyRedis per unit; table of passes
	bash scripts/compat-tcl.sh

compat-tcl-ratchet: ## compat-tcl, failing when a unit passes fewer tests than scripts/compat-tcl-ratchet.txt
	RATCHET=1 bash scripts/compat-tcl.sh

bench: build ## short run of every bench scenario (under 5 minutes); tables on stdout, reports in bench/results/
	$(BIN)/bench all --short --out bench/results

FUZZTIME ?= 30s

fuzz: ## run every fuzz target for FUZZTIME (30s) each
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test $$pkg -list '^Fuzz' | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$target"; \
			$(GO) test $$pkg -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME); \
		done; \
	done

lint: ## gofmt and go vet
	@test -z "$$(gofmt -l .)" || (gofmt -l .; exit 1)
	$(GO) vet ./...
