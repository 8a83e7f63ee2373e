# linerpc: make test runs everything a change must pass.
SHELL := bash
GO        ?= go
FUZZTIME  ?= 10s
BENCHTIME ?= 1s
COUNT     ?= 10

.PHONY: test check vet lint realruntime fuzz bench demo

## test: format and vet checks, then every test with the race detector,
## the wire vectors and the real-runtime tests included, and the scanner's
## pure-Go string scan (the purego build tag) beside its SSE2 one.
test: vet realruntime interop-install
	$(GO) test -race -count=1 ./...
	$(GO) test -count=1 -tags purego ./internal/wire

## vet: gofmt and go vet.
vet:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './*/node_modules/*'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## lint: vet plus staticcheck (fetched through the Go module proxy).
lint: vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

## realruntime: install the pinned real DSH runtime the sdkproto tests drive.
realruntime:
	./realruntime/install.sh

## interop: install the pinned TypeScript peers, then prove wire
## compatibility against them (interop/README.md lists the scenarios).
interop: interop-install
	$(GO) test -race -count=1 ./interop/...

## interop-install: install the real TypeScript peers (npm registry only;
## a no-op when interop/node_modules matches the lock).
interop-install:
	./interop/install.sh

.PHONY: interop interop-install

## fuzz: run every native fuzz target for FUZZTIME each (make fuzz FUZZTIME=10m).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## bench: the side-by-side suite (bench/, its own module) against the other
## Go JSON-RPC libraries, in COUNT rounds (bench/run.sh), then the ratio
## tables. The raw output goes to bench/results/bench.txt; the rpc
## micro-benchmarks to bench/results/rpc.txt.
bench:
	cd bench && BENCHTIME=$(BENCHTIME) ./run.sh $(COUNT)
	cd bench && ./compare.sh results/bench.txt

## demo: two processes speaking typed JSON-RPC over a pipe.
demo:
	$(GO) run ./examples/calc
