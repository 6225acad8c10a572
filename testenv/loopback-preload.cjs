// Loaded with `node --require ./loopback-preload.cjs` in front of a test peer.
//
// Forces every TCP listener of the process onto 127.0.0.1, whatever host (or none) the program
// asked for, so a test peer never listens on a public interface. Once a TCP listener is up it
// prints one line on stderr, which the tests wait for to learn the port (PORT=0 picks a free
// one, and the program's own banner would only echo the 0 back):
//
//   MCP_PEER_LISTENING http://127.0.0.1:<port>
//
// Unix-socket and pipe listeners are left alone.
"use strict";

const net = require("node:net");

const LOOPBACK = "127.0.0.1";
const originalListen = net.Server.prototype.listen;

function isPortLike(value) {
  return (
    typeof value === "number" ||
    (typeof value === "string" && /^[0-9]+$/.test(value))
  );
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const first = args[0];
  let forced = null;
  if (first !== null && typeof first === "object" && !Array.isArray(first)) {
    if (first.path === undefined && first.fd === undefined && first._handle === undefined) {
      forced = [{ ...first, host: LOOPBACK, ipv6Only: false }, ...args.slice(1)];
    }
  } else if (isPortLike(first) || first === undefined || typeof first === "function") {
    // listen(), listen(cb), listen(port[, host][, backlog][, cb])
    const port = isPortLike(first) ? Number(first) : 0;
    const rest = isPortLike(first) ? args.slice(1) : args;
    const callback = rest.find((a) => typeof a === "function");
    const backlog = rest.find((a) => typeof a === "number");
    const options = { port, host: LOOPBACK };
    if (backlog !== undefined) options.backlog = backlog;
    forced = callback === undefined ? [options] : [options, callback];
  }
  if (forced === null) {
    return originalListen.apply(this, args);
  }
  this.once("listening", () => {
    const address = this.address();
    if (address !== null && typeof address === "object") {
      process.stderr.write(`MCP_PEER_LISTENING http://${address.address}:${address.port}\n`);
    }
  });
  return originalListen.apply(this, forced);
};
