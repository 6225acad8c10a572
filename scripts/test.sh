#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what the tests need (the MCP
# peers from npm and PyPI, into testenv/), runs the whole cargo workspace's tests, the official
# MCP client conformance suite against Maven's client, and the page's real-browser test
# (installs Debian's chromium when it is missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/install-test-peers.sh
cargo test --workspace --locked
bash scripts/conformance.sh
bash scripts/browser-test.sh
