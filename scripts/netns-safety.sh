#!/usr/bin/env bash
# Network safety net (R-4): runs the webfetch test suite, the mcp unit tests, the HTTP tests
# of the MCP test kit and the Wyoming client's hostile-service tests a second time inside a
# fresh network namespace that has only loopback. A guard bug that would send a packet anywhere
# but loopback fails there (ENETUNREACH) instead of leaving the machine.
#
# The test binaries are built outside the namespace (cargo needs no network for that once the
# registry is cached, but building inside would hide nothing and cost the same), then run inside
# `unshare -n` with `ip link set lo up`. Before the tests run, the script proves the namespace is
# sealed: a connect to a TEST-NET address (192.0.2.1, RFC 5737) must fail with "Network is
# unreachable" — no route exists, so no packet is sent even then.
#
# Needs root (or unprivileged user namespaces) and iproute2. Where network namespaces are
# unavailable it prints a SKIP line saying why and exits 0; every other failure exits non-zero.
#
# Env: CARGO_TARGET_DIR as usual; NETNS_TEST_ARGS extra arguments for each test binary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if ! command -v unshare >/dev/null 2>&1; then
    echo "netns-safety: SKIP: unshare(1) is not installed; network namespaces unavailable" >&2
    exit 0
fi
if ! command -v ip >/dev/null 2>&1; then
    echo "netns-safety: ip(8) missing; install iproute2 (apt-get install -y iproute2)" >&2
    exit 1
fi
if ! probe_err="$(unshare -n true 2>&1)"; then
    if ! probe_err="$(unshare -r -n true 2>&1)"; then
        echo "netns-safety: SKIP: network namespaces unavailable here: ${probe_err}" >&2
        exit 0
    fi
    unshare_cmd=(unshare -r -n)
else
    unshare_cmd=(unshare -n)
fi

# Build outside in one cargo invocation (the feature set of these packages together; the
# maven package is included so that the set matches a build of the daemon's tests), and pick
# the test executables: (package, target, filter).
pkgs=(-p webfetch -p mcp -p oauth -p testkit -p maven -p wyoming)
plan="$(mktemp)"
trap 'rm -f "$plan"' EXIT
if ! artifacts="$(cargo test --locked "${pkgs[@]}" --no-run --message-format=json 2>/dev/null)"; then
    echo "netns-safety: building the tests failed:" >&2
    cargo test --locked "${pkgs[@]}" --no-run >&2
    exit 1
fi
pick() {
    # $1 = package, $2 = target name, $3 = test-name filter ("" for all)
    local exe
    exe="$(jq -r --arg p "$1" --arg t "$2" 'select(.reason == "compiler-artifact"
            and .profile.test == true and .target.name == $t
            and (.package_id | test("/crates/" + $p + "#|/crates/" + $p + "@|" + $p + "@")))
            | .executable // empty' <<<"$artifacts" | tail -n 1)"
    if [[ -z "$exe" ]]; then
        echo "netns-safety: no test executable for $1 ($2)" >&2
        exit 1
    fi
    printf '%s\t%s\t%s\n' "$root/crates/$1" "$exe" "$3" >>"$plan"
}
pick webfetch webfetch ""
pick webfetch it ""
pick mcp mcp ""
pick oauth oauth ""
pick testkit it "http"
pick wyoming it "hostile"

inside() {
    set -euo pipefail
    ip link set lo up
    # Seal check: a non-loopback destination must be unreachable.
    if out="$( (exec 3<>/dev/tcp/192.0.2.1/80) 2>&1)"; then
        echo "netns-safety: FAIL: connected to 192.0.2.1 from inside the namespace" >&2
        exit 1
    fi
    case "$out" in
        *"Network is unreachable"*) echo "netns-safety: sealed: 192.0.2.1:80 -> ENETUNREACH" ;;
        *) echo "netns-safety: FAIL: unexpected error connecting to 192.0.2.1: $out" >&2; exit 1 ;;
    esac
    # Loopback must work. (The listing is read whole first: `grep -q` in a pipeline under
    # pipefail can fail the pipeline by closing it early.)
    local lo_addrs
    lo_addrs="$(ip -o addr show dev lo)"
    case "$lo_addrs" in
        *127.0.0.1*) ;;
        *) echo "netns-safety: FAIL: lo has no 127.0.0.1" >&2; exit 1 ;;
    esac
    local dir exe filter
    while IFS=$'\t' read -r dir exe filter; do
        echo "netns-safety: running $(basename "$exe") ${filter:+(filter: $filter)} in $dir"
        # shellcheck disable=SC2086
        (cd "$dir" && CARGO_MANIFEST_DIR="$dir" "$exe" ${filter:+"$filter"} ${NETNS_TEST_ARGS:-})
    done <"$NETNS_PLAN"
}
export -f inside
export NETNS_PLAN="$plan"
start=$(date +%s)
"${unshare_cmd[@]}" bash -c inside
echo "netns-safety: all suites passed inside a loopback-only namespace in $(( $(date +%s) - start )) s"
