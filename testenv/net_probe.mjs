// A real Node MCP server behind Maven's proxy: before serving ts_server.mjs over stdio, it
// fetches each URL of its arguments with Node's own fetch, which takes the proxy from the
// environment when NODE_USE_ENV_PROXY=1 (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), and prints one
// line on stderr:
//
//   NETPROBE {"fetch URL": "STATUS BODY" | "error CODE: WHY", ...}
//
//   node net_probe.mjs URL...
const short = (t) => t.split(/\s+/).join(" ").trim().slice(0, 160);
const results = {};
for (const url of process.argv.slice(2)) {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(10000) });
    results[`fetch ${url}`] = `${r.status} ${short(await r.text())}`;
  } catch (e) {
    const cause = e.cause ?? {};
    results[`fetch ${url}`] = `error ${cause.code ?? e.name}: ${short(String(cause.message ?? e.message))}`;
  }
}
process.stderr.write(`NETPROBE ${JSON.stringify(results)}\n`);
process.argv = [process.argv[0], new URL("./ts_server.mjs", import.meta.url).pathname, "stdio", "legacy"];
await import("./ts_server.mjs");
