#!/bin/sh
# run.sh: the side-by-side suite as `make bench` runs it, into results/.
#
#   ./run.sh [COUNT]    # COUNT rounds (default 10); about 3 minutes a round on 2 cores
#                       # (the last ten-round make bench took 32 minutes in all)
#   ./run.sh -twoproc [COUNT]  # the two-process suite alone, into results/twoproc.txt
#                              # (about 40 seconds a round)
#
# Each round runs every benchmark once (-count 1), and the rounds follow
# one another, so that the floor, linerpc and the peers are measured
# seconds apart, COUNT times over, rather than each COUNT times in a row:
# on a shared machine whose speed drifts over minutes, only benchmarks
# measured side by side give fair ratios. go test's own -count repeats each
# benchmark before it moves to the next.
#
# results/bench.txt gets the rounds of workloads 1-5 and DecodePR, then one
# op per pipe and contender of workloads 6-9 (a 256 MiB line, the two
# floods and the idle connections: a few minutes); results/rpc.txt gets the library's micro-benchmarks, in
# rounds too; results/framing.txt the rounds of the framing suite
# (workloads 1-4 with Content-Length and newline framing, about 2.5
# minutes a round); results/server.txt the rounds of workload 10 (a
# transport.Server on a unix socket, 1,000 clients); results/twoproc.txt
# the rounds of the two-process suite (workloads 1-4 with the server in a
# child process, over its stdio). The machine's goos/goarch/cpu lines head
# each file.
set -eu
cd "$(dirname "$0")"
mode=all
if [ "${1:-}" = "-twoproc" ]; then
	mode=twoproc
	shift
fi
count=${1:-10}
tmp=${TMPDIR:-/tmp}/linerpc-bench.$$
mkdir -p "$tmp" results
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/bench.test" .

# rounds BIN PATTERN BENCHTIME: COUNT rounds of one benchmark binary,
# with the configuration lines kept once.
rounds() {
	i=0
	while [ "$i" -lt "$count" ]; do
		i=$((i + 1))
		"$1" -test.run '^$' -test.bench "$2" -test.benchmem -test.benchtime "$3" -test.count 1 -test.timeout 60m
	done | awk '/^(goos|goarch|pkg|cpu):/ { if (seen[$0]++) next } /^(PASS|ok)/ { next } { print; fflush() }'
}

# The two-process suite: each benchmark starts its server process, the
# test binary again (process_test.go).
twoproc() {
	rounds "$tmp/bench.test" '^BenchmarkTwoProcess' "${BENCHTIME:-1s}" | tee results/twoproc.txt
	if grep -q '^--- FAIL\|^FAIL' results/twoproc.txt; then
		echo "run.sh: a benchmark failed (see results/twoproc.txt)" >&2
		exit 1
	fi
}
if [ "$mode" = twoproc ]; then
	twoproc
	exit
fi

(cd .. && go test -c -o "$tmp/rpc.test" ./rpc)
rounds "$tmp/bench.test" '^Benchmark(RoundTrip|Concurrent|Stream|Large|Malformed|DecodePR)$' 1s | tee results/bench.txt
"$tmp/bench.test" -test.run '^$' -test.bench 'Oversize|NoReadPeer|BlockedHandlers|IdleConn' -test.benchmem -test.benchtime 1x -test.count 1 -test.timeout 60m |
	grep -v '^goos\|^goarch\|^pkg\|^cpu\|^PASS' | tee -a results/bench.txt
(cd ../rpc && rounds "$tmp/rpc.test" . "${BENCHTIME:-1s}") | tee results/rpc.txt
rounds "$tmp/bench.test" '^BenchmarkFraming' "${BENCHTIME:-1s}" | tee results/framing.txt
rounds "$tmp/bench.test" '^BenchmarkServerUnix$' "${BENCHTIME:-1s}" | tee results/server.txt
if grep -q '^--- FAIL\|^FAIL' results/bench.txt results/rpc.txt results/framing.txt results/server.txt; then
	echo "run.sh: a benchmark failed (see results/)" >&2
	exit 1
fi
twoproc
