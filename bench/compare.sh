#!/bin/sh
# compare.sh: the tables of the README from a raw `go test -bench` output.
#
#   ./compare.sh [results/bench.txt]          # benchstat tables, then ratio tables
#   ./compare.sh -ratios [results/bench.txt]  # the ratio tables only (Markdown)
#   ./compare.sh -framing [results/framing.txt]  # the framing suite (see framing below)
#   ./compare.sh -twoproc [results/twoproc.txt]  # the two-process suite (see twoproc below)
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

# framing FILE: the framing suite (results/framing.txt). benchstat with
# the framings side by side for each contender (vs base: header over
# newline), then the contenders side by side for each framing, then a
# Markdown table of medians: each contender's time with Content-Length
# framing, its ratio to its own newline framing, and how many times
# faster linerpc is than the fastest peer with Content-Length framing.
framing() {
	flibs="linerpc lspdev lspdev-gojson xexp"
	echo "# Content-Length (header) beside newline framing, per contender; vs base = header over newline"
	echo
	benchstat -table .name -row /pipe,/lib -col '/framing@(newline header)' "$1"
	echo
	echo "# The contenders side by side, per framing"
	echo
	benchstat -table .name -row /pipe,/framing -col "/lib@($flibs)" "$1"
	echo
	for unit in sec/op cpu-sec/op; do
	[ "$unit" = sec/op ] && echo "Time per op (medians):" || echo "CPU time per op, both ends (medians: less sensitive than time to a busy machine):"
	echo
	benchstat -format csv -table .name -row /pipe,/lib -col '/framing@(newline header)' "$1" 2>/dev/null | awk -F, -v libs="$flibs" -v want="$unit" '
function human(a) {
	if (a < 1e-6) return sprintf("%.0f ns", a * 1e9)
	if (a < 1e-3) return sprintf("%.2f µs", a * 1e6)
	if (a < 1) return sprintf("%.2f ms", a * 1e3)
	return sprintf("%.2f s", a)
}
function ratio(x, y) { return (x == "" || y == "" || y + 0 == 0) ? "–" : sprintf("%.2f×", x / y) }
/^\.name: / { name = substr($0, 8); sub(/^Framing/, "", name); if (!(name in seen)) { seen[name] = 1; names[++nn] = name }; unit = ""; next }
/^,newline/ { next }
/^,/ { unit = $2; next }
unit == want && $1 != "geomean" && NF > 3 {
	split($1, k, " ")
	if (!((name, k[1]) in seenpipe)) { seenpipe[name, k[1]] = 1; pipes[name, ++np[name]] = k[1] }
	nl[name, k[1], k[2]] = $2; hd[name, k[1], k[2]] = $4
}
END {
	nl_ = split(libs, lib, " ")
	line = "| workload | pipe | linerpc newline | linerpc header | header / newline |"
	sep = "|---|---|---:|---:|---:|"
	for (i = 2; i <= nl_; i++) { line = line " " lib[i] " header (/ newline) |"; sep = sep "---:|" }
	print line " linerpc vs best peer, header |"; print sep "---:|"
	for (w = 1; w <= nn; w++) {
		n = names[w]
		for (p = 1; p <= np[n]; p++) {
			pp = pipes[n, p]
			line = "| " n " | " pp " | " human(nl[n, pp, "linerpc"]) " | " human(hd[n, pp, "linerpc"]) " | " ratio(hd[n, pp, "linerpc"], nl[n, pp, "linerpc"]) " |"
			best = ""
			for (i = 2; i <= nl_; i++) {
				h = hd[n, pp, lib[i]]
				line = line " " (h == "" ? "n/a" : human(h) " (" ratio(h, nl[n, pp, lib[i]]) ")") " |"
				if (h != "" && (best == "" || h + 0 < best + 0)) best = h
			}
			print line " " ratio(best, hd[n, pp, "linerpc"]) " |"
		}
	}
}'
	echo
	done
}

# twoproc FILE: the two-process suite (results/twoproc.txt). benchstat with
# the contenders side by side, one table per metric, the workloads in rows
# (vs base: the floor), then linerpc against lspdev-gojson (the base), then
# the Markdown tables of the README, from benchstat's medians: wall time per
# op with each contender over the floor and linerpc over lspdev-gojson; CPU
# time per op of the client and of the server process; allocations per op
# of each; voluntary context switches per op of each (threads put to sleep
# and woken).
twoproc() {
	tlibs="floor floor-pipelined linerpc lspdev lspdev-gojson"
	echo "# Two processes: all contenders; vs base = delta to the floor"
	echo
	benchstat -table '' -row .name -col "/lib@($tlibs)" "$1"
	echo
	echo "# Two processes: linerpc vs lspdev-gojson (base: lspdev-gojson)"
	echo
	benchstat -table '' -row .name -col "/lib@(lspdev-gojson linerpc)" "$1"
	echo
	benchstat -format csv -table '' -row .name -col "/lib@($tlibs)" "$1" 2>/dev/null | awk -F, -v libs="$tlibs" '
function human(a) {
	if (a < 1e-6) return sprintf("%.0f ns", a * 1e9)
	if (a < 1e-3) return sprintf("%.1f µs", a * 1e6)
	if (a < 1) return sprintf("%.2f ms", a * 1e3)
	return sprintf("%.2f s", a)
}
function us(a) {
	if (a < 1e-4) return sprintf("%.1f", a * 1e6)
	return sprintf("%.0f", a * 1e6)
}
# num: d decimals at most (one above 10, none above 100), trailing zeros
# dropped (4, 6.1, 0.04, 0).
function num(a, d,   s) {
	s = sprintf(a >= 100 ? "%.0f" : (a >= 10 ? "%.1f" : "%." d "f"), a)
	if (s ~ /\./) sub(/\.?0+$/, "", s)
	return s
}
function ratio(x, y) { return (x == "" || y == "" || y + 0 == 0) ? "–" : sprintf("%.2f×", x / y) }
function has(u, w, l) { return (u SUBSEP w SUBSEP l) in val }
# pair u1 u2 w l d: "client + server" of two units, in µs for times (d
# "us"), else with d decimals at most.
function pair(u1, u2, w, l, d) {
	if (!has(u1, w, l) || !has(u2, w, l)) return "n/a"
	if (d == "us") return us(val[u1, w, l]) " + " us(val[u2, w, l])
	return num(val[u1, w, l], d) " + " num(val[u2, w, l], d)
}
# header extra: the header of a table with a column per contender, and
# one more when extra is set.
function header(extra,   i, line, sep) {
	line = "| workload |"; sep = "|---|"
	for (i = 1; i <= nl; i++) { line = line " " lib[i] " |"; sep = sep "---:|" }
	if (extra != "") { line = line " " extra " |"; sep = sep "---:|" }
	print line; print sep
}
/^$/ { state = 0; next }
state == 0 && /^,/ {
	delete col
	for (i = 2; i <= NF; i++) if ($i != "") col[$i] = i
	state = 1; next
}
state == 1 { unit = $2; state = 2; next }
state == 2 && $1 != "geomean" {
	w = $1; sub(/^TwoProcess/, "", w)
	if (!(w in seen)) { seen[w] = 1; works[++nw] = w }
	for (l in col) if ($(col[l]) != "") val[unit, w, l] = $(col[l])
	next
}
END {
	nl = split(libs, lib, " ")
	print "Wall time per op (medians), and each contender over the floor:"
	print ""
	header("linerpc / lspdev-gojson")
	for (k = 1; k <= nw; k++) {
		w = works[k]; line = "| " w " |"
		for (i = 1; i <= nl; i++) {
			if (!has("sec/op", w, lib[i])) { line = line " n/a |"; continue }
			v = val["sec/op", w, lib[i]]
			line = line " " human(v) (lib[i] == "floor" ? "" : " (" ratio(v, val["sec/op", w, "floor"]) ")") " |"
		}
		print line " " ratio(val["sec/op", w, "linerpc"], val["sec/op", w, "lspdev-gojson"]) " |"
	}
	print ""
	print "CPU time per op in µs, client + server process (medians of each), and linerpc / lspdev-gojson of the sum (cpu-ns/op):"
	print ""
	header("linerpc / lspdev-gojson")
	for (k = 1; k <= nw; k++) {
		w = works[k]; line = "| " w " |"
		for (i = 1; i <= nl; i++) line = line " " pair("client-cpu-sec/op", "server-cpu-sec/op", w, lib[i], "us") " |"
		print line " " ratio(val["cpu-sec/op", w, "linerpc"], val["cpu-sec/op", w, "lspdev-gojson"]) " |"
	}
	print ""
	print "Allocations per op, client + server process (medians):"
	print ""
	header("")
	for (k = 1; k <= nw; k++) {
		w = works[k]; line = "| " w " |"
		for (i = 1; i <= nl; i++) line = line " " pair("client-allocs/op", "server-allocs/op", w, lib[i], 1) " |"
		print line
	}
	print ""
	print "Voluntary context switches per op (a thread that waited and was woken), client + server process (medians):"
	print ""
	header("")
	for (k = 1; k <= nw; k++) {
		w = works[k]; line = "| " w " |"
		for (i = 1; i <= nl; i++) line = line " " pair("client-vcsw/op", "server-vcsw/op", w, lib[i], 2) " |"
		print line
	}
}'
}

ratios_only=0
if [ "${1:-}" = "-twoproc" ]; then
	twoproc "${2:-results/twoproc.txt}"
	exit
fi
if [ "${1:-}" = "-ratios" ]; then
	ratios_only=1
	shift
fi
if [ "${1:-}" = "-framing" ]; then
	framing "${2:-results/framing.txt}"
	exit
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
