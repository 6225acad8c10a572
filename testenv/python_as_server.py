"""A plain OAuth 2.1 authorization server (no OpenID) for Maven's tests: the official Python
SDK's own authorization server handlers (RFC 8414 metadata, /authorize with PKCE, /token,
/register for dynamic registration, /revoke), mounted with the SDK's resource-server auth on one
MCP server, as the SDK ships them.

The provider (storage) is the piece a deployment writes itself: here in memory, the owner's
consent given at once (there is no person in a test), refresh tokens rotated (each works once;
a replayed one is refused), access tokens living ACCESS_TTL seconds.

    python python_as_server.py [PORT] [ACCESS_TTL]     # PORT 0 or absent: a free port

Prints one line on stderr once listening, then one `EVENT …` line per grant and revocation
(never a token):

    MCP_PEER_LISTENING http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import secrets
import socket
import sys
import time
import warnings

import anyio
import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_types import ToolAnnotations


def event(what: str) -> None:
    print(f"EVENT {what}", file=sys.stderr, flush=True)


class MemoryProvider:
    def __init__(self, ttl: int) -> None:
        self.ttl = ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[str(client_info.client_id)] = client_info
        event("register")

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="owner",
        )
        event(f"authorize scope={' '.join(params.scopes or [])}")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str):
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.ttl,
            resource=resource,
            subject="owner",
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject="owner"
        )
        return OAuthToken(
            access_token=access,
            expires_in=self.ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        event("grant authorization_code")
        return self._issue(str(client.client_id), authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token: str):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        # Rotation: the used refresh token is gone.
        self.refresh.pop(refresh_token.token, None)
        event("grant refresh_token")
        return self._issue(str(client.client_id), scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        t = self.access.get(token)
        if t is None or (t.expires_at is not None and t.expires_at < time.time()):
            return None
        return t

    async def revoke_token(self, token) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)
        event("revoke")


async def serve(port: int, ttl: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    bound = sock.getsockname()
    base = f"http://{bound[0]}:{bound[1]}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = MCPServer(
            name="maven-python-as-peer",
            version="1.0.0",
            auth_server_provider=MemoryProvider(ttl),
            auth=AuthSettings(
                issuer_url=base,
                resource_server_url=f"{base}/mcp",
                required_scopes=["mcp"],
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
                ),
                revocation_options=RevocationOptions(enabled=True),
                validate_token_resource=True,
            ),
        )

    @server.tool(
        description="Say who the token belongs to. Reads only.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    )
    def whoami() -> str:
        return "the owner"

    app = server.streamable_http_app(host="127.0.0.1")
    http = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def announce() -> None:
        while not http.started:
            await anyio.sleep(0.01)
        print(f"MCP_PEER_LISTENING {base}/mcp", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        await http.serve(sockets=[sock])
        group.cancel_scope.cancel()


def main(argv: list[str]) -> int:
    port = int(argv[1]) if len(argv) > 1 else 0
    ttl = int(argv[2]) if len(argv) > 2 else 3600
    anyio.run(serve, port, ttl)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
