#!/usr/bin/env bash
# Launch the Python MCP SDK test server (python_server.py) from the test environment's venv.
#   run-python-server.sh stdio
#   run-python-server.sh http [PORT]   prints "MCP_PEER_LISTENING http://127.0.0.1:<port>/mcp"
#                                      on stderr once listening
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$here/.venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "the Python test server's venv is missing: run scripts/install-test-peers.sh" >&2
  exit 127
fi
exec "$python" "$here/python_server.py" "$@"
