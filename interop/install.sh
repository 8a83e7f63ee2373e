#!/usr/bin/env bash
# Install the pinned real TypeScript peers (@deepseek-ai/dsh-sdk-protocol and
# @deepseek-ai/dsh-sdk-client 0.0.1-rc.1, @modelcontextprotocol/sdk 1.32.2 with
# its locked dependencies, vscode-jsonrpc 8.2.1) and the OpenRPC tools the
# openrpc-*.mjs scripts drive (@open-rpc/schema-utils-js 2.2.1,
# @open-rpc/test-coverage 2.2.4, @open-rpc/client-js 2.1.0, ajv 8.20.0,
# ajv-formats 3.0.1) into this folder's node_modules, once. The DSH packages'
# published lib/ needs nothing but Node's built-ins: the check loads every
# package on this machine's Node.
#
#   ./install.sh          # a no-op when node_modules matches the lock
#   ./install.sh --force  # reinstall even if it does
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=()
[[ "${1:-}" == "--force" ]] && force=(--force)
# ${force[@]+...}: macOS's bash 3.2 calls an empty array unbound under set -u.
exec "$here/../scripts/npm-install.sh" ${force[@]+"${force[@]}"} "$here" \
  'node --input-type=module -e "await import(\"@deepseek-ai/dsh-sdk-protocol\"); await import(\"@deepseek-ai/dsh-sdk-client\"); await import(\"@modelcontextprotocol/sdk/client/index.js\"); await import(\"@modelcontextprotocol/sdk/server/index.js\"); await import(\"vscode-jsonrpc/node.js\"); await import(\"@open-rpc/schema-utils-js\"); await import(\"@open-rpc/test-coverage\"); await import(\"@open-rpc/client-js\"); await import(\"ajv\"); await import(\"ajv-formats\")"' \
  node_modules/@deepseek-ai/dsh-sdk-protocol/lib/index.js \
  node_modules/@deepseek-ai/dsh-sdk-client/lib/index.js \
  node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js \
  node_modules/vscode-jsonrpc/node.js \
  node_modules/@open-rpc/schema-utils-js/build/index.js \
  node_modules/@open-rpc/test-coverage/build/index.js \
  node_modules/@open-rpc/client-js/dist/index.js \
  node_modules/ajv/dist/ajv.js \
  node_modules/ajv-formats/dist/index.js
