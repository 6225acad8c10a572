"""An MCP server on the official Python SDK whose OAuth is the SDK's resource-server auth as it
ships (`AuthSettings` and a `TokenVerifier`: the protected resource metadata, the 401 challenge,
the Bearer check), for Maven's tests against a real authorization server.

The token verifier is the one piece a deployment writes itself: here it checks a JWT access
token against the authorization server's JWKS (issuer, audience = this server, expiry) with
PyJWT. Like the SDK as it ships, it reads only `Bearer` tokens and says nothing of DPoP.

    python python_auth_server.py ISSUER [PORT]     # PORT 0 or absent: a free port

Prints one line on stderr once listening:

    MCP_PEER_LISTENING http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import socket
import sys
import warnings

import anyio
import jwt
import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations


class JwksVerifier:
    """Accepts a JWT access token signed by the issuer's keys, for this resource, unexpired."""

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer = issuer
        self.resource = resource
        self.keys = jwt.PyJWKClient(f"{issuer}/jwks", cache_keys=True)

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            key = await anyio.to_thread.run_sync(self.keys.get_signing_key_from_jwt, token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=["RS256", "PS256", "ES256", "EdDSA"],
                audience=self.resource,
                issuer=self.issuer,
            )
        except Exception as e:  # noqa: BLE001 - any failure is a refused token
            print(f"token refused: {e}", file=sys.stderr, flush=True)
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id", "")),
            scopes=str(claims.get("scope", "")).split(),
            expires_at=claims.get("exp"),
            resource=self.resource,
            subject=claims.get("sub"),
        )


def build(issuer: str, resource: str) -> MCPServer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = MCPServer(
            name="maven-python-auth-peer",
            version="1.0.0",
            token_verifier=JwksVerifier(issuer, resource),
            auth=AuthSettings(
                issuer_url=issuer,
                resource_server_url=resource,
                required_scopes=["mcp"],
                validate_token_resource=True,
            ),
        )

    @server.tool(
        description="Say who the token belongs to. Reads only.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    )
    def whoami() -> str:
        return "the owner"

    return server


async def serve(issuer: str, port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    bound = sock.getsockname()
    resource = f"http://{bound[0]}:{bound[1]}/mcp"
    app = build(issuer, resource).streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    http = uvicorn.Server(config)

    async def announce() -> None:
        while not http.started:
            await anyio.sleep(0.01)
        print(f"MCP_PEER_LISTENING {resource}", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        await http.serve(sockets=[sock])
        group.cancel_scope.cancel()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(f"usage: {argv[0]} ISSUER [PORT]", file=sys.stderr)
        return 2
    port = int(argv[2]) if len(argv) > 2 else 0
    anyio.run(serve, argv[1], port)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
