"""The measuring half of bench/run (standard library only; see BENCHMARKS.md).

    python3 bench/harness.py --bin DIR --testenv DIR --out BENCHMARKS.md [--smoke] [--rounds N]

Runs every peer side by side in rounds, in a shuffled order each round, each client pinned with
its server to one CPU (`taskset`), and writes the tables between the result markers of --out.
Every figure of a row is the median over rounds of that round's figure. Exits non-zero naming
the first peer that failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BEGIN = "<!-- bench:results:begin -->"
END = "<!-- bench:results:end -->"
SB_BEGIN = "<!-- bench:sandbox:begin -->"
SB_END = "<!-- bench:sandbox:end -->"
DEFAULT_ONLY = "p1,p1http,p2,p3,p5,idle,sandbox"


def fail(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr)
    sys.exit(1)


class Ctx:
    def __init__(self, a: argparse.Namespace) -> None:
        self.bin = Path(a.bin)
        self.testenv = Path(a.testenv)
        self.smoke = a.smoke
        self.cpu = a.cpu
        self.rounds = a.rounds or (1 if a.smoke else 5)
        self.rounds_given = bool(a.rounds)
        self.only = a.only
        self.node = self.testenv / "node_modules/.bin/node"
        self.python = self.testenv / ".venv/bin/python"
        self.sdk = self.testenv / "node_modules/@modelcontextprotocol/sdk"
        self.peers_dir = Path(__file__).resolve().parent / "peers"
        self.loads: list[float] = []
        self.records: list[dict] = []
        self.server = str(self.bin / "testkit-mcp")
        self.mcp_bench = str(self.bin / "mcp-bench")
        self.http_floor = str(self.bin / "http_floor")
        self.maven = str(self.bin / "maven")

    def pin(self) -> list[str]:
        return ["taskset", "-c", str(self.cpu)]

    def sample_load(self) -> None:
        self.loads.append(float(Path("/proc/loadavg").read_text().split()[0]))

    def run_json(self, name: str, cmd: list[str], timeout: float, env: dict | None = None) -> list[dict]:
        self.sample_load()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired:
            fail(f"{name} did not finish in {timeout:.0f}s: {' '.join(cmd)}")
        if p.returncode != 0:
            fail(f"{name} failed (exit {p.returncode}): {p.stderr.strip()[-800:]}")
        out = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        if not out:
            fail(f"{name} printed no result: {p.stderr.strip()[-800:]}")
        return out


# ---- P-1 ------------------------------------------------------------------------------------

def counts(ctx: Ctx, peer: str) -> list[str]:
    if ctx.smoke:
        seq, warm, calls = 200, 20, 200
    elif peer == "python":
        seq, warm, calls = 1000, 100, 2000
    else:
        seq, warm, calls = 5000, 500, 10000
    return ["--seq", str(seq), "--warmup", str(warm), "--calls", str(calls), "--inflight", "1,8,64"]


# The Rust clients in each era: `maven`/`rmcp` speak 2025-11-25 (initialize), `maven-modern`/
# `rmcp-modern` 2026-07-28 (server/discover, per-request `_meta`, and over HTTP the Mcp-* headers).
RUST_ERAS = {
    "maven": ("maven", "2025-11-25"),
    "rmcp": ("rmcp", "2025-11-25"),
    "maven-modern": ("maven", "2026-07-28"),
    "rmcp-modern": ("rmcp", "2026-07-28"),
}


def stdio_cmd(ctx: Ctx, peer: str) -> list[str]:
    server = [ctx.server, "--fast"]
    if peer == "raw":
        return [ctx.mcp_bench, "stdio", "--client", "raw", *counts(ctx, peer), "--", ctx.mcp_bench, "echo-server"]
    if peer in RUST_ERAS:
        client, protocol = RUST_ERAS[peer]
        # The modern rows' server also answers server/discover and tags results with resultType.
        if protocol == "2026-07-28":
            server.append("--modern")
        return [ctx.mcp_bench, "stdio", "--client", client, "--protocol", protocol, *counts(ctx, peer), "--", *server]
    if peer == "typescript":
        return [str(ctx.node), str(ctx.peers_dir / "client.mjs"), "stdio", *counts(ctx, peer), "--", *server]
    return [str(ctx.python), str(ctx.peers_dir / "client.py"), "stdio", *counts(ctx, peer), "--", *server]


def http_cmd(ctx: Ctx, peer: str, url: str) -> list[str]:
    if peer == "raw":
        port = url.split(":")[2].split("/")[0]
        return [ctx.http_floor, "client", "--port", port, *counts(ctx, peer)]
    if peer in RUST_ERAS:
        client, protocol = RUST_ERAS[peer]
        return [ctx.mcp_bench, "http", "--client", client, "--protocol", protocol, "--url", url, *counts(ctx, peer)]
    if peer == "typescript":
        return [str(ctx.node), str(ctx.peers_dir / "client.mjs"), "http", "--url", url, *counts(ctx, peer)]
    return [str(ctx.python), str(ctx.peers_dir / "client.py"), "http", "--url", url, *counts(ctx, peer)]


def p1(ctx: Ctx, peers: list[str], http_peers: list[str]) -> None:
    env = {"MCP_SDK_ROOT": str(ctx.sdk)}
    for r in range(ctx.rounds):
        order = peers[:]
        random.shuffle(order)
        for peer in order:
            for rec in ctx.run_json(f"P-1 stdio {peer}", ctx.pin() + stdio_cmd(ctx, peer), 600, env):
                rec["round"] = r
                ctx.records.append(rec)
        if not http_peers:
            continue
        order = http_peers[:]
        random.shuffle(order)
        for peer in order:
            # A fresh server per client: no session or connection state carried over.
            # `http_floor server` answers every client (the HTTP twin of `testkit-mcp --fast`:
            # no JSON parsing), a fresh one per client.
            server = [ctx.http_floor, "server"]
            srv = subprocess.Popen(ctx.pin() + server, stdout=subprocess.PIPE, text=True)
            try:
                port = srv.stdout.readline().strip()
                if not port.isdigit():
                    fail(f"{' '.join(server)} printed {port!r} instead of a port")
                url = f"http://127.0.0.1:{port}/mcp"
                for rec in ctx.run_json(f"P-1 http {peer}", ctx.pin() + http_cmd(ctx, peer, url), 600, env):
                    rec["round"] = r
                    ctx.records.append(rec)
            finally:
                srv.terminate()
                srv.wait()
        print(f"bench: P-1 round {r + 1}/{ctx.rounds} done", file=sys.stderr)


# ---- P-3 ------------------------------------------------------------------------------------

def p3(ctx: Ctx) -> None:
    n = 20_000_000 if ctx.smoke else 500_000_000
    rec = ctx.run_json("P-3 flood", ctx.pin() + [ctx.mcp_bench, "flood", "--bytes", str(n), "--",
                                                 ctx.server, "--giant-line", str(n)], 600)[0]
    ctx.records.append(rec)


# ---- P-5 ------------------------------------------------------------------------------------

def p5(ctx: Ctx) -> None:
    n = "300" if ctx.smoke else "3000"
    for r in range(1 if ctx.smoke else 3):
        rec = ctx.run_json("P-5 isolate", ctx.pin() + [
            ctx.mcp_bench, "isolate", "--seq", n,
            "--healthy", f"{ctx.server} --fast", "--mute", f"{ctx.server} --mute-after-initialize"], 600)[0]
        rec["round"] = r
        ctx.records.append(rec)


# ---- P-2 ------------------------------------------------------------------------------------

def status_ok(ctx: Ctx, data: Path, config: Path) -> bool:
    p = subprocess.run([ctx.maven, "--data", str(data), "--config", str(config), "status"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


def boot_once(ctx: Ctx, kind: str, n: int, hole_port: str) -> float:
    with tempfile.TemporaryDirectory(prefix="maven-bench-") as d:
        data = Path(d) / "data"
        data.mkdir()
        servers = {}
        for i in range(n):
            if kind == "blackhole" or (kind == "mixed" and i % 2 == 0):
                servers[f"hole{i}"] = {"url": f"http://127.0.0.1:{hole_port}/mcp", "allow_private": True,
                                       "enabled": True}
            else:
                servers[f"mute{i}"] = {"command": ctx.server, "args": ["--mute-on-initialize"],
                                       "enabled": True}
        config = Path(d) / "config.json"
        config.write_text(json.dumps({"mcp_servers": servers, "web": {"listen": "127.0.0.1:0"}}))
        t0 = time.perf_counter()
        daemon = subprocess.Popen(ctx.pin() + [ctx.maven, "--data", str(data), "--config", str(config), "daemon"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        try:
            while not status_ok(ctx, data, config):
                if daemon.poll() is not None:
                    fail(f"P-2: maven daemon exited {daemon.returncode}: {daemon.stderr.read().decode()[-800:]}")
                if time.perf_counter() - t0 > 60:
                    fail("P-2: no answered status within 60 s")
                time.sleep(0.002)
            return (time.perf_counter() - t0) * 1e3
        finally:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                daemon.wait()


def p2(ctx: Ctx) -> None:
    hole = subprocess.Popen([ctx.mcp_bench, "blackhole"], stdout=subprocess.PIPE, text=True)
    try:
        port = hole.stdout.readline().strip()
        cases = [(k, n) for k in ("blackhole", "mute") for n in (0, 10, 50, 100)] + [("mixed", 100)]
        if ctx.smoke:
            cases = [("blackhole", 0), ("mixed", 10)]
        for r in range(1 if ctx.smoke else 3):
            random.shuffle(cases)
            for kind, n in cases:
                ctx.sample_load()
                ms = boot_once(ctx, kind, n, port)
                ctx.records.append({"kind": "boot", "servers": kind, "n": n, "ms": ms, "round": r})
        # The status answer alone, on a daemon already up: the floor of the figure above.
    finally:
        hole.terminate()
        hole.wait()


# ---- SPEC P-5: the idle daemon -------------------------------------------------------------

def proc_status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def cpu_secs(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle(ctx: Ctx) -> None:
    """RSS and CPU of `maven daemon` with 10 well-behaved stdio servers and 50 black-holed feeds."""
    window = 5.0 if ctx.smoke else 60.0
    hole = subprocess.Popen([ctx.mcp_bench, "blackhole"], stdout=subprocess.PIPE, text=True)
    try:
        port = hole.stdout.readline().strip()
        with tempfile.TemporaryDirectory(prefix="maven-bench-") as d:
            data = Path(d) / "data"
            data.mkdir()
            servers = {f"s{i}": {"command": ctx.server, "enabled": True} for i in range(10)}
            feeds = [{"name": f"f{i}", "url": f"http://127.0.0.1:{port}/feed{i}.xml", "allow_private": True}
                     for i in range(50)]
            config = Path(d) / "config.json"
            config.write_text(json.dumps({"mcp_servers": servers, "feeds": feeds,
                                          "web": {"listen": "127.0.0.1:0"}}))
            daemon = subprocess.Popen(ctx.pin() + [ctx.maven, "--data", str(data), "--config", str(config), "daemon"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            try:
                t0 = time.perf_counter()
                while not status_ok(ctx, data, config):
                    if daemon.poll() is not None or time.perf_counter() - t0 > 60:
                        fail("idle: the daemon did not come up")
                    time.sleep(0.05)
                time.sleep(5.0)  # the first dials, listings and feed attempts
                ctx.sample_load()
                c0, w0 = cpu_secs(daemon.pid), time.perf_counter()
                time.sleep(window)
                c1, w1 = cpu_secs(daemon.pid), time.perf_counter()
                ctx.records.append({"kind": "idle", "servers": 10, "feeds": 50, "window_s": w1 - w0,
                                    "rss_kib": proc_status_kib(daemon.pid, "VmRSS"),
                                    "hwm_kib": proc_status_kib(daemon.pid, "VmHWM"),
                                    "cpu_s_per_hour": (c1 - c0) / (w1 - w0) * 3600})
            finally:
                daemon.send_signal(signal.SIGTERM)
                try:
                    daemon.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(daemon.pid, signal.SIGKILL)
                    daemon.wait()
    finally:
        hole.terminate()
        hole.wait()


# ---- report ---------------------------------------------------------------------------------

def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def fmt_us(x: float) -> str:
    return f"{x:,.1f}" if x < 100 else f"{x:,.0f}"


def p1_tables(ctx: Ctx, transport: str, floor: str | None) -> list[str]:
    recs = [r for r in ctx.records if r.get("transport") == transport and r.get("step") != "sandbox"]
    peers = []
    for r in recs:
        if r["peer"] not in peers:
            peers.append(r["peer"])
    order = ["raw", "maven", "maven-modern", "rmcp", "rmcp-modern", "typescript", "python"]
    peers.sort(key=order.index)
    rows = {}
    for p in peers:
        seq = [r for r in recs if r["peer"] == p and r["kind"] == "seq"]
        row = {"p50": med([r["p50_us"] for r in seq]), "p99": med([r["p99_us"] for r in seq])}
        for k in (1, 8, 64):
            row[k] = med([r["calls_per_s"] for r in recs if r["peer"] == p and r["kind"] == "inflight" and r["k"] == k])
        rows[p] = row
    # The best peer is the best legacy-era peer, compared with Maven's legacy row.
    others = [p for p in peers if p not in ("raw", "maven") and not p.endswith("-modern")]
    best = min(others, key=lambda p: rows[p]["p50"]) if others else None
    out = [
        f"| client | p50 µs | p99 µs | p50 × {'floor' if floor else 'best peer'} | "
        "calls/s 1 in flight | calls/s 8 | calls/s 64 | Maven's 64-in-flight rate ÷ this |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ref = rows.get(floor) if floor else (rows.get(best) if best else None)
    for p in peers:
        r = rows[p]
        ratio = f"{r['p50'] / ref['p50']:.2f}×" if ref else "–"
        mv = rows.get("maven")
        vs = f"{mv[64] / r[64]:.2f}" if mv and p != "maven" else "–"
        out.append(f"| {p} | {fmt_us(r['p50'])} | {fmt_us(r['p99'])} | {ratio} | {r[1]:,.0f} | {r[8]:,.0f} | {r[64]:,.0f} | {vs} |")
    if best and "maven" in rows:
        m, b = rows["maven"], rows[best]
        out.append("")
        out.append(f"Maven ÷ best peer ({best}): p50 {m['p50'] / b['p50']:.2f}×, p99 {m['p99'] / b['p99']:.2f}×, "
                   f"throughput at 1/8/64 in flight {m[1] / b[1]:.2f}× / {m[8] / b[8]:.2f}× / {m[64] / b[64]:.2f}× "
                   "(latency: lower is better; throughput: higher is better).")
    for client in ("maven", "rmcp"):
        if client in rows and f"{client}-modern" in rows:
            m, b = rows[f"{client}-modern"], rows[client]
            out.append("")
            out.append(f"{client} 2026-07-28 ÷ {client} 2025-11-25 (the cost of the modern era's per-request `_meta`"
                       f"{' and headers' if transport == 'http' else ''}): p50 {m['p50'] / b['p50']:.2f}×, "
                       f"p99 {m['p99'] / b['p99']:.2f}×, throughput at 1/8/64 in flight "
                       f"{m[1] / b[1]:.2f}× / {m[8] / b[8]:.2f}× / {m[64] / b[64]:.2f}×.")
    return out


# ---- the sandbox: start-to-ready, and P-1 stdio with the sandbox on ----------------------

def sandbox_step(ctx: Ctx) -> None:
    data = Path(tempfile.mkdtemp(prefix="mvn-bench-"))
    try:
        server = ["--", ctx.server, "--fast"]
        wrap = ["--launcher", ctx.maven, "--sandbox", str(data / "data")]
        (data / "data").mkdir()
        n = "3" if ctx.smoke else "20"
        for r in range(ctx.rounds):
            order = ["maven", "maven-sandboxed"]
            random.shuffle(order)
            for peer in order:
                extra = wrap if peer == "maven-sandboxed" else []
                cmd = [ctx.mcp_bench, "stdio", "--client", "maven", *extra, *counts(ctx, "maven"), *server]
                for rec in ctx.run_json(f"sandbox P-1 {peer}", ctx.pin() + cmd, 600):
                    rec["round"] = r
                    rec["step"] = "sandbox"
                    ctx.records.append(rec)
            cmd = [ctx.mcp_bench, "start", *wrap, "--seq", n, *server]
            for rec in ctx.run_json("sandbox start-to-ready", ctx.pin() + cmd, 600):
                rec["round"] = r
                rec["step"] = "sandbox"
                ctx.records.append(rec)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def sandbox_tables(ctx: Ctx) -> list[str]:
    recs = [r for r in ctx.records if r.get("step") == "sandbox"]
    out = ["Server: `testkit-mcp --fast`; unsandboxed is how the daemon starts it with `\"sandbox\": false`",
           "(`maven __group-exec`: a PID namespace of its own); the sandboxed variants are started by",
           "`maven __sandbox-exec` with the default sandbox (`\"sandbox\": true`: a network namespace of its own,",
           "out only through Maven's proxy, handed over to a door as the daemon's), `\"network\": \"direct\"`",
           "(the machine's network, the page's port denied) or `\"network\": false`; direct (no launcher) is the",
           "program spawned with no launcher at all.",
           "",
           "| start-to-ready (spawn → `initialize` answered) | p50 ms | p99 ms | p50 ÷ unsandboxed | p50 − unsandboxed ms |",
           "|---|---:|---:|---:|---:|"]
    starts = [r for r in recs if r["kind"] == "start"]
    variants = []
    for r in starts:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    base = med([r["p50_ms"] for r in starts if r["variant"] == "unsandboxed"]) if starts else 0
    for v in variants:
        p50 = med([r["p50_ms"] for r in starts if r["variant"] == v])
        p99 = med([r["p99_ms"] for r in starts if r["variant"] == v])
        out.append(f"| {v} | {p50:.1f} | {p99:.1f} | {p50 / base:.2f}× | {p50 - base:+.1f} |")
    out += ["", "| P-1 stdio, Maven client | p50 µs | p99 µs | calls/s 1 in flight | calls/s 8 | calls/s 64 |",
            "|---|---:|---:|---:|---:|---:|"]
    rows = {}
    for p in ("maven", "maven-sandboxed"):
        seq = [r for r in recs if r["peer"] == p and r["kind"] == "seq"]
        if not seq:
            continue
        row = {"p50": med([r["p50_us"] for r in seq]), "p99": med([r["p99_us"] for r in seq])}
        for k in (1, 8, 64):
            row[k] = med([r["calls_per_s"] for r in recs if r["peer"] == p and r["kind"] == "inflight" and r["k"] == k])
        rows[p] = row
        out.append(f"| {p} | {fmt_us(row['p50'])} | {fmt_us(row['p99'])} | {row[1]:,.0f} | {row[8]:,.0f} | {row[64]:,.0f} |")
    if len(rows) == 2:
        a, b = rows["maven"], rows["maven-sandboxed"]
        out.append("")
        out.append(f"Sandboxed ÷ unsandboxed: p50 {b['p50'] / a['p50']:.2f}×, p99 {b['p99'] / a['p99']:.2f}×, "
                   f"throughput at 1/8/64 in flight {b[1] / a[1]:.2f}× / {b[8] / a[8]:.2f}× / {b[64] / a[64]:.2f}×.")
    return out


def machine() -> str:
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
    return f"{model}, {os.cpu_count()} CPUs, {int(mem) // 1024 // 1024} GiB, Linux {platform.release()}"


def versions(ctx: Ctx) -> str:
    ts = json.loads((ctx.sdk / "package.json").read_text())["version"]
    py = subprocess.run([str(ctx.python), "-c", "import importlib.metadata as m; print(m.version('mcp'))"],
                        capture_output=True, text=True).stdout.strip()
    node = subprocess.run([str(ctx.node), "--version"], capture_output=True, text=True).stdout.strip()
    pyv = subprocess.run([str(ctx.python), "--version"], capture_output=True, text=True).stdout.strip()
    return f"rmcp 3.11 (Cargo.lock of bench/; both eras), @modelcontextprotocol/sdk {ts} on node {node}, mcp {py} on {pyv}"


def report(ctx: Ctx, started: str, secs: float) -> str:
    L = []
    loads = ctx.loads or [0.0]
    cmd = ["bench/run"] + (["--smoke"] if ctx.smoke else []) + ([f"--rounds {ctx.rounds}"] if ctx.rounds_given else [])
    if ctx.only != DEFAULT_ONLY:
        cmd.append(f"--only {ctx.only}")
    L.append(f"Run `{' '.join(cmd)}` at {started} UTC, "
             f"{secs / 60:.1f} min, {ctx.rounds} round(s).")
    L.append(f"Machine: {machine()}. Load average (1 min) while measuring: median {med(loads):.1f}, "
             f"min {min(loads):.1f}, max {max(loads):.1f} — absolute figures are noisy; compare the ratios.")
    L.append(f"Peers: {versions(ctx)}.")
    L.append(f"Each client and its server pinned to CPU {ctx.cpu} (`taskset -c {ctx.cpu}`).")
    L.append("")
    if any(r.get("transport") == "stdio" for r in ctx.records):
        L.append("### P-1 `tools/call` round trip, stdio (server: `testkit-mcp --fast`)")
        L.append("")
        L += p1_tables(ctx, "stdio", "raw")
        L.append("")
    if any(r.get("transport") == "http" for r in ctx.records):
        L.append("### P-1 `tools/call` round trip, Streamable HTTP on loopback (server: `http_floor server`)")
        L.append("")
        has_floor = any(r.get("transport") == "http" and r["peer"] == "raw" for r in ctx.records)
        L += p1_tables(ctx, "http", "raw" if has_floor else None)
        L.append("")
    boots = [r for r in ctx.records if r["kind"] == "boot"]
    if boots:
        L.append("### P-2 `maven daemon` start to the first answered `maven status`")
        L.append("")
        L.append("| servers configured | n | median ms | min ms | max ms |")
        L.append("|---|---:|---:|---:|---:|")
        keys = sorted({(r["servers"], r["n"]) for r in boots}, key=lambda k: (k[0], k[1]))
        for s, n in keys:
            ms = [r["ms"] for r in boots if r["servers"] == s and r["n"] == n]
            label = {"blackhole": "black-holed HTTP", "mute": "mute stdio",
                     "mixed": "half black-holed, half mute"}[s]
            L.append(f"| {label} | {n} | {med(ms):.0f} | {min(ms):.0f} | {max(ms):.0f} |")
        L.append("")
    floods = [r for r in ctx.records if r["kind"] == "flood"]
    if floods:
        f = floods[0]
        L.append("### P-3 newline-less flood (`testkit-mcp --giant-line N` answering `tools/call`)")
        L.append("")
        L.append("| bytes sent | VmHWM before KiB | VmHWM after KiB | growth KiB | frame cap KiB | growth ÷ cap | client saw |")
        L.append("|---:|---:|---:|---:|---:|---:|---|")
        L.append(f"| {f['bytes']:,} | {f['hwm_before_kib']:,} | {f['hwm_after_kib']:,} | {f['growth_kib']:,} | "
                 f"{f['frame_cap_kib']:,} | {f['growth_kib'] / f['frame_cap_kib']:.2f} | {f['outcome']} |")
        L.append("")
    idles = [r for r in ctx.records if r["kind"] == "idle"]
    if idles:
        i = idles[0]
        L.append("### Idle daemon (SPEC P-5): 10 stdio servers (`testkit-mcp`), 50 feeds (black-holed)")
        L.append("")
        L.append("| window s | VmRSS KiB | VmHWM KiB | CPU s per hour (daemon process) |")
        L.append("|---:|---:|---:|---:|")
        L.append(f"| {i['window_s']:.0f} | {i['rss_kib']:,} | {i['hwm_kib']:,} | {i['cpu_s_per_hour']:.1f} |")
        L.append("")
    iso = [r for r in ctx.records if r["kind"] == "isolate"]
    if iso:
        a50 = med([r["alone_p50_us"] for r in iso])
        a99 = med([r["alone_p99_us"] for r in iso])
        b50 = med([r["beside_p50_us"] for r in iso])
        b99 = med([r["beside_p99_us"] for r in iso])
        L.append("### P-5 isolation through `mcp::Manager` (calls to a healthy server, interleaved blocks)")
        L.append("")
        L.append("| healthy server | p50 µs | p99 µs |")
        L.append("|---|---:|---:|")
        L.append(f"| alone | {fmt_us(a50)} | {fmt_us(a99)} |")
        L.append(f"| beside a mute server with 8 calls hanging on it (state: {iso[0]['mute_state']}) | {fmt_us(b50)} | {fmt_us(b99)} |")
        L.append(f"| ratio beside ÷ alone | {b50 / a50:.2f} | {b99 / a99:.2f} |")
        L.append("")
    return "\n".join(L)


def sections(body: str) -> tuple[str, list[tuple[str, str]]]:
    """The preamble of a results body and its `### ` sections as (heading, text)."""
    parts = ("\n" + body).split("\n### ")
    return parts[0].strip("\n"), [(p.split("\n", 1)[0], "### " + p.rstrip("\n")) for p in parts[1:]]


def merge_partial(old: str, new: str) -> str:
    """A run of some steps only (`--only`): its sections replace theirs in the previous results,
    the others are kept, and the preamble says which run each comes from."""
    old_pre, old_secs = sections(old)
    new_pre, new_secs = sections(new)
    fresh = dict(new_secs)
    kept = [h for h, _ in old_secs if h not in fresh]
    out = [new_pre]
    if kept:
        marker = "are kept from the previous results, whose header was: "
        # Kept twice over: they still come from the run that measured them.
        first = old_pre.split(marker, 1)[1].split("\n", 1)[0] if marker in old_pre else (
            old_pre.split("\n", 1)[0] if old_pre else "an earlier run")
        out.append("")
        out.append("This run measured only the sections it wrote; the others ("
                   + ", ".join(f"“{h.split(' (')[0]}”" for h in kept)
                   + f") are kept from the previous results, whose header was: {first}")
    merged = [text if h not in fresh else fresh.pop(h) for h, text in old_secs] + list(fresh.values())
    return "\n".join(out) + "\n\n" + "\n\n".join(merged) + "\n"


def write_between_markers(path: Path, body: str, partial: bool = False,
                          begin: str = BEGIN, end: str = END) -> None:
    text = path.read_text() if path.exists() else ""
    if begin not in text or end not in text:
        if begin == SB_BEGIN:
            # (a smoke run's scratch file has only the main markers)
            return
        fail(f"{path} lacks the markers {begin} / {end}")
    head, rest = text.split(begin, 1)
    old, tail = rest.split(end, 1)
    if partial and old.strip():
        body = merge_partial(old.strip("\n"), body)
    path.write_text(f"{head}{begin}\n{body}\n{end}{tail}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--testenv", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--raw-out", default="")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--rounds", type=int, default=0)
    p.add_argument("--cpu", type=int, default=(os.cpu_count() or 1) - 1)
    p.add_argument("--only", default=DEFAULT_ONLY)
    a = p.parse_args()
    ctx = Ctx(a)
    if not shutil.which("taskset"):
        fail("taskset (util-linux) is needed to pin client and server to one CPU")
    only = set(a.only.split(","))
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    t0 = time.time()
    rust = ["raw", "maven", "maven-modern", "rmcp", "rmcp-modern"]
    peers = rust + ["typescript", "python"]
    http_peers = peers[:] if "p1http" in only else []
    if ctx.smoke:
        peers, http_peers = rust[:], (rust[:] if http_peers else [])
    if "p1" in only:
        p1(ctx, peers, http_peers)
    if "p3" in only:
        p3(ctx)
    if "p2" in only:
        p2(ctx)
    if "p5" in only:
        p5(ctx)
    if "idle" in only:
        idle(ctx)
    if "sandbox" in only:
        sandbox_step(ctx)
    if a.raw_out:
        Path(a.raw_out).write_text("".join(json.dumps(r) + "\n" for r in ctx.records))
    secs = time.time() - t0
    if only - {"sandbox"}:
        body = report(ctx, started, secs)
        print(body)
        every = {"p1", "p1http", "p2", "p3", "p5", "idle"}
        write_between_markers(Path(a.out), body, partial=not ctx.smoke and not every <= only)
    if "sandbox" in only:
        loads = ctx.loads or [0.0]
        cmd = ["bench/run"] + (["--smoke"] if ctx.smoke else []) + ["--only sandbox"] + \
            ([f"--rounds {ctx.rounds}"] if ctx.rounds_given else [])
        head = [f"Run `{' '.join(cmd)}` (or a whole `bench/run`) at {started} UTC, {ctx.rounds} round(s), "
                f"each pinned with `taskset -c {ctx.cpu}`.",
                f"Machine: {machine()}. Load average (1 min) while measuring: median {med(loads):.1f}, "
                f"min {min(loads):.1f}, max {max(loads):.1f}.", ""]
        body = "\n".join(head + sandbox_tables(ctx))
        print(body)
        write_between_markers(Path(a.out), body, begin=SB_BEGIN, end=SB_END)


if __name__ == "__main__":
    main()
