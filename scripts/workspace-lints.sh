#!/usr/bin/env bash
# Every crate of the workspace (as `cargo metadata` lists its members) takes the workspace's lints,
# so `unsafe_code = "forbid"`, `unwrap_used` and the disallowed methods and macros of
# clippy.toml hold in each of them: a crate added without `[lints] workspace = true` fails here,
# named.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bad=0
members=$(cargo metadata --locked --no-deps --format-version 1 \
  | python3 -c 'import json,sys; print("\n".join(p["manifest_path"] for p in json.load(sys.stdin)["packages"]))')
[ -n "$members" ] || { echo "workspace-lints: cargo metadata listed no member" >&2; exit 1; }
for toml in $members; do
  if ! python3 - "$toml" <<'PY'
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
sys.exit(0 if d.get("lints", {}).get("workspace") is True else 1)
PY
  then
    echo "workspace-lints: $toml has no '[lints] workspace = true'" >&2
    bad=1
  fi
done
# The panic lints: every crate that ships (not the test kit, the demo server or the benchmarks)
# warns on expect, panic and unchecked indexing at its root, like the binary that reads page
# requests, IPC and model replies.
for root in crates/*/src/lib.rs crates/*/src/main.rs; do
  case "$root" in crates/testkit/* | crates/demo-todo/*) continue ;; esac
  [ -e "$root" ] || continue
  if ! grep -q '^#!\[warn(clippy::expect_used, clippy::panic' "$root"; then
    echo "workspace-lints: $root does not take the panic lints (#![warn(clippy::expect_used, clippy::panic, ...)])" >&2
    bad=1
  fi
done
[ "$bad" = 0 ] && echo "workspace-lints: every crate takes the workspace's lints, and every shipped crate the panic lints"
exit "$bad"
