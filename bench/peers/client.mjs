// TypeScript SDK (@modelcontextprotocol/sdk) client for bench/run: the same measurements as
// `mcp-bench stdio|http`.
//
//   node client.mjs stdio [--seq N --warmup N --calls N --inflight 1,8,64] -- CMD ARGS...
//   node client.mjs http --url URL [...]
//
// Prints one JSON object per measurement. k calls in flight are k async loops sharing one Client.
// Resolved from testenv/node_modules (NODE_PATH is not used by ESM, so bench/run passes the path).
import { performance } from "node:perf_hooks";

const sdkRoot = process.env.MCP_SDK_ROOT;
if (!sdkRoot) {
  console.error("client.mjs: MCP_SDK_ROOT must point at testenv/node_modules/@modelcontextprotocol/sdk");
  process.exit(2);
}
const { Client } = await import(`${sdkRoot}/dist/esm/client/index.js`);
const { StdioClientTransport } = await import(`${sdkRoot}/dist/esm/client/stdio.js`);
const { StreamableHTTPClientTransport } = await import(`${sdkRoot}/dist/esm/client/streamableHttp.js`);

const argv = process.argv.slice(2);
const transport = argv.shift();
const o = { seq: 2000, warmup: 200, calls: 5000, inflight: [1, 8, 64], url: "", cmd: [] };
while (argv.length) {
  const a = argv.shift();
  if (a === "--") { o.cmd = argv.splice(0); break; }
  const v = argv.shift();
  if (a === "--inflight") o.inflight = v.split(",").filter(Boolean).map(Number);
  else if (a === "--url") o.url = v;
  else o[a.replace(/^--/, "")] = Number(v);
}

const client = new Client({ name: "bench", version: "1.0.0" });
const t = transport === "stdio"
  ? new StdioClientTransport({ command: o.cmd[0], args: o.cmd.slice(1), stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(o.url));
await client.connect(t);
const call = () => client.callTool({ name: "echo", arguments: { text: "hi" } });
for (let i = 0; i < o.warmup; i++) await call();
const lat = [];
for (let i = 0; i < o.seq; i++) {
  const s = performance.now();
  await call();
  lat.push(performance.now() - s);
}
lat.sort((a, b) => a - b);
const pct = (q) => lat[Math.min(Math.floor(lat.length * q / 100), lat.length - 1)] * 1000;
console.log(JSON.stringify({ peer: "typescript", transport, kind: "seq", n: o.seq, p50_us: pct(50), p99_us: pct(99) }));
for (const k of o.inflight) {
  let left = o.calls;
  const worker = async () => { while (left > 0) { left--; await call(); } };
  const s = performance.now();
  await Promise.all(Array.from({ length: k }, worker));
  const secs = (performance.now() - s) / 1000;
  console.log(JSON.stringify({ peer: "typescript", transport, kind: "inflight", k, n: o.calls, secs, calls_per_s: o.calls / secs }));
}
await client.close();
