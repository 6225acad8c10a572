#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what the tests need (the MCP
# peers from npm and PyPI, into testenv/), then the whole cargo workspace's tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/install-test-peers.sh
cargo test --workspace --locked
