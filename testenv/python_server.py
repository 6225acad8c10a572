"""A small MCP server on the official Python SDK, a real peer for Maven's client tests.

Two tools: `lookup_word` (read-only, one required string) and `delete_note` (destructive; it only
pretends, nothing is touched). Runs over stdio, or over Streamable HTTP on 127.0.0.1:

    python python_server.py stdio
    python python_server.py http [PORT]     # PORT 0 or absent: a free port

In HTTP mode the listening socket is bound on 127.0.0.1 before the server starts, and one line is
printed on stderr once it is ready:

    MCP_PEER_LISTENING http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer(name="maven-python-peer", version="1.0.0")

WORDS = {
    "maven": "one who is expert in a particular field",
    "peer": "a participant on equal footing",
}


@server.tool(
    description="Look a word up in a small built-in dictionary. Reads only.",
    annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
)
def lookup_word(word: str) -> str:
    return WORDS.get(word.lower(), f"no entry for {word!r}")


@server.tool(
    description="Delete a note by id (pretends to; nothing is stored).",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
)
def delete_note(note_id: str) -> str:
    return f"note {note_id} deleted"


async def serve_http(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)

    async def announce() -> None:
        while not http.started:
            await anyio.sleep(0.01)
        bound = sock.getsockname()
        print(f"MCP_PEER_LISTENING http://{bound[0]}:{bound[1]}/mcp", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        await http.serve(sockets=[sock])
        group.cancel_scope.cancel()


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
        return 0
    if mode == "http":
        port = int(argv[2]) if len(argv) > 2 else 0
        anyio.run(serve_http, port)
        return 0
    print(f"usage: {argv[0]} stdio | http [PORT]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
