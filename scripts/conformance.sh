#!/usr/bin/env bash
# Runs the official MCP client conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12,
# pinned in testenv/package-lock.json, run with testenv's node 22) against testkit's
# conformance-client, once per specification revision, with the suite's own frozen requirement
# set of that revision (`conformance client --requirements REV`: every scored scenario plus the
# not-scored ones, each run at that revision's wire version; the OAuth extension scenarios among
# them: client_credentials with a secret and with private_key_jwt, enterprise-managed
# authorization, workload identity's jwt-bearer, DPoP and its nonces).
#
#   scripts/conformance.sh                 build conformance-client, run both revisions
#   scripts/conformance.sh REV...          run only these revisions (2025-11-25, 2026-07-28,
#                                          2025-03-26: the two authorization back-compat
#                                          scenarios, which no requirement set lists)
#   CONFORMANCE_CLIENT=/path/to/client     use that client instead of building one
#
# A scenario passes when its checks.json has at least one SUCCESS and no FAILURE or WARNING.
# Exits non-zero if any scenario fails, except those listed in
# testenv/conformance-expected-failures.txt ("REV scenario  # reason"); a listed scenario that
# passes also fails the run (remove its line), so the list stays true. Results go to
# ci-artifacts/conformance/REV/.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
node="$root/testenv/node_modules/.bin/node"
suite="$root/testenv/node_modules/@modelcontextprotocol/conformance/dist/index.js"
out_dir="$root/ci-artifacts/conformance"

if [[ ! -x "$node" || ! -f "$suite" ]]; then
  echo "conformance: the conformance suite is not installed: run scripts/install-test-peers.sh" >&2
  exit 1
fi

client="${CONFORMANCE_CLIENT:-}"
if [[ -z "$client" ]]; then
  (cd "$root" && cargo build --quiet -p testkit --bin conformance-client) ||
    { echo "conformance: building conformance-client failed" >&2; exit 1; }
  client="${CARGO_TARGET_DIR:-$root/target}/debug/conformance-client"
fi
[[ -x "$client" ]] || { echo "conformance: no client binary at $client" >&2; exit 1; }

revisions=("$@")
[[ ${#revisions[@]} -gt 0 ]] || revisions=(2025-11-25 2026-07-28 2025-03-26)

# The 2025-03-26 back-compat scenarios (no protected resource metadata; metadata at the
# root, or the default endpoints): run one by one, each must pass.
backcompat() {
  local dir="$out_dir/2025-03-26" bad=0 passed=0
  echo "=== conformance: 2025-03-26 authorization back-compat"
  rm -rf "${dir:?}" && mkdir -p "$dir"
  for scenario in auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback; do
    local log="$dir/${scenario//\//_}.log"
    "$node" "$suite" client --command "$(printf '%q' "$client")" --scenario "$scenario" \
      --timeout 30000 --output-dir "$dir" >"$log" 2>&1 || true
    sed -i 's/\x1b\[[0-9;]*m//g' "$log"
    if grep -q "OVERALL: PASSED" "$log"; then
      passed=$((passed + 1))
      echo "--- PASS $scenario"
    else
      bad=$((bad + 1))
      echo "--- FAIL $scenario: see $log"
    fi
  done
  echo "conformance 2025-03-26: $passed passed, $bad failed (of 2)"
  [[ $bad -eq 0 ]]
}

status=0
for rev in "${revisions[@]}"; do
  if [[ "$rev" == 2025-03-26 ]]; then
    backcompat || status=1
    continue
  fi
  echo "=== conformance: requirements $rev"
  dir="$out_dir/$rev"
  rm -rf "${dir:?}" && mkdir -p "$dir"
  log="$dir/suite.log"
  # The suite's own exit status counts the auth scenarios too; the verdict is ours, below.
  # It runs "<command> <server URL>" through a shell: quote the client path for it.
  "$node" "$suite" client --command "$(printf '%q' "$client")" --requirements "$rev" \
    --timeout 30000 --output-dir "$dir" >"$log" 2>&1 || true
  # The suite colours its report whatever NO_COLOR says; keep the log plain.
  sed -i 's/\x1b\[[0-9;]*m//g' "$log"
  "$node" -e '
    const fs = require("fs"), path = require("path");
    const [dir, rev, expectedFile, logFile] = process.argv.slice(1);
    // The scenarios the suite ran: its summary lines ("✓ name: …" / "✗ name: …").
    const log = fs.readFileSync(logFile, "utf8");
    const summary = log.slice(log.indexOf("=== SUITE SUMMARY ==="));
    const names = [...summary.matchAll(/^[✓✗] ([^:\s]+):/gmu)].map((m) => m[1]);
    if (names.length === 0) {
      console.log(`conformance ${rev}: the suite printed no summary; see ${logFile}`);
      process.exit(1);
    }
    // The results of each scenario: <dir>/<name>-<timestamp>/checks.json (auth ones under auth/).
    const results = new Map();
    const walk = (d) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const p = path.join(d, e.name);
        const f = path.join(p, "checks.json");
        if (fs.existsSync(f)) {
          const name = path.relative(dir, p).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "");
          results.set(name, JSON.parse(fs.readFileSync(f, "utf8")));
        } else {
          walk(p);
        }
      }
    };
    walk(dir);
    const expected = new Map();
    if (fs.existsSync(expectedFile)) {
      for (const line of fs.readFileSync(expectedFile, "utf8").split("\n")) {
        const [entry, reason = ""] = line.split("#");
        const [r, s] = entry.trim().split(/\s+/);
        if (r && s) expected.set(`${r} ${s}`, reason.trim());
      }
    }
    let bad = 0, passed = 0, xfailed = 0;
    for (const name of names) {
      const checks = results.get(name) || [];
      const ok = checks.filter((c) => c.status === "SUCCESS").length;
      const failing = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
      const pass = ok > 0 && failing.length === 0;
      const listed = expected.has(`${rev} ${name}`);
      if (pass && listed) {
        bad++;
        console.log(`--- XPASS ${name}: listed as an expected failure but passed; remove "${rev} ${name}" from testenv/conformance-expected-failures.txt`);
      } else if (pass) {
        passed++;
        console.log(`--- PASS ${name}`);
      } else if (listed) {
        xfailed++;
        console.log(`--- XFAIL ${name} (expected: ${expected.get(`${rev} ${name}`)})`);
      } else {
        bad++;
        console.log(`--- FAIL ${name}: ${ok} SUCCESS, ${failing.length} FAILURE/WARNING`);
        for (const c of failing.slice(0, 10)) {
          console.log(`    ${c.status} ${c.id}: ${c.errorMessage || c.description}`);
        }
      }
    }
    console.log(`conformance ${rev}: ${passed} passed, ${xfailed} expected failures, ${bad} failed (of ${names.length})`);
    process.exit(bad > 0 ? 1 : 0);
  ' "$dir" "$rev" "$root/testenv/conformance-expected-failures.txt" "$log" || status=1
done
exit "$status"
