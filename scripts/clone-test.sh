#!/usr/bin/env bash
# Runs the sandbox tests from a fresh clone of this checkout's HEAD in a place a newcomer would
# use — by default under /tmp, in a directory whose name has a space — so that no test depends
# on where the checkout, its target directory or $TMPDIR live. The clone gets its own MCP test
# peers (scripts/install-test-peers.sh --mcp-only) and its own target directory, seeded from this
# checkout's so that only the workspace's own crates are compiled again.
#   bash scripts/clone-test.sh [PARENT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
parent="${1:-/tmp}"
work="$(mktemp -d "$parent/maven clone.XXXXXX")"
# A clone made by hand is searchable by others (mktemp makes 0700).
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
clone="$work/maven"
if git -C "$root" rev-parse --verify -q HEAD >/dev/null; then
  git clone -q "$root" "$clone"
  git -C "$clone" checkout -q "$(git -C "$root" rev-parse HEAD)"
else
  # Not a git checkout (an unpacked archive): the tree as it is, without what is built.
  mkdir -p "$clone"
  tar -C "$root" --exclude=./target --exclude=./testenv/node_modules --exclude=./testenv/.venv \
    --exclude=./testenv/.venv-voice --exclude=./testenv/.venv-wake --exclude=./testenv/.venv-llm \
    --exclude=./testenv/speech \
    --exclude=./testenv/browser/node_modules --exclude=./fuzz/target -cf - . | tar -C "$clone" -xf -
fi
if [ -d "$root/target/debug" ]; then
  # Dependencies are keyed by their registry path, not the checkout's: they stay fresh.
  mkdir -p "$clone/target"
  cp -a "$root/target/debug" "$clone/target/debug"
  rm -rf "$clone/target/debug/incremental"
fi
cd "$clone"
echo "== sandbox tests from a clone at $clone"
bash scripts/install-test-peers.sh --mcp-only
cargo test --locked -p maven --test it sandboxing
