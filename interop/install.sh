#!/usr/bin/env bash
# Install the pinned real TypeScript peers (@deepseek-ai/dsh-sdk-protocol and
# @deepseek-ai/dsh-sdk-client 0.0.1-rc.1) into this folder's node_modules.
#
#   ./install.sh          # idempotent: a no-op when node_modules matches the lock
#   ./install.sh --force  # reinstall even if the stamp matches
#
# The install is "complete and current" when node_modules/.linerpc-install-stamp
# holds the sha256 of package.json + package-lock.json and the files the Go
# tests load exist. Needs npm and the npm registry only; works as root.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

stamp="node_modules/.linerpc-install-stamp"
required=(
  node_modules/@deepseek-ai/dsh-sdk-protocol/lib/index.js
  node_modules/@deepseek-ai/dsh-sdk-client/lib/index.js
)

want="$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)"

complete() {
  [[ -f "$stamp" ]] || return 1
  [[ "$(cat "$stamp")" == "$want" ]] || return 1
  local f
  for f in "${required[@]}"; do
    [[ -e "$f" ]] || return 1
  done
}

if [[ "${1:-}" != "--force" ]] && complete; then
  echo "interop: node_modules is up to date ($want)"
  exit 0
fi

command -v npm >/dev/null || { echo "interop/install.sh: npm not found on PATH" >&2; exit 1; }
command -v node >/dev/null || { echo "interop/install.sh: node not found on PATH" >&2; exit 1; }

echo "interop: installing the pinned TypeScript peers (npm install --legacy-peer-deps) ..." >&2
rm -f "$stamp"
# npm may rewrite the lock file's formatting; keep the committed bytes.
lockcopy="${TMPDIR:-/tmp}/linerpc-interop-lock.$$"
cp package-lock.json "$lockcopy"
trap 'rm -f "$lockcopy"' EXIT
# --legacy-peer-deps: the peers' peerDependencies (cordis, dsh-llm, ...) are
# type-only imports; the published lib/ needs nothing but Node's built-ins.
npm install --legacy-peer-deps --no-audit --no-fund
cp "$lockcopy" package-lock.json

for f in "${required[@]}"; do
  [[ -e "$f" ]] || { echo "interop/install.sh: install incomplete, missing $f" >&2; exit 1; }
done
# The peers must load on this machine's Node with only its built-ins.
node --input-type=module -e '
  await import("@deepseek-ai/dsh-sdk-protocol");
  await import("@deepseek-ai/dsh-sdk-client");
' || { echo "interop/install.sh: the installed peers do not load on $(node --version)" >&2; exit 1; }

printf '%s\n' "$want" > "$stamp"
echo "interop: installed ($want)"
