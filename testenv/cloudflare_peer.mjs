// Runs cloudflare_worker.mjs under workerd through Miniflare (offline, in-memory KV) on
// 127.0.0.1, creates the pre-registered confidential client for REDIRECT_URI, and prints on
// stderr:
//   CLOUDFLARE_CLIENT <client_id> <client_secret>
//   CLOUDFLARE_PEER_LISTENING http://127.0.0.1:<port>/mcp
//
//   node cloudflare_peer.mjs REDIRECT_URI
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { Miniflare } from 'miniflare';

const here = path.dirname(fileURLToPath(import.meta.url));
const redirectUri = process.argv[2];
// A free loopback port, so the Worker knows its own URL (its resource) before it starts.
const port = await new Promise((resolve, reject) => {
  const s = net.createServer();
  s.on('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const mf = new Miniflare({
  modulesRoot: here,
  modules: [
    { type: 'ESModule', path: path.join(here, 'cloudflare_worker.mjs') },
    { type: 'ESModule', path: path.join(here, 'node_modules/@cloudflare/workers-oauth-provider/dist/oauth-provider.js') },
  ],
  compatibilityDate: '2025-09-01',
  kvNamespaces: ['OAUTH_KV'],
  bindings: { RESOURCE: `http://127.0.0.1:${port}/mcp` },
  host: '127.0.0.1',
  port,
});
const url = await mf.ready;
const base = url.origin;
const r = await fetch(`${base}/setup/client`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ redirect_uri: redirectUri }),
});
const c = await r.json();
console.error(`CLOUDFLARE_CLIENT ${c.client_id} ${c.client_secret}`);
console.error(`CLOUDFLARE_PEER_LISTENING ${base}/mcp`);
const stop = async () => {
  await mf.dispose();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
