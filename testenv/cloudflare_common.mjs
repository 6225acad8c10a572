// Shared by Maven's Cloudflare test Workers (cloudflare_worker.mjs, one origin;
// cloudflare_as_worker.mjs and cloudflare_rs_worker.mjs, the split shape): the small MCP
// endpoint, the owner's consent answered at once, and the event lines the tests read.

const tool = {
  name: 'whoami',
  description: 'Say who the token belongs to. Reads only.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
};

// The MCP endpoint (JSON answers, no session), reached only with a valid access token.
export const mcp = {
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

// The authorization page (consent answered at once for the account `owner`) and the set-up
// of the pre-registered confidential client, through the provider's helpers `api`; `null`
// for any other request.
export async function pages(request, api) {
  const url = new URL(request.url);
  if (url.pathname === '/authorize') {
    const req = await api.parseAuthRequest(request);
    const { redirectTo } = await api.completeAuthorization({
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
    const c = await api.createClient({
      redirectUris: [redirect_uri],
      clientName: 'maven-pre',
      tokenEndpointAuthMethod: 'client_secret_basic',
      grantTypes: ['authorization_code', 'refresh_token'],
      responseTypes: ['code'],
    });
    return Response.json({ client_id: c.clientId, client_secret: c.clientSecret });
  }
  return null;
}

// One line per request to the provider's token and registration endpoints, with its answer's
// status (what the tests read; never a token).
export async function event(request, answer) {
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
