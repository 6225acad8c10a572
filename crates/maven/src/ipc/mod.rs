//! IPC (I-1), the command line's side: [`client`] sends a `wire::Request` to the running
//! daemon and returns the method's view. The daemon's side (the socket, the accept loop, the
//! bounds) is the `daemon` crate's `ipc`.

pub(crate) mod client;
