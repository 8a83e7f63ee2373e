# linerpc: make test runs everything a change must pass.
SHELL := bash
GO        ?= go
FUZZTIME  ?= 10s
BENCHTIME ?= 1s
COUNT     ?= 10

.PHONY: test vet paths lint realruntime interop interop-install fuzz bench demo

# Tests that need a peer from the npm registry (the real runtime, the
# TypeScript packages) skip when it is not installed, unless this is 1:
# then they fail. The targets below install the peers first and set it.
REQUIRE_PEERS := LINERPC_REQUIRE_PEERS=1

# Flood tests (that bound memory under tens or hundreds of MiB; seconds
# each) skip unless this is 1 (internal/floods): make test sets it, so that
# they run there and never pass by skipping.
FLOODS := LINERPC_FLOODS=1

## test: format, vet and path checks, then every test with the race
## detector, the wire vectors, the real-runtime and the TypeScript interop
## tests included (a missing peer fails), the floods too, and the scanner's
## pure-Go string scan (the purego build tag) beside its SSE2 one.
test: vet paths realruntime interop-install
	$(REQUIRE_PEERS) $(FLOODS) $(GO) test -race -count=1 ./...
	$(GO) test -count=1 -tags purego ./internal/wire

## vet: gofmt and go vet.
vet:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './*/node_modules/*'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## paths: no tracked file names a folder outside the repository (a
## machine's absolute paths, or a checkout beside this one).
paths:
	@files="$$(git ls-files 2>/dev/null || find . -type f -not -path './.git/*' -not -path '*/node_modules/*')"; \
	  if printf '%s\n' $$files | xargs grep -nIE '(^|[^A-Za-z0-9_.~-])/(work|home|root|Users)/|\.\./shared'; then \
	    echo "paths outside the repository (above): refer to files in the repository instead"; exit 1; fi

## lint: vet plus staticcheck (fetched through the Go module proxy).
lint: vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

## realruntime: install the pinned real DSH runtime the sdkproto tests drive.
realruntime:
	./realruntime/install.sh

## interop: install the pinned TypeScript peers, then prove wire
## compatibility against them (interop/README.md lists the scenarios).
interop: interop-install
	$(REQUIRE_PEERS) $(GO) test -race -count=1 ./interop/...

## interop-install: install the real TypeScript peers (npm registry only;
## a no-op when interop/node_modules matches the lock).
interop-install:
	./interop/install.sh

## fuzz: run every native fuzz target for FUZZTIME each (make fuzz FUZZTIME=10m).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## bench: the side-by-side suite (bench/, its own module) against the other
## Go JSON-RPC libraries, in COUNT rounds (bench/run.sh; about 3 minutes a
## round on 2 cores, so about half an hour for the default ten, and 2.5
## minutes a round more for the framing suite), then the benchstat and
## ratio tables (bench/compare.sh; benchstat from PATH, or built at a
## pinned version with go run). The raw output goes to
## bench/results/bench.txt; the rpc micro-benchmarks to bench/results/rpc.txt;
## the framing suite (Content-Length beside newline framing) to
## bench/results/framing.txt (bench/compare.sh -framing); the two-process
## suite (the server a child process, over its stdio) to
## bench/results/twoproc.txt (bench/compare.sh -twoproc).
bench:
	cd bench && BENCHTIME=$(BENCHTIME) ./run.sh $(COUNT)
	cd bench && ./compare.sh results/bench.txt

## demo: two processes speaking typed JSON-RPC over a pipe.
demo:
	$(GO) run ./examples/calc
