//! IPC (I-1): line-delimited JSON-RPC 2.0 over a Unix socket in the data directory.
//!
//! The socket is created with mode 0600 inside a 0700 data directory. Requests are bounded in
//! size, connections in number and in idle time. There is deliberately no method that calls a
//! tool or enables one: mutation has exactly one path (a turn with its confirmation) and
//! enabling has exactly one path (the page with step-up).
//!
//! The vocabulary is the `wire` crate: the socket's place, the framing, the error object
//! (`wire::protocol`) and every method typed (`wire::methods`), which the daemon answers and
//! the command line sends. [`line`] reads one bounded line from a socket (a leaf).
//! [`server`] accepts connections and hands each request to a [`server::Dispatch`]; it knows
//! no method. The accept loop is `gate::serve`, whose gate refuses a peer that descends from
//! the daemon. [`client`] is the command line's side.

pub(crate) mod client;
pub(crate) mod line;
pub(crate) mod server;
