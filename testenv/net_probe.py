"""A real Python MCP server behind Maven's proxy: before serving python_server.py over stdio, it
fetches each URL of its arguments with urllib and with httpx2 (the HTTP client of the Python MCP
SDK, as the official fetch server uses httpx), both of which take the proxy from the
environment (HTTP_PROXY, NO_PROXY), and prints one line on stderr:

    NETPROBE {"urllib URL": "STATUS BODY", "httpx URL": "STATUS BODY" | "error KIND: WHY", ...}

    python net_probe.py URL...
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import urllib.error
import urllib.request

import httpx2


def short(text: str) -> str:
    return " ".join(text.split())[:160]


def main() -> None:
    results: dict[str, str] = {}
    for url in sys.argv[1:]:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                results[f"urllib {url}"] = f"{r.status} {short(r.read(400).decode(errors='replace'))}"
        except urllib.error.HTTPError as e:
            results[f"urllib {url}"] = f"{e.code} {short(e.read(400).decode(errors='replace'))}"
        except Exception as e:  # noqa: BLE001 - the probe reports whatever happened
            results[f"urllib {url}"] = f"error {type(e).__name__}: {short(str(e))}"
        try:
            r = httpx2.get(url, timeout=10)
            results[f"httpx {url}"] = f"{r.status_code} {short(r.text)}"
        except Exception as e:  # noqa: BLE001
            results[f"httpx {url}"] = f"error {type(e).__name__}: {short(str(e))}"
    print("NETPROBE " + json.dumps(results), file=sys.stderr, flush=True)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.argv = [os.path.join(here, "python_server.py"), "stdio"]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
