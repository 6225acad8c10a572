// Runs Maven's Cloudflare test Workers under workerd through Miniflare (offline, in-memory
// KV) on 127.0.0.1: cloudflare_worker.mjs (the template shape, one origin), or with `split`
// cloudflare_as_worker.mjs and cloudflare_rs_worker.mjs on two ports (the authorization
// server and the resource server). Creates the pre-registered confidential client for
// REDIRECT_URI and prints on stderr:
//   CLOUDFLARE_CLIENT <client_id> <client_secret>
//   CLOUDFLARE_ISSUER <the authorization server>
//   CLOUDFLARE_PEER_LISTENING <the MCP endpoint's URL>
//
//   node cloudflare_peer.mjs REDIRECT_URI [split]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { Miniflare } from 'miniflare';

const here = path.dirname(fileURLToPath(import.meta.url));
const redirectUri = process.argv[2];
const split = process.argv[3] === 'split';
// Free loopback ports, so each Worker knows its own URL (the resource, the issuer) before
// it starts.
const freePort = () =>
  new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
const module = (file) => ({ type: 'ESModule', path: path.join(here, file) });
const provider = module('node_modules/@cloudflare/workers-oauth-provider/dist/oauth-provider.js');
const port = await freePort();
let mf;
let resource;
if (split) {
  const rsPort = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  resource = `http://127.0.0.1:${rsPort}/mcp`;
  const bindings = { ISSUER: issuer, RESOURCE: resource };
  mf = new Miniflare({
    host: '127.0.0.1',
    port,
    workers: [
      {
        name: 'as',
        modulesRoot: here,
        modules: [module('cloudflare_as_worker.mjs'), module('cloudflare_common.mjs'), provider],
        compatibilityDate: '2025-09-01',
        kvNamespaces: ['OAUTH_KV'],
        bindings,
      },
      {
        name: 'rs',
        modulesRoot: here,
        modules: [module('cloudflare_rs_worker.mjs'), module('cloudflare_common.mjs'), provider],
        compatibilityDate: '2025-09-01',
        bindings,
        serviceBindings: { AUTH_SERVER: 'as' },
        unsafeDirectSockets: [{ host: '127.0.0.1', port: rsPort }],
      },
    ],
  });
} else {
  resource = `http://127.0.0.1:${port}/mcp`;
  mf = new Miniflare({
    modulesRoot: here,
    modules: [module('cloudflare_worker.mjs'), module('cloudflare_common.mjs'), provider],
    compatibilityDate: '2025-09-01',
    kvNamespaces: ['OAUTH_KV'],
    bindings: { RESOURCE: resource },
    host: '127.0.0.1',
    port,
  });
}
const url = await mf.ready;
const base = url.origin;
const r = await fetch(`${base}/setup/client`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ redirect_uri: redirectUri }),
});
const c = await r.json();
console.error(`CLOUDFLARE_CLIENT ${c.client_id} ${c.client_secret}`);
console.error(`CLOUDFLARE_ISSUER ${base}`);
console.error(`CLOUDFLARE_PEER_LISTENING ${resource}`);
const stop = async () => {
  await mf.dispose();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
