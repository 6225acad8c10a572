// The split shape's authorization server (its own origin): Cloudflare's
// OAuthAuthorizationServer (dynamic registration, 60 s access tokens) for the one resource
// served by cloudflare_rs_worker.mjs, which validates its tokens here over a Service Binding.
// Run by cloudflare_peer.mjs with `split`.
import { WorkerEntrypoint } from 'cloudflare:workers';
import { OAuthAuthorizationServer } from './node_modules/@cloudflare/workers-oauth-provider/dist/oauth-provider.js';
import { event, pages } from './cloudflare_common.mjs';

let server;
function authorizationServer(env) {
  server ??= new OAuthAuthorizationServer({
    issuer: env.ISSUER,
    resources: [env.RESOURCE],
    tokenEndpoint: '/token',
    clientRegistrationEndpoint: '/register',
    accessTokenTTL: 60,
  });
  return server;
}

export default class AuthServer extends WorkerEntrypoint {
  async fetch(request) {
    const as = authorizationServer(this.env);
    const page = await pages(request, as.getOAuthApi(this.env));
    return page ?? event(request, () => as.fetch(request, this.env, this.ctx));
  }

  validateToken(resource, token) {
    return authorizationServer(this.env).validateToken(resource, token, this.env);
  }
}
