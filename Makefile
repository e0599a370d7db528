# specd — build, run and test. `make run` and `make test` are the two commands
# a fresh machine needs (with Go installed); everything else is a part of them.

GO          ?= go
BIN         := bin/specd
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -s -w -X main.version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/staticcheck-$(STATICCHECK_VERSION)
FUZZTIME    ?= 10s
BUILD_SPECD  = $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/specd
GOFILES      = $(shell find . -name '*.go' -not -path './tests/inspector/node_modules/*' -not -path './tests/conformance/node_modules/*')

.PHONY: all build run test unit check fmt vet lint layout inspector conformance bench coldstart fuzz clean e2e-etcd chromium

all: build

build:
	$(BUILD_SPECD)

## run: build and serve MCP on stdio with the embedded store. Its stdout
## is the server's JSON-RPC only: the build's output goes to stderr and
## make echoes neither command (a client may start `make run` itself).
run:
	@$(BUILD_SPECD) >&2
	@exec $(abspath $(BIN)) serve

## test: static checks, every Go test with -race, the MCP Inspector check, the
## MCP conformance suite, then the 3-member etcd cluster run (e2e-etcd).
## The layout rules run as TestLayout among the Go tests (check runs them
## alone, which costs a second, non-race build of the tests package).
test: fmt vet lint unit inspector conformance e2e-etcd

## unit: every Go test with -race; beside it, without -race, the tests that
## make fewer repetitions under -race (NORACE_RUN: specs' property tests and
## the tests package's race_on_test.go knobs) with their full count; its
## output follows the race run's. go test starts the packages in the order
## named (two at a time on two cores): the longest, tests and core/etcdstore,
## first, so the short ones fill in beside them instead of the longest
## starting last. GORACE=atexit_sleep_ms=0: a -race binary otherwise sleeps
## a second before it exits, once per test binary (18 of them); races found
## are still reported and still fail the run. -parallel 4 (2 by default on
## two cores): the end-to-end tests mostly wait on child processes, sockets
## and timers, so four at a time keep both cores busy.
NORACE_RUN := Property|^TestBudgetSpecGetCountsWholeEnvelope$$|^TestSwapRaceStaysInside$$|^TestResearchPathAndLargeText$$
unit: build chromium
	mkdir -p bin/artefacts
	SPECD_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -run '$(NORACE_RUN)' ./specs ./tests > bin/norace.log 2>&1 & norace=$$!; \
	GORACE=atexit_sleep_ms=0 SPECD_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 -parallel 4 -artifacts -outputdir $(CURDIR)/bin/artefacts ./tests ./core/etcdstore ./...; race=$$?; \
	wait $$norace; full=$$?; echo "without -race, full counts:"; cat bin/norace.log; \
	[ $$race -eq 0 ] && [ $$full -eq 0 ]

## chromium: Debian's chromium, which the board's browser tests drive
## (tests/board_browser_test.go, through chromedp); installed with apt-get
## where /usr/bin/chromium is missing (a fresh CI machine). Their
## screenshots are kept under bin/artefacts/.
chromium:
	@if [ ! -x /usr/bin/chromium ]; then apt-get update && apt-get install -y chromium; fi

check: fmt vet lint layout

fmt:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

lint: $(STATICCHECK)
	./$(STATICCHECK) ./...

# staticcheck, pinned, built once into bin/ (its name carries the version).
$(STATICCHECK):
	GOBIN=$(CURDIR)/bin/.staticcheck $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/.staticcheck/staticcheck $@ && rmdir bin/.staticcheck

## layout: the dependency rules of the design (domain free of infrastructure,
## bbolt only in core/store, no util/common/helpers packages).
layout:
	$(GO) test -count=1 -run 'TestLayout' ./tests/

## inspector: drive the built binary with the MCP Inspector CLI (pinned, from
## npm). Skipped with a message where node is missing, except in CI.
inspector: build
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
		bash tests/inspector/run.sh $(CURDIR)/$(BIN); \
	elif [ -n "$$CI" ]; then \
		echo "inspector check: node/npm not found, and CI requires it"; exit 1; \
	else \
		echo "inspector check skipped: node not found (install Node.js 20+ to run it)"; \
	fi

## conformance: the official MCP conformance suite (pinned, from npm, with
## the Node 22 it needs) against `specd serve --transport http`; failures
## must be exactly those listed in tests/conformance/baseline.yml. Skipped
## with a message where npm is missing, except in CI.
conformance: build
	@if command -v npm >/dev/null 2>&1; then \
		bash tests/conformance/run.sh $(CURDIR)/$(BIN); \
	elif [ -n "$$CI" ]; then \
		echo "conformance check: npm not found, and CI requires it"; exit 1; \
	else \
		echo "conformance check skipped: npm not found (install Node.js 20+ to run it)"; \
	fi

bench: build
	SPECD_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem -count 5 ./...

## coldstart: spawn bin/specd serve → initialize answered, median of many runs.
coldstart: build
	SPECD_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench 'ColdStart' -benchtime 50x -count 5 ./tests/

## load: the write load of issue 22 (not part of test): the built server
## over HTTP, CLIENTS (16) clients adding tasks to SPECS (4) specs for
## DURATION (10s) with the DRIVER client (raw, the default: specd-load's
## lean MCP client; or mcp-go), every acknowledged task read back (fails if
## one is missing), then one sequential stdio client; prints writes/s, p50,
## p99, the driver that ran and the CPU time per write of the server and of
## the load driver.
.PHONY: load
load: build
	$(GO) build -o bin/specd-load ./cmd/specd-load
	bash cmd/specd-load/load.sh $(BIN) bin/specd-load

fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin

## e2e-etcd: the 3-member etcd cluster run (issue 13): three real etcd
## processes (bin/etcd, built from the etcd module at the version go.mod
## pins), three `specd serve --transport http` and 12 agents on a 600-task
## spec, with member and server kills. Bounded: -timeout 10m (76 s here; up to 5 min under heavy load).
e2e-etcd: build
	$(GO) build -o bin/etcd ./tests/etcdmember
	SPECD_ETCD_E2E=1 SPECD_ETCD_BIN=$(CURDIR)/bin/etcd SPECD_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 10m -run TestEtcdClusterEndToEnd -v ./tests

## load-etcd: writes at team scale on etcd (issue 22; not part of make
## test): a 3-member cluster on loopback with etcd's default limits, one
## `specd serve --transport http` on it, and specd-load's 16 raw-driver
## clients adding tasks to 4 specs for 20 s (CLIENTS, DURATION, SPECS
## override; WRITES below 1 runs the mixed mode); prints writes/s and
## latency, and reads every acknowledged add back (missing must be 0).
.PHONY: load-etcd
load-etcd: build
	$(GO) build -o bin/etcd ./tests/etcdmember
	$(GO) build -o bin/specd-load ./cmd/specd-load
	SPECD_BIN=$(CURDIR)/$(BIN) ETCD_BIN=$(CURDIR)/bin/etcd LOAD_BIN=$(CURDIR)/bin/specd-load bash tests/load-etcd.sh
