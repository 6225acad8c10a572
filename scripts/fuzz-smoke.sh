#!/usr/bin/env bash
# Fuzz smoke run (R-3): builds every cargo-fuzz target of fuzz/ and runs each for a short,
# bounded time so the harness stays alive. Not a search for bugs (run the targets for minutes
# locally for that); a crash here is still a bug: the input is kept and the script fails.
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`; installed
# here when missing). Each target starts from a small seed corpus written to a temporary
# directory (feed fixtures, JSON-RPC frames, SSE streams, configs, URLs, Wyoming events);
# nothing is written into the tree.
#
# Env: FUZZ_SECONDS per target (default 20), FUZZ_TARGETS (space-separated; default all),
#      FUZZ_OUT (where corpora and crash inputs go; default a temporary directory, kept on
#      failure), CARGO_TARGET_DIR (passed to cargo fuzz as --target-dir).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

seconds="${FUZZ_SECONDS:-20}"
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz-smoke: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
target_dir=()
if [[ -n "${CARGO_TARGET_DIR:-}" ]]; then
    target_dir=(--target-dir "$CARGO_TARGET_DIR")
fi
out="${FUZZ_OUT:-$(mktemp -d /tmp/fuzz-smoke.XXXXXX)}"
mkdir -p "$out"

targets="${FUZZ_TARGETS:-$(cargo +nightly fuzz list)}"

seed() {
    # $1 = target, $2 = seed directory
    local t="$1" d="$2" i=0
    mkdir -p "$d"
    put() { i=$((i + 1)); printf '%s' "$1" >"$d/seed-$i"; }
    case "$t" in
        feed_parse) cp crates/feeds/tests/fixtures/*.xml crates/feeds/tests/fixtures/*.rdf \
                        crates/feeds/tests/fixtures/*.json "$d/" 2>/dev/null || true ;;
        line_framer | jsonrpc)
            put $'{"jsonrpc":"2.0","id":1,"result":{}}\n'
            put $'{"jsonrpc":"2.0","id":"1","error":{"code":-32601,"message":"x"}}\n'
            put $'{"jsonrpc":"2.0","method":"ping","id":7}\n{"jsonrpc":"2.0","method":"notifications/x"}\n'
            put $'[{"jsonrpc":"2.0","id":1,"result":{}}]\n'
            put $'garbage\n{"jsonrpc":"2.0","id":1,"result":{},"error":{}}\n' ;;
        sse)
            put $'\x01event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
            put $'\x03id: 4\nretry: 100\ndata: a\ndata: b\n\n: comment\r\n\r\n'
            put $'\x07data:x\r\rdata: y\r\n\n' ;;
        config)
            put '{}'
            put '{"feeds":[{"name":"n","url":"https://example.org/f","interval":"15m","allow_private":true}],"feed_min_interval":"1s"}'
            put '{"mcp_servers":{"a":{"command":"x","args":["--y"],"env":{"T":"${TOKEN}"}},"b":{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer ${T}"},"allow_tools":["q"],"max_tools":3,"timeouts":{"call":"5s"}}}}'
            put '{"web":{"listen":"127.0.0.1:8080","hosts":["h"]},"router":{"kind":"rules"},"fetch":{"allow_hosts":["*.example.org"],"timeout":"10s"},"acts":[{"name":"a","cmd":["echo"],"read_only":true}]}' ;;
        tool_result)
            put $'\x40{"content":[{"type":"text","text":"hello"},{"type":"image","data":"AA==","mimeType":"image/png"}],"isError":true}'
            put $'\x08{"content":[],"structuredContent":{"a":[1,2.5,"\\u00e9"]}}'
            put $'\x10{"content":[{"type":"resource","resource":{"uri":"file:///x","text":"t"}}],"content":null}' ;;
        wyoming_reader)
            put $'{"type":"describe"}\n{"type":"transcript","data":{"text":"hi","language":"en"}}\n'
            put $'{"type":"transcript","version":"1.10.2","data_length":13}\n{"text":"hi"}'
            put $'{"type":"audio-chunk","data":{"rate":16000,"width":2,"channels":1},"payload_length":4}\n\x01\x02\x03\x04{"type":"audio-stop"}\n'
            put $'RIFF\x28\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x04\x00\x00\x00\x01\x02\x03\x04' ;;
        sentences_template)
            put 'turn on [the] {name} [in <area>]'
            put '(a;b;[c]) {1..10:n} \\(x\\)'
            put $'language: en\nintents:\n  X:\n    data:\n      - sentences: ["say {l}"]\nlists:\n  l:\n    values: [a, {in: "(b|c)", out: 1}]\n'
            put $'a: &x [1]\nb: *x\n' ;;
        url_vet)
            put 'http://127.0.0.1:8080/x'
            put 'https://[::ffff:169.254.169.254]/'
            put 'http://0x7f.1/'
            put 'http://017700000001/' ;;
    esac
}

start=$(date +%s)
# One build of every target first: they share their (sanitized) dependencies.
cargo +nightly fuzz build "${target_dir[@]}"
failed=()
for t in $targets; do
    corpus="$out/corpus/$t"
    seeds="$out/seeds/$t"
    mkdir -p "$corpus" "$out/artifacts/$t"
    seed "$t" "$seeds"
    echo "fuzz-smoke: $t for ${seconds}s"
    if ! cargo +nightly fuzz run "${target_dir[@]}" "$t" "$corpus" "$seeds" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$out/artifacts/$t/" -print_final_stats=1 \
        >"$out/$t.log" 2>&1; then
        failed+=("$t")
        echo "fuzz-smoke: $t FAILED; log: $out/$t.log; inputs: $out/artifacts/$t/" >&2
        tail -n 40 "$out/$t.log" >&2
    else
        grep -E '^stat::number_of_executed_units|^#[0-9]+ +DONE' "$out/$t.log" | tail -n 2 \
            | sed "s/^/fuzz-smoke: $t: /"
    fi
done
echo "fuzz-smoke: done in $(( $(date +%s) - start )) s"
if ((${#failed[@]})); then
    echo "fuzz-smoke: crashes in: ${failed[*]} (kept in $out)" >&2
    exit 1
fi
if [[ -z "${FUZZ_OUT:-}" ]]; then
    rm -rf "$out"
fi
