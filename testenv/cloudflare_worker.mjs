// A Cloudflare Worker for Maven's OAuth tests, the template shape (one origin): Cloudflare's
// workers-oauth-provider as the authorization server (its defaults but what a deployment
// sets: its endpoints, dynamic registration, 60 s access tokens) in front of the MCP
// endpoint at /mcp. Run by cloudflare_peer.mjs.
import { OAuthProvider } from './node_modules/@cloudflare/workers-oauth-provider/dist/oauth-provider.js';
import { event, mcp, pages } from './cloudflare_common.mjs';

// The provider is made at the first request: its resource is this Worker's own URL (the
// binding RESOURCE, set by cloudflare_peer.mjs).
let provider;

export default {
  fetch(request, env, ctx) {
    provider ??= new OAuthProvider({
      apiRoute: '/mcp',
      apiHandler: mcp,
      defaultHandler: {
        async fetch(request, env) {
          return (await pages(request, env.OAUTH_PROVIDER)) ?? new Response('not found', { status: 404 });
        },
      },
      authorizeEndpoint: '/authorize',
      tokenEndpoint: '/token',
      clientRegistrationEndpoint: '/register',
      accessTokenTTL: 60,
      resourceMetadata: { resource: env.RESOURCE, resource_name: 'maven-cloudflare-peer' },
    });
    return event(request, () => provider.fetch(request, env, ctx));
  },
};
