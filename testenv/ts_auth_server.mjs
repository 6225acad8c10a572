// An MCP server on the TypeScript SDK 2.x (`@modelcontextprotocol/server`) whose OAuth is the
// SDK's resource-server auth as it ships: `requireBearerAuth` (the Bearer check and the 401/403
// challenge with `resource_metadata`) and `oauthMetadataResponse` (the protected resource
// metadata), in front of `createMcpHandler` (2026-07-28 only). The token verifier is the piece a
// deployment writes itself: a JWT checked against the issuer's JWKS (issuer, audience = this
// server, expiry) with `jose`. Like the SDK as it ships, it reads only `Bearer` tokens.
//
//   node ts_auth_server.mjs ISSUER [PORT]      # PORT 0 or absent: a free port
//
// Prints one line on stderr once listening:
//   MCP_PEER_LISTENING http://127.0.0.1:<port>/mcp
import http from 'node:http';
import { Readable } from 'node:stream';

import {
  McpServer,
  createMcpHandler,
  fromJsonSchema,
  oauthMetadataResponse,
  requireBearerAuth,
} from '@modelcontextprotocol/server';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const [issuer, portArg = '0'] = process.argv.slice(2);
if (!issuer) {
  process.stderr.write('usage: ts_auth_server.mjs ISSUER [PORT]\n');
  process.exit(2);
}
const oauthMetadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
const jwks = createRemoteJWKSet(new URL(oauthMetadata.jwks_uri));

function factory() {
  const server = new McpServer({ name: 'maven-ts-auth-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'whoami',
    {
      description: 'Say who the token belongs to. Reads only.',
      inputSchema: fromJsonSchema({ type: 'object', properties: {} }),
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async () => ({ content: [{ type: 'text', text: 'the owner' }] }),
  );
  return server;
}

async function toWebRequest(req, port) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
    else if (v !== undefined) headers.set(k, v);
  }
  const body = chunks.length && req.method !== 'GET' && req.method !== 'HEAD' ? Buffer.concat(chunks) : undefined;
  return new Request(`http://127.0.0.1:${port}${req.url}`, { method: req.method, headers, body });
}

const server = http.createServer();
await new Promise((resolve) => server.listen(Number(portArg), '127.0.0.1', resolve));
const resource = new URL(`http://127.0.0.1:${server.address().port}/mcp`);
const metadataOptions = { oauthMetadata, resourceServerUrl: resource, scopesSupported: ['mcp'] };
const resourceMetadataUrl = `http://127.0.0.1:${server.address().port}/.well-known/oauth-protected-resource/mcp`;
const verifier = {
  async verifyAccessToken(token) {
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer, audience: resource.href });
      return {
        token,
        clientId: String(payload.client_id ?? ''),
        scopes: String(payload.scope ?? '').split(' ').filter(Boolean),
        expiresAt: payload.exp,
        resource,
      };
    } catch (e) {
      process.stderr.write(`token refused: ${e.message}\n`);
      const { OAuthError, OAuthErrorCode } = await import('@modelcontextprotocol/server');
      throw new OAuthError(OAuthErrorCode.InvalidToken, 'Invalid token');
    }
  },
};
const bearer = requireBearerAuth({
  verifier,
  requiredScopes: ['mcp'],
  resourceMetadataUrl,
  expectedResource: resource,
});
const handler = createMcpHandler(factory, { legacy: 'reject' });

async function send(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (response.body) Readable.fromWeb(response.body).on('error', () => res.destroy()).pipe(res);
  else res.end();
}

server.on('request', async (req, res) => {
  try {
    const request = await toWebRequest(req, server.address().port);
    const metadata = oauthMetadataResponse(request, metadataOptions);
    if (metadata) return send(res, metadata);
    if (!req.url.startsWith('/mcp')) return send(res, new Response(null, { status: 404 }));
    const authInfo = await bearer(request);
    if (authInfo instanceof Response) return send(res, authInfo);
    return send(res, await handler.fetch(request, { authInfo }));
  } catch (e) {
    process.stderr.write(`ts_auth_server: ${e}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});
process.stderr.write(`MCP_PEER_LISTENING ${resource.href}\n`);
