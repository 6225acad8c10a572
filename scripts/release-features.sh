#!/usr/bin/env bash
# The daemon a release build makes carries no test hook: no workspace crate reached from
# `maven` through normal or build dependencies has a test-only feature on (`test-hooks` of
# webfetch and poller, `testing` of stepup, tokio's `test-util`). Dev-dependencies turn them
# on for `cargo test` only; this reads Cargo's own feature resolution (`cargo tree`, which
# builds nothing) and fails naming the crate and feature that would leak.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tree=$(cargo tree --locked -p maven -e normal,build -f '{p} [{f}]' --prefix none)
# Sanity: the graph holds the crates whose hooks we look for, so an empty match proves something.
for crate in poller webfetch stepup tokio; do
  grep -q "^$crate v" <<<"$tree" || { echo "release-features: $crate is not in maven's graph" >&2; exit 1; }
done
leaks=$(grep -E '\[[^]]*\b(test-hooks|testing|test-util)\b[^]]*\]' <<<"$tree" | sort -u || true)
if [ -n "$leaks" ]; then
  echo "release-features: a release build of maven would carry test-only features:" >&2
  echo "$leaks" >&2
  exit 1
fi
# And the check can fail: with dev-dependencies the hooks are on.
cargo tree --locked -p maven -e all -f '{p} [{f}]' --prefix none | grep -q '^poller v.*\[.*test-hooks' \
  || { echo "release-features: cannot see poller's test-hooks even with dev-dependencies" >&2; exit 1; }
echo "release-features: no test-only feature in maven's release graph"
