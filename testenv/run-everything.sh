#!/usr/bin/env bash
# Launch @modelcontextprotocol/server-everything with the test environment's own node.
#   run-everything.sh stdio            JSON-RPC on stdin/stdout
#   run-everything.sh http [PORT]      Streamable HTTP at http://127.0.0.1:PORT/mcp (PORT 0 or
#                                      absent: a free port); bound to 127.0.0.1 by the preload,
#                                      which prints "MCP_PEER_LISTENING http://127.0.0.1:<port>"
#                                      on stderr once listening.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="$here/node_modules/.bin/node"
main="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [[ ! -x "$node" || ! -f "$main" ]]; then
  echo "server-everything is not installed: run scripts/install-test-peers.sh" >&2
  exit 127
fi
case "${1:-}" in
  stdio) exec "$node" "$main" stdio ;;
  http) PORT="${2:-0}" exec "$node" --require "$here/loopback-preload.cjs" "$main" streamableHttp ;;
  *) echo "usage: $0 stdio | http [PORT]" >&2; exit 2 ;;
esac
