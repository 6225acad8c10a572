#!/usr/bin/env bash
# Launch wyoming-openwakeword (wake words) from testenv/.venv-wake, offline, with the models its
# wheel carries; ok_nabu is loaded at start.
#   run-wyoming-wake.sh URI         URI is tcp://127.0.0.1:PORT or unix://PATH
# Logs "INFO:root:Ready" on stderr once it is about to listen.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$here/.venv-wake/bin/python"
if [[ ! -x "$python" ]]; then
  echo "the wake-word venv is missing: run scripts/install-test-peers.sh" >&2
  exit 127
fi
exec "$python" -m wyoming_openwakeword --uri "${1:?a URI}" --preload-model ok_nabu
