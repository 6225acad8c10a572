"""P-4 feed parsing, the feed step of bench/run (standard library only; see BENCHMARKS.md).

    python3 bench/p4.py --bin DIR --testenv DIR --out BENCHMARKS.md [--smoke] [--rounds N]
                        [--cpu N] [--min-secs S] [--icount | --no-icount] [--raw-out FILE]

Writes the corpus of `feeds-bench corpus` (generated RSS/Atom feeds of 10 KiB to 2 MiB and the
feeds crate's fixtures) to a temporary folder, then measures every peer on those same files:
Maven's `feeds` parse-only and with plain text, the feed-rs crate parse-only and followed by
Maven's `html_to_text`, and Python `feedparser` (testenv/.venv). Each round runs every
(peer, input) pair once, in a shuffled order, as its own process pinned to one CPU (`taskset`);
each process reads its files into memory, parses them once untimed and then times passes for at
least --min-secs. A figure is the median over rounds. With valgrind (on by default in a full
run), it also counts the instructions per input byte of one steady-state pass (two passes less
one) of every peer on every input, feedparser on the inputs up to 128 KiB only.

Writes the table between `<!-- bench:p4:begin -->` and `<!-- bench:p4:end -->` of --out and
fails before measuring if they are missing. --smoke: the 10 KiB inputs and the fixtures, one
short round, feedparser only if installed, the table on stdout only. Exits non-zero naming the
first peer that failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BEGIN = "<!-- bench:p4:begin -->"
END = "<!-- bench:p4:end -->"
RUST_PEERS = ["maven", "maven-text", "feed-rs", "feed-rs-text"]
TITLES = {"maven": "Maven parse-only", "maven-text": "Maven + text", "feed-rs": "feed-rs parse-only",
          "feed-rs-text": "feed-rs + text", "feedparser": "feedparser"}
# feedparser runs some 50 times slower under valgrind than alone: count it on the small inputs only.
ICOUNT_MAX_FEEDPARSER_BYTES = 128 << 10


def fail(msg: str) -> None:
    print(f"bench/p4: {msg}", file=sys.stderr)
    sys.exit(1)


def note(msg: str) -> None:
    print(f"bench/p4: {msg}", file=sys.stderr)


class Run:
    def __init__(self, a: argparse.Namespace) -> None:
        self.feeds_bench = str(Path(a.bin) / "feeds-bench")
        self.python = str(Path(a.testenv) / ".venv/bin/python")
        self.peer_py = str(Path(__file__).resolve().parent / "peers/feedparser_bench.py")
        self.cpu = a.cpu
        self.smoke = a.smoke
        self.rounds = a.rounds or (1 if a.smoke else 5)
        self.min_secs = a.min_secs or (0.05 if a.smoke else 0.5)
        self.loads: list[float] = []
        self.records: list[dict] = []

    def cmd(self, peer: str, sub: str, corpus: str, name: str, *extra: str) -> list[str]:
        if peer == "feedparser":
            return [self.python, self.peer_py, sub, corpus, name, *extra]
        return [self.feeds_bench, sub, corpus, peer, name, *extra]

    def run_json(self, what: str, cmd: list[str], timeout: float) -> dict:
        self.loads.append(float(Path("/proc/loadavg").read_text().split()[0]))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            fail(f"{what} did not finish in {timeout:.0f}s: {' '.join(cmd)}")
        if p.returncode != 0:
            fail(f"{what} failed (exit {p.returncode}): {p.stderr.strip()[-800:]}")
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
        if not lines:
            fail(f"{what} printed no result: {p.stderr.strip()[-800:]}")
        return json.loads(lines[-1])


def feedparser_version(run: Run) -> str | None:
    if not Path(run.python).exists():
        return None
    p = subprocess.run([run.python, run.peer_py, "version"], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def check_markers(path: Path) -> None:
    text = path.read_text() if path.exists() else ""
    if BEGIN not in text or END not in text:
        fail(f"{path} lacks the P-4 result markers {BEGIN} / {END}: add them where the P-4 "
             "table belongs (or run with --smoke to print the table only)")


def write_between_markers(path: Path, body: str) -> None:
    check_markers(path)
    text = path.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{body}\n{END}{tail}")


def measure(run: Run, corpus: str, peers: list[str], inputs: list[str]) -> None:
    pairs = [(p, i) for p in peers for i in inputs]
    for r in range(run.rounds):
        random.shuffle(pairs)
        started = time.time()
        for peer, name in pairs:
            cmd = ["taskset", "-c", str(run.cpu)] + run.cmd(
                peer, "time", corpus, name, "--min-secs", str(run.min_secs))
            rec = run.run_json(f"{peer} on {name}", cmd, timeout=600)
            rec["round"] = r
            run.records.append(rec)
        note(f"round {r + 1}/{run.rounds} done in {time.time() - started:.0f}s")


def icount(run: Run, corpus: str, peers: list[str], inputs: list[dict]) -> dict[tuple[str, str], float]:
    """Instructions per input byte of one steady-state pass (two passes less one), per
    (peer, input); feedparser only on inputs up to ICOUNT_MAX_FEEDPARSER_BYTES."""
    out = {}
    for peer in peers:
        for i in inputs:
            name = i["name"]
            if peer == "feedparser" and i["bytes"] > ICOUNT_MAX_FEEDPARSER_BYTES:
                continue
            counts = []
            for n in (1, 2):
                cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
                       "--cachegrind-out-file=/dev/null"] + run.cmd(peer, "count", corpus, name, str(n))
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
                m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
                if p.returncode != 0 or not m:
                    fail(f"valgrind on {peer} {name} failed (exit {p.returncode}): {p.stderr.strip()[-800:]}")
                counts.append(int(m.group(1).replace(",", "")))
            out[(peer, name)] = (counts[1] - counts[0]) / i["bytes"]
        note(f"instructions counted for {peer}")
    return out


def machine() -> str:
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "unknown CPU")
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    return f"{cpu}, {os.cpu_count()} CPUs, {mem_kib >> 20} GiB, Linux {platform.release()}"


def rust_versions() -> str:
    lock = (Path(__file__).resolve().parent.parent / "Cargo.lock").read_text()
    m = re.search(r'name = "feed-rs"\nversion = "([^"]+)"', lock)
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.split()
    return f"feed-rs {m.group(1) if m else '?'}, rustc {rustc[1] if len(rustc) > 1 else '?'}"


def label(name: str, files: int) -> str:
    if name == "fixtures":
        return f"feeds crate fixtures ({files} files)"
    kind, size = name.split("_")
    kib = int(size.removesuffix("KiB"))
    size = f"{kib >> 10} MiB" if kib >= 1024 and kib % 1024 == 0 else f"{kib} KiB"
    return f"{'RSS' if kind == 'rss' else 'Atom'} {size}"


def report(run: Run, peers: list[str], inputs: list[dict], fp_version: str | None,
           icounts: dict[tuple[str, str], float], started: str, secs: float) -> str:
    def med(peer: str, name: str) -> float:
        return statistics.median(r["mib_s"] for r in run.records if r["peer"] == peer and r["input"] == name)

    def items(peer: str, name: str) -> str:
        return str(next(r["items"] for r in run.records if r["peer"] == peer and r["input"] == name))

    have_fp = "feedparser" in peers
    names = [i["name"] for i in inputs]
    size = {i["name"]: i["bytes"] for i in inputs}
    files = {i["name"]: len(i["files"]) for i in inputs}
    # The whole corpus: one pass over every input at each input's median speed.
    speed = {p: {n: med(p, n) for n in names} for p in peers}
    for p in peers:
        speed[p]["all"] = sum(size.values()) / sum(size[n] / speed[p][n] for n in names)

    def ratio(mine: str, others: list[str], n: str) -> str:
        best = max((o for o in others if o in peers), key=lambda o: speed[o][n])
        short = {"feed-rs": "feed-rs", "feed-rs-text": "feed-rs", "feedparser": "feedparser"}[best]
        return f"{speed[mine][n] / speed[best][n]:.2f}× ({short})"

    loads = run.loads or [0.0]
    cmd = "bench/run" + (" --smoke" if run.smoke else "")
    L = [f"Run `{cmd}` (step P-4, `bench/p4.py`) at {started} UTC, {secs / 60:.1f} min, "
         f"{run.rounds} round(s), every figure the median over rounds of MiB/s (higher is better); "
         f"each process timed its parse passes for ≥ {run.min_secs:g} s, pinned to CPU {run.cpu} "
         f"(`taskset -c {run.cpu}`).",
         f"Machine: {machine()}. Load average (1 min) while measuring: median "
         f"{statistics.median(loads):.1f}, min {min(loads):.1f}, max {max(loads):.1f}.",
         f"Peers: Maven `feeds` (this tree), {rust_versions()}"
         + (f", feedparser {fp_version} on {platform.python_implementation()} "
            f"{subprocess.run([run.python, '-c', 'import platform; print(platform.python_version())'], capture_output=True, text=True).stdout.strip()}"
            if have_fp else "; feedparser not installed, left out") + ".",
         ""]
    fp_col = " feedparser |" if have_fp else ""
    fp_sep = "---:|" if have_fp else ""
    L.append("| input | bytes | Maven parse-only | feed-rs parse-only | Maven + text | feed-rs + text |"
             f"{fp_col} parse-only: Maven ÷ best other | + text: Maven ÷ best other |"
             f"{' + text: Maven ÷ feedparser |' if have_fp else ''} entries "
             f"(Maven / feed-rs{' / feedparser' if have_fp else ''}) |")
    L.append(f"|---|---:|---:|---:|---:|---:|{fp_sep}---:|---:|{fp_sep}---|")
    for n in names + ["all"]:
        cells = [f"{speed[p][n]:.1f}" for p in ["maven", "feed-rs", "maven-text", "feed-rs-text"]]
        if have_fp:
            cells.append(f"{speed['feedparser'][n]:.2f}")
        if n == "all":
            row = f"| whole corpus, one pass over each input | {sum(size.values()):,} |"
            ent = "—"
        else:
            row = f"| {label(n, files[n])} | {size[n]:,} |"
            ent = " / ".join(items(p, n) for p in ["maven", "feed-rs"] + (["feedparser"] if have_fp else []))
        L.append(f"{row} {' | '.join(cells)} | {ratio('maven', ['feed-rs', 'feedparser'], n)} | "
                 f"{ratio('maven-text', ['feed-rs-text', 'feedparser'], n)} | "
                 + (f"{speed['maven-text'][n] / speed['feedparser'][n]:.0f}× | " if have_fp else "")
                 + f"{ent} |")
    L.append("")
    if icounts:
        L += icount_table(icounts, peers, names, size, files)
    return "\n".join(L)


def icount_table(icounts: dict[tuple[str, str], float], peers: list[str], names: list[str],
                 size: dict[str, int], files: dict[str, int]) -> list[str]:
    """The instruction counts: independent of the machine's load, unlike the MiB/s."""
    have_fp = "feedparser" in peers
    # The whole corpus: instructions of one pass over each counted input, per byte.
    for p in peers:
        counted = [n for n in names if (p, n) in icounts]
        icounts[(p, "all")] = sum(icounts[(p, n)] * size[n] for n in counted) / sum(size[n] for n in counted)

    def cell(p: str, n: str) -> str:
        return f"{icounts[(p, n)]:,.0f}" if (p, n) in icounts else "—"

    def ratio(mine: str, others: list[str], n: str) -> str:
        have = [o for o in others if (o, n) in icounts]
        best = min(have, key=lambda o: icounts[(o, n)])
        return f"{icounts[(best, n)] / icounts[(mine, n)]:.2f}× ({TITLES[best].split()[0]})"

    L = ["Instructions per input byte of one pass (valgrind `--tool=cachegrind`, two passes less one; "
         "lower is better, independent of load; ratio: the best other peer's count ÷ Maven's"
         + (f"; feedparser counted on inputs up to {ICOUNT_MAX_FEEDPARSER_BYTES >> 10} KiB only, "
            "and its whole-corpus figure is over those" if have_fp else "") + "):",
         "",
         "| input | Maven parse-only | feed-rs parse-only | Maven + text | feed-rs + text |"
         + (" feedparser |" if have_fp else "") + " parse-only: best other ÷ Maven | + text: best other ÷ Maven |",
         "|---|---:|---:|---:|---:|" + ("---:|" if have_fp else "") + "---:|---:|"]
    for n in names + ["all"]:
        cells = [cell(p, n) for p in ["maven", "feed-rs", "maven-text", "feed-rs-text"] + (["feedparser"] if have_fp else [])]
        title = "whole corpus, one pass over each input" if n == "all" else label(n, files[n])
        L.append(f"| {title} | {' | '.join(cells)} | {ratio('maven', ['feed-rs', 'feedparser'], n)} | "
                 f"{ratio('maven-text', ['feed-rs-text', 'feedparser'], n)} |")
    L.append("")
    return L


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="the folder with the release feeds-bench")
    p.add_argument("--testenv", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--raw-out", default="")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--rounds", type=int, default=0)
    p.add_argument("--cpu", type=int, default=(os.cpu_count() or 1) - 1)
    p.add_argument("--min-secs", type=float, default=0.0)
    p.add_argument("--icount", action=argparse.BooleanOptionalAction, default=None,
                   help="count instructions with valgrind (default: on in a full run)")
    a = p.parse_args()
    run = Run(a)
    if not shutil.which("taskset"):
        fail("taskset (util-linux) is needed to pin every peer to one CPU")
    if not Path(run.feeds_bench).exists():
        fail(f"{run.feeds_bench} is missing: cargo build --release -p maven-bench --bin feeds-bench")
    if not run.smoke:
        check_markers(Path(a.out))
    fp_version = feedparser_version(run)
    peers = list(RUST_PEERS)
    if fp_version:
        peers.append("feedparser")
    elif run.smoke:
        note(f"feedparser is not installed in {run.python} (scripts/install-test-peers.sh): "
             "the smoke run measures the Rust peers only")
    else:
        fail(f"feedparser does not import with {run.python}: run scripts/install-test-peers.sh")
    want_icount = a.icount if a.icount is not None else not run.smoke
    if want_icount and not shutil.which("valgrind"):
        if a.icount:
            fail("--icount needs valgrind")
        note("valgrind is not installed: instruction counts left out")
        want_icount = False
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="maven-p4-") as corpus:
        gen = subprocess.run([run.feeds_bench, "corpus", corpus] + (["--smoke"] if run.smoke else []),
                             capture_output=True, text=True)
        if gen.returncode != 0:
            fail(f"feeds-bench corpus failed: {gen.stderr.strip()[-800:]}")
        inputs = json.loads((Path(corpus) / "manifest.json").read_text())["inputs"]
        measure(run, corpus, peers, [i["name"] for i in inputs])
        icounts = icount(run, corpus, peers, inputs) if want_icount else {}
    if a.raw_out:
        Path(a.raw_out).write_text("".join(json.dumps(r) + "\n" for r in run.records))
    body = report(run, peers, inputs, fp_version, icounts, started, time.time() - t0)
    print(body)
    if not run.smoke:
        write_between_markers(Path(a.out), body)


if __name__ == "__main__":
    main()
