// A small MCP server on the official TypeScript SDK 2.x (`@modelcontextprotocol/server`), a real
// modern-era (2026-07-28) peer for Maven's client tests. The same two tools as python_server.py:
// `lookup_word` (read-only, one required string) and `delete_note` (destructive; it only
// pretends). Runs over stdio, or over Streamable HTTP on 127.0.0.1:
//
//   node ts_server.mjs stdio [legacy]        serveStdio; `legacy` also serves the 2025 handshake
//                                            (default: modern only, `legacy: 'reject'`)
//   node ts_server.mjs http [PORT] [legacy]  createMcpHandler behind node:http; PORT 0 or absent:
//                                            a free port
//
// In HTTP mode it prints one line on stderr once listening:
//
//   MCP_PEER_LISTENING http://127.0.0.1:<port>/mcp
import http from "node:http";
import { Readable } from "node:stream";

import { McpServer, createMcpHandler, fromJsonSchema } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

const WORDS = {
  maven: "one who is expert in a particular field",
  peer: "a participant on equal footing",
};

function factory() {
  const server = new McpServer(
    { name: "maven-ts-peer", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.registerTool(
    "lookup_word",
    {
      description: "Look a word up in a small built-in dictionary. Reads only.",
      inputSchema: fromJsonSchema({
        type: "object",
        properties: { word: { type: "string" } },
        required: ["word"],
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async ({ word }) => ({
      content: [{ type: "text", text: WORDS[String(word).toLowerCase()] ?? `no entry for '${word}'` }],
    }),
  );
  server.registerTool(
    "delete_note",
    {
      description: "Delete a note by id (pretends to; nothing is stored).",
      inputSchema: fromJsonSchema({
        type: "object",
        properties: { note_id: { type: "string" } },
        required: ["note_id"],
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    },
    async ({ note_id }) => ({ content: [{ type: "text", text: `note ${note_id} deleted` }] }),
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
  const body = chunks.length && req.method !== "GET" && req.method !== "HEAD" ? Buffer.concat(chunks) : undefined;
  const controller = new AbortController();
  req.on("close", () => controller.abort());
  return new Request(`http://127.0.0.1:${port}${req.url}`, {
    method: req.method,
    headers,
    body,
    signal: controller.signal,
  });
}

async function serveHttp(port, legacy) {
  const handler = createMcpHandler(factory, { legacy: legacy ? "stateless" : "reject" });
  const server = http.createServer(async (req, res) => {
    try {
      if (!req.url.startsWith("/mcp")) {
        res.writeHead(404).end();
        return;
      }
      const response = await handler.fetch(await toWebRequest(req, server.address().port));
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (response.body) {
        Readable.fromWeb(response.body).on("error", () => res.destroy()).pipe(res);
      } else {
        res.end();
      }
    } catch (e) {
      process.stderr.write(`ts_server: ${e}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(port, "127.0.0.1", () => {
    process.stderr.write(`MCP_PEER_LISTENING http://127.0.0.1:${server.address().port}/mcp\n`);
  });
}

const [mode = "stdio", ...rest] = process.argv.slice(2);
const legacy = rest.includes("legacy");
if (mode === "stdio") {
  serveStdio(factory, { legacy: legacy ? "serve" : "reject" });
} else if (mode === "http") {
  const port = Number(rest.find((a) => /^[0-9]+$/.test(a)) ?? 0);
  serveHttp(port, legacy);
} else {
  process.stderr.write("usage: ts_server.mjs stdio [legacy] | http [PORT] [legacy]\n");
  process.exit(2);
}
