#!/usr/bin/env bash
# Install the pinned real DSH runtime into this folder's node_modules, once.
#
#   ./install.sh          # a no-op when node_modules matches the lock
#   ./install.sh --force  # reinstall even if it does
#
# npm installs the pinned Node of this machine's os and cpu with the
# runtime (linux x64/arm64, macOS x64/arm64); the install is complete only
# when node.sh finds a Node >= 22.19 to run it on (else node.sh says what to
# install, and the install fails).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=()
[[ "${1:-}" == "--force" ]] && force=(--force)
# ${force[@]+...}: macOS's bash 3.2 calls an empty array unbound under set -u.
exec "$here/../scripts/npm-install.sh" ${force[@]+"${force[@]}"} "$here" \
  'bash node.sh . >/dev/null' \
  node.sh \
  node_modules/@deepseek-ai/dsh/lib/bin.js \
  node_modules/@deepseek-ai/dsh-sdk-jsonrpc-server/package.json \
  node_modules/@deepseek-ai/dsh-base/package.json
