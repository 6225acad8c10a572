// A Cloudflare Worker for Maven's OAuth tests: Cloudflare's workers-oauth-provider as the
// authorization server (its defaults but what a deployment sets: its endpoints, dynamic
// registration, 60 s access tokens) in front of a small MCP endpoint at /mcp, on one origin
// (the template shape). The owner's consent is answered at once for the account `owner`.
import { OAuthProvider } from './node_modules/@cloudflare/workers-oauth-provider/dist/oauth-provider.js';

const tool = {
  name: 'whoami',
  description: 'Say who the token belongs to. Reads only.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
};

// The MCP endpoint (JSON answers, no session), reached only with a valid access token.
const mcp = {
  async fetch(request, env, ctx) {
    if (request.method !== 'POST') {
      return new Response(null, { status: 405, headers: { allow: 'POST' } });
    }
    let msg;
    try {
      msg = await request.json();
    } catch {
      return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }, { status: 400 });
    }
    if (msg.id === undefined || msg.id === null) {
      return new Response(null, { status: 202 });
    }
    const answer = (result) => Response.json({ jsonrpc: '2.0', id: msg.id, result });
    switch (msg.method) {
      case 'initialize':
        return answer({
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'maven-cloudflare-peer', version: '1.0.0' },
        });
      case 'ping':
        return answer({});
      case 'tools/list':
        return answer({ tools: [tool] });
      case 'tools/call':
        return answer({ content: [{ type: 'text', text: `the owner (${ctx.props.user})` }] });
      default:
        return Response.json({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found' } });
    }
  },
};

// Everything else: the authorization page (consent answered at once) and the set-up of the
// pre-registered confidential client.
const pages = {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/authorize') {
      const req = await env.OAUTH_PROVIDER.parseAuthRequest(request);
      const { redirectTo } = await env.OAUTH_PROVIDER.completeAuthorization({
        request: req,
        userId: 'owner',
        metadata: {},
        scope: req.scope,
        props: { user: 'owner' },
      });
      return Response.redirect(redirectTo, 302);
    }
    if (url.pathname === '/setup/client' && request.method === 'POST') {
      const { redirect_uri } = await request.json();
      const c = await env.OAUTH_PROVIDER.createClient({
        redirectUris: [redirect_uri],
        clientName: 'maven-pre',
        tokenEndpointAuthMethod: 'client_secret_basic',
        grantTypes: ['authorization_code', 'refresh_token'],
        responseTypes: ['code'],
      });
      return Response.json({ client_id: c.clientId, client_secret: c.clientSecret });
    }
    return new Response('not found', { status: 404 });
  },
};

// The provider is made at the first request: its resource is this Worker's own URL (the
// binding RESOURCE, set by cloudflare_peer.mjs).
let provider;

// One line per request to the provider's token and registration endpoints, with its answer's
// status (what the tests read; never a token).
async function event(request, answer) {
  const url = new URL(request.url);
  if (request.method !== 'POST' || !['/token', '/register'].includes(url.pathname)) {
    return answer();
  }
  let what = 'register';
  if (url.pathname === '/token') {
    const form = new URLSearchParams(await request.clone().text());
    const auth = request.headers.get('authorization')?.split(' ')[0] ?? 'none';
    what = form.has('grant_type')
      ? `token grant_type=${form.get('grant_type')} auth=${auth}`
      : `revoke hint=${form.get('token_type_hint') ?? ''} auth=${auth}`;
  }
  const r = await answer();
  console.error(`EVENT ${what} status=${r.status}`);
  return r;
}

export default {
  fetch(request, env, ctx) {
    provider ??= new OAuthProvider({
      apiRoute: '/mcp',
      apiHandler: mcp,
      defaultHandler: pages,
      authorizeEndpoint: '/authorize',
      tokenEndpoint: '/token',
      clientRegistrationEndpoint: '/register',
      accessTokenTTL: 60,
      resourceMetadata: { resource: env.RESOURCE, resource_name: 'maven-cloudflare-peer' },
    });
    return event(request, () => provider.fetch(request, env, ctx));
  },
};
