#!/usr/bin/env bash
# Launch the TypeScript SDK 2.x test server (ts_server.mjs) with the test environment's own node.
#   run-ts-server.sh stdio [legacy]              JSON-RPC on stdin/stdout
#   run-ts-server.sh http [PORT] [legacy]        Streamable HTTP at http://127.0.0.1:PORT/mcp;
#                                                prints "MCP_PEER_LISTENING http://127.0.0.1:<port>/mcp"
#                                                on stderr once listening
# Modern (2026-07-28) only, unless `legacy` is given: then the 2025 handshake is served too.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="$here/node_modules/.bin/node"
sdk="$here/node_modules/@modelcontextprotocol/server/dist/index.mjs"
if [[ ! -x "$node" || ! -f "$sdk" ]]; then
  echo "the TypeScript SDK is not installed: run scripts/install-test-peers.sh" >&2
  exit 127
fi
exec "$node" "$here/ts_server.mjs" "$@"
