"""Python SDK (`mcp`) client for bench/run: the same measurements as `mcp-bench stdio|http`.

    python client.py stdio [--seq N --warmup N --calls N --inflight 1,8,64] -- CMD ARGS...
    python client.py http --url URL [...]

Prints one JSON object per measurement. Runs on the default asyncio loop (what the SDK ships
with); k calls in flight are k tasks in one anyio task group sharing one ClientSession.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def percentiles(lat: list[float]) -> tuple[float, float]:
    lat.sort()
    n = len(lat)
    return lat[min(n * 50 // 100, n - 1)] * 1e6, lat[min(n * 99 // 100, n - 1)] * 1e6


async def bench(session: ClientSession, a: argparse.Namespace, transport: str) -> None:
    await session.initialize()
    args = {"text": "hi"}
    for _ in range(a.warmup):
        await session.call_tool("echo", args)
    lat = []
    for _ in range(a.seq):
        t = time.perf_counter()
        await session.call_tool("echo", args)
        lat.append(time.perf_counter() - t)
    p50, p99 = percentiles(lat)
    print(json.dumps({"peer": "python", "transport": transport, "kind": "seq", "n": a.seq,
                      "p50_us": p50, "p99_us": p99}), flush=True)
    for k in a.inflight:
        left = a.calls

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await session.call_tool("echo", args)

        t = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(k):
                tg.start_soon(worker)
        secs = time.perf_counter() - t
        print(json.dumps({"peer": "python", "transport": transport, "kind": "inflight", "k": k,
                          "n": a.calls, "secs": secs, "calls_per_s": a.calls / secs}), flush=True)


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("transport", choices=["stdio", "http"])
    p.add_argument("--seq", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--calls", type=int, default=5000)
    p.add_argument("--inflight", type=lambda s: [int(x) for x in s.split(",") if x], default=[1, 8, 64])
    p.add_argument("--url", default="")
    argv = sys.argv[1:]
    cmd = argv[argv.index("--") + 1 :] if "--" in argv else []
    a = p.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if a.transport == "stdio":
        params = StdioServerParameters(command=cmd[0], args=cmd[1:])
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await bench(s, a, "stdio")
    else:
        from mcp.client.streamable_http import streamable_http_client

        async with streamable_http_client(a.url) as streams, ClientSession(streams[0], streams[1]) as s:
            await bench(s, a, "http")


if __name__ == "__main__":
    try:
        anyio.run(main)
    except Exception as e:  # noqa: BLE001 - one line on stderr, non-zero exit
        print(f"client.py: {e!r}", file=sys.stderr)
        sys.exit(1)
