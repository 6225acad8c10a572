"""Python `feedparser` peer of the P-4 feed parsing benchmark (bench/p4.py; see BENCHMARKS.md).

    python feedparser_bench.py time DIR INPUT [--min-secs S]
    python feedparser_bench.py count DIR INPUT N
    python feedparser_bench.py version

DIR is a corpus written by `feeds-bench corpus` (DIR/manifest.json names each input's files).
`time` reads the input's files into memory, parses them once untimed, then parses them in passes
until at least S seconds (default 0.5) have gone by, and prints the same JSON line as
`feeds-bench time`: {"peer", "input", "bytes", "passes", "secs", "mib_s", "items"}. `count` runs
N untimed passes (for an instruction count under valgrind; N = 0 is the baseline).

Each document goes in as an in-memory stream with feedparser's defaults: it always decodes,
normalizes dates and sanitizes HTML; nothing here turns that off.
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path

import feedparser


def load(corpus: Path, name: str) -> list[bytes]:
    manifest = json.loads((corpus / "manifest.json").read_text())
    for entry in manifest["inputs"]:
        if entry["name"] == name:
            return [(corpus / name / f).read_bytes() for f in entry["files"]]
    raise SystemExit(f"feedparser_bench: no input {name!r} in {corpus / 'manifest.json'}")


def one_pass(docs: list[bytes]) -> int:
    return sum(len(feedparser.parse(io.BytesIO(d)).entries) for d in docs)


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("time")
    t.add_argument("dir")
    t.add_argument("input")
    t.add_argument("--min-secs", type=float, default=0.5)
    c = sub.add_parser("count")
    c.add_argument("dir")
    c.add_argument("input")
    c.add_argument("n", type=int)
    sub.add_parser("version")
    a = p.parse_args()
    if a.cmd == "version":
        print(feedparser.__version__)
        return
    docs = load(Path(a.dir), a.input)
    size = sum(map(len, docs))
    if a.cmd == "count":
        items = 0
        for _ in range(a.n):
            items = one_pass(docs)
        print(json.dumps({"peer": "feedparser", "input": a.input, "bytes": size, "passes": a.n,
                          "items": items}))
        return
    items = one_pass(docs)
    passes = 0
    start = time.perf_counter()
    while True:
        one_pass(docs)
        passes += 1
        secs = time.perf_counter() - start
        if secs >= a.min_secs:
            break
    print(json.dumps({"peer": "feedparser", "input": a.input, "bytes": size, "passes": passes,
                      "secs": secs, "mib_s": size * passes / secs / (1 << 20), "items": items}))


if __name__ == "__main__":
    main()
