#!/usr/bin/env bash
# The real-browser test of the page (U-4): headless Debian Chromium driven by
# playwright-core. Installs Chromium when /usr/bin/chromium is missing (apt, as root) and the
# npm package into testenv/browser/, builds the maven, demo server, testkit-mcp and
# testkit-authserver binaries, runs
# testenv/browser/test.mjs and keeps the screenshots in ci-artifacts/ (web-tools.png, the page
# at 40+ tools folded, filtered and opened, web-oauth.png).
# Fails loudly when anything is missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ ! -x /usr/bin/chromium ]; then
  echo "browser-test: /usr/bin/chromium is missing; installing Debian's chromium"
  if [ "$(id -u)" -ne 0 ]; then
    echo "browser-test: FAILED: chromium is not installed and this is not root (apt-get install -y chromium)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update && apt-get install -y --no-install-recommends chromium; }; then
    echo "browser-test: FAILED: cannot install chromium with apt-get" >&2
    exit 1
  fi
fi
if [ ! -x /usr/bin/chromium ]; then
  echo "browser-test: FAILED: /usr/bin/chromium is still missing after the install" >&2
  exit 1
fi
if ! command -v node >/dev/null; then
  echo "browser-test: FAILED: node is not installed (the test runs on node + playwright-core)" >&2
  exit 1
fi

(cd testenv/browser && npm ci --no-audit --no-fund --loglevel=error)

target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --locked -p maven --bin maven -p demo-todo --bin maven-demo-todo \
  -p testkit --bin testkit-mcp --bin testkit-authserver
mkdir -p ci-artifacts
node testenv/browser/test.mjs "$target/debug/maven" "$target/debug/maven-demo-todo" \
  "$target/debug/testkit-mcp" "$target/debug/testkit-authserver" "$root/ci-artifacts"
