"""By-hand check of a test peer with a bare JSON-RPC driver (standard library only).

    python3 smoke.py stdio -- CMD [ARGS...]
    python3 smoke.py http URL

Sends initialize (no client capabilities), notifications/initialized, tools/list, and
tools/call for the tool named by --call (with --args JSON), printing every frame received.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import urllib.request

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "smoke", "version": "0"},
}


def stdio(cmd: list[str], call: str, args: dict) -> None:
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    frames: list[dict] = []
    cond = threading.Condition()

    def reader() -> None:
        for line in proc.stdout:
            print("<-", line.rstrip()[:400])
            with cond:
                frames.append(json.loads(line))
                cond.notify_all()

    threading.Thread(target=reader, daemon=True).start()

    def send(msg: dict) -> None:
        print("->", json.dumps(msg))
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()

    def wait(rid: int) -> dict:
        with cond:
            ok = cond.wait_for(lambda: any(f.get("id") == rid and "method" not in f for f in frames), 20)
            if not ok:
                sys.exit(f"no answer to request {rid}")
            return next(f for f in frames if f.get("id") == rid and "method" not in f)

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    wait(1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = wait(2)["result"]["tools"]
    print("tools:", len(tools), [t["name"] for t in tools])
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": call, "arguments": args}})
    print("call result:", json.dumps(wait(3)))
    proc.stdin.close()
    proc.wait(10)


def http(url: str, call: str, args: dict) -> None:
    session: str | None = None
    version: str | None = None

    def post(msg: dict) -> list[dict]:
        nonlocal session
        print("->", json.dumps(msg))
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if session:
            headers["Mcp-Session-Id"] = session
        if version:
            headers["MCP-Protocol-Version"] = version
        req = urllib.request.Request(url, json.dumps(msg).encode(), headers, method="POST")
        with urllib.request.urlopen(req, timeout=20) as resp:
            session = resp.headers.get("Mcp-Session-Id", session)
            ctype = resp.headers.get("Content-Type", "")
            body = resp.read().decode()
            print(f"<- {resp.status} {ctype} session={session}")
        out = []
        if ctype.startswith("text/event-stream"):
            for line in body.splitlines():
                print("   |", line[:400])
                if line.startswith("data:") and line[5:].strip():
                    out.append(json.loads(line[5:]))
        elif body.strip():
            print("   |", body[:400])
            out.append(json.loads(body))
        return out

    init = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT})
    version = init[-1]["result"]["protocolVersion"]
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = [f for f in post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) if f.get("id") == 2]
    names = [t["name"] for t in tools[0]["result"]["tools"]]
    print("tools:", len(names), names)
    res = post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": call, "arguments": args}})
    print("call result:", json.dumps(res[-1]))
    req = urllib.request.Request(url, headers={"Mcp-Session-Id": session or ""}, method="DELETE")
    with urllib.request.urlopen(req, timeout=10) as resp:
        print("DELETE ->", resp.status)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["stdio", "http"])
    p.add_argument("target", nargs="+")
    p.add_argument("--call", default="echo")
    p.add_argument("--args", default='{"message": "hello"}')
    a = p.parse_args()
    if a.mode == "stdio":
        stdio(a.target, a.call, json.loads(a.args))
    else:
        http(a.target[0], a.call, json.loads(a.args))


if __name__ == "__main__":
    main()
