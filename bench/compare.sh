#!/bin/sh
# compare.sh: the tables of the README from a raw `go test -bench` output.
#
#   ./compare.sh [results/bench.txt]          # benchstat tables, then ratio tables
#   ./compare.sh -ratios [results/bench.txt]  # the ratio tables only (Markdown)
#
# 1. benchstat, one table per workload, the contenders side by side in
#    columns (floor first: benchstat's "vs base" is the delta to the floor),
#    pipes (and lines=valid/mixed) in rows. Medians, 95% CIs, p-values.
# 2. linerpc against each peer: benchstat with that peer as the base.
# 3. Ratio tables in Markdown, from benchstat's medians (-format csv): each
#    contender's median over the floor's, and each peer's over linerpc's (how
#    many times faster linerpc is), for time and throughput; medians as they
#    are for the other metrics.
set -eu
cd "$(dirname "$0")"

# benchstat from PATH when installed, else built by the go command at a
# pinned version (fetched once through the module proxy, then cached).
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da
if ! command -v benchstat >/dev/null 2>&1; then
	benchstat() {
		go run "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION" "$@"
	}
fi

ratios_only=0
if [ "${1:-}" = "-ratios" ]; then
	ratios_only=1
	shift
fi
file=${1:-results/bench.txt}
libs="floor floor-pipelined linerpc lspdev lspdev-gojson jrpc2 sourcegraph xexp"
peers="lspdev lspdev-gojson jrpc2 sourcegraph xexp"
common="-table .name -row /pipe,/lines -filter -.name:DecodePR"

if [ "$ratios_only" = 0 ]; then
	echo "# All contenders; vs base = delta to the floor"
	echo
	benchstat $common -col "/lib@($libs)" "$file"
	for peer in $peers; do
		echo
		echo "# linerpc vs $peer (base: $peer)"
		echo
		benchstat $common -col "/lib@($peer linerpc)" "$file"
	done
	echo
	echo "# The allocation budget of a round trip: decoding P and R alone"
	echo
	benchstat -filter .name:DecodePR "$file"
	echo
	echo "# Not applicable"
	echo
	grep '^n/a ' "$file" | sort -u || echo "(none)"
	echo
fi

benchstat -format csv $common -col "/lib@($libs)" "$file" 2>/dev/null | awk -F, -v peers="$peers" '
function human(v, unit,   a) {
	a = v + 0
	if (unit == "sec/op") {
		if (a < 1e-6) return sprintf("%.0f ns", a * 1e9)
		if (a < 1e-3) return sprintf("%.2f µs", a * 1e6)
		if (a < 1) return sprintf("%.2f ms", a * 1e3)
		return sprintf("%.2f s", a)
	}
	if (unit == "B/s") return sprintf("%.1f MiB/s", a / 1048576)
	if (a >= 100) return sprintf("%.0f", a)
	return sprintf("%.3g", a)
}
function ratio(x, y) {
	if (x == "" || y == "" || y + 0 == 0) return "–"
	return sprintf("%.2f×", x / y)
}
function flush(   i, r, q, v, l, line, p, np, pl, better) {
	if (nrows == 0) return
	better = (unit == "sec/op" || unit == "B/op" || unit == "allocs/op" || unit == "cpu-ns/op") ? "lower is better" : (unit == "B/s" ? "higher is better" : "")
	ratioed = (unit == "sec/op" || unit == "B/s" || unit == "B/op" || unit == "allocs/op" || unit == "cpu-ns/op")
	printf "\n### %s — %s%s\n\n", name, unit, (ratioed ? " (median of the floor, then each contender over the floor; " better ")" : " (medians)")
	line = "| |"; for (i = 1; i <= nlibs; i++) line = line " " lib[i] " |"; print line
	line = "|---|"; for (i = 1; i <= nlibs; i++) line = line "---:|"; print line
	for (r = 1; r <= nrows; r++) {
		line = "| " rowname[r] " |"
		for (i = 1; i <= nlibs; i++) {
			v = val[r, lib[i]]
			if (v == "") { line = line " n/a |"; continue }
			if (ratioed && lib[i] != "floor" && val[r, "floor"] != "") line = line " " ratio(v, val[r, "floor"]) " |"
			else line = line " " human(v, unit) " |"
		}
		print line
	}
	if (unit == "sec/op" || unit == "B/s") {
		np = split(peers, pl, " ")
		printf "\nlinerpc over each peer (%s):\n\n", unit == "sec/op" ? "peer time / linerpc time: how many times faster linerpc is" : "linerpc throughput / peer throughput"
		line = "| |"; for (p = 1; p <= np; p++) line = line " " pl[p] " |"; print line
		line = "|---|"; for (p = 1; p <= np; p++) line = line "---:|"; print line
		for (r = 1; r <= nrows; r++) {
			line = "| " rowname[r] " |"
			for (p = 1; p <= np; p++) {
				if (unit == "sec/op") line = line " " ratio(val[r, pl[p]], val[r, "linerpc"]) " |"
				else line = line " " ratio(val[r, "linerpc"], val[r, pl[p]]) " |"
			}
			print line
		}
	}
	if (name == "Malformed" && unit == "sec/op") {
		printf "\nThe cost of garbage: lines=mixed time / lines=valid time (≤ 1.00×: a malformed line costs no more than a valid one):\n\n"
		line = "| |"; for (i = 1; i <= nlibs; i++) line = line " " lib[i] " |"; print line
		line = "|---|"; for (i = 1; i <= nlibs; i++) line = line "---:|"; print line
		for (r = 1; r <= nrows; r++) {
			if (rowname[r] !~ / mixed$/) continue
			v = rowname[r]; sub(/ mixed$/, " valid", v)
			for (q = 1; q <= nrows; q++) if (rowname[q] == v) break
			line = "| " substr(rowname[r], 1, length(rowname[r]) - 6) " |"
			for (i = 1; i <= nlibs; i++) line = line " " (val[r, lib[i]] == "" ? "n/a" : ratio(val[r, lib[i]], val[q, lib[i]])) " |"
			print line
		}
	}
	nrows = 0
}
/^\.name: / { flush(); name = substr($0, 8); state = 0; next }
/^$/ { flush(); state = 0; next }
state == 0 && /^,/ {
	# header: the lib names, each at the column of its median
	nlibs = 0; delete col
	for (i = 2; i <= NF; i++) if ($i != "") { lib[++nlibs] = $i; col[$i] = i }
	state = 1; next
}
state == 1 { unit = $2; state = 2; next }
state == 2 && $1 != "geomean" {
	nrows++; rowname[nrows] = $1
	for (i = 1; i <= nlibs; i++) val[nrows, lib[i]] = $(col[lib[i]])
	next
}
END { flush() }
'
