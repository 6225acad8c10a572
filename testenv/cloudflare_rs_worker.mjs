// The split shape's resource server (its own origin): Cloudflare's OAuthResourceServer with
// the MCP endpoint at /mcp, its tokens validated by the authorization server Worker over the
// Service Binding AUTH_SERVER. Run by cloudflare_peer.mjs with `split`.
import { OAuthResourceServer } from './node_modules/@cloudflare/workers-oauth-provider/dist/oauth-provider.js';
import { mcp } from './cloudflare_common.mjs';

let server;

export default {
  fetch(request, env, ctx) {
    server ??= new OAuthResourceServer({
      resourceMetadata: {
        resource: env.RESOURCE,
        authorization_servers: [env.ISSUER],
        resource_name: 'maven-cloudflare-peer',
      },
      handler: mcp,
      validateToken: (env) => env.AUTH_SERVER.validateToken,
    });
    return server.fetch(request, env, ctx);
  },
};
