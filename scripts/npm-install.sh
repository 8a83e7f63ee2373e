#!/usr/bin/env bash
# Install a folder's pinned npm packages into its node_modules, once.
#
#   scripts/npm-install.sh [--force] DIR CHECK REQUIRED...
#
# The install of DIR is complete and current when node_modules/.linerpc-install-stamp
# holds the sha256 of package.json + package-lock.json, every REQUIRED path exists,
# and the shell command CHECK succeeds in DIR; then nothing is done (unless --force).
# Otherwise it runs `npm install --legacy-peer-deps` (the packages' peerDependencies
# are type-only or pinned through overrides), keeps the committed lock bytes, and
# checks again. Needs npm and the npm registry only; works as root.
set -euo pipefail

force=0
if [[ "${1:-}" == "--force" ]]; then
  force=1
  shift
fi
dir="$1" check="$2"
shift 2
required=("$@")
name="$(basename "$dir")"
cd "$dir"

stamp="node_modules/.linerpc-install-stamp"
# sha256sum (GNU coreutils) or shasum (macOS, Perl).
if command -v sha256sum >/dev/null; then
  sha256() { sha256sum; }
else
  sha256() { shasum -a 256; }
fi
want="$(cat package.json package-lock.json | sha256 | cut -d' ' -f1)"

complete() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] || return 1
  local f
  for f in "${required[@]}"; do
    [[ -e "$f" ]] || return 1
  done
  bash -c "$check" >/dev/null 2>&1
}

if [[ "$force" == 0 ]] && complete; then
  echo "$name: node_modules is up to date ($want)"
  exit 0
fi

command -v npm >/dev/null || { echo "$name: npm not found on PATH" >&2; exit 1; }

echo "$name: installing the pinned packages (npm install --legacy-peer-deps) ..." >&2
rm -f "$stamp"
# npm may rewrite the lock file's formatting; keep the committed bytes.
lockcopy="$(mktemp)"
cp package-lock.json "$lockcopy"
trap 'rm -f "$lockcopy"' EXIT
npm install --legacy-peer-deps --no-audit --no-fund
cp "$lockcopy" package-lock.json

for f in "${required[@]}"; do
  [[ -e "$f" ]] || { echo "$name: install incomplete, missing $f" >&2; exit 1; }
done
bash -c "$check" || { echo "$name: the installed packages fail their check: $check" >&2; exit 1; }

printf '%s\n' "$want" > "$stamp"
echo "$name: installed ($want)"
