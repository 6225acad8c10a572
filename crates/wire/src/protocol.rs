//! The wire of IPC: where the socket is, how a message is framed (one JSON value per line,
//! bounded in size) and the JSON-RPC 2.0 objects. A leaf: it names nothing of the crate.
//! Reading a bounded line from a socket is the daemon's and the client's (`maven`'s `ipc`).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// The socket's file name inside the data directory.
pub const SOCKET_NAME: &str = "maven.sock";
/// Largest request line the daemon reads.
pub const MAX_REQUEST: u64 = 1 << 20;
/// Largest response line the client reads.
pub const MAX_RESPONSE: u64 = 64 << 20;

/// JSON-RPC: the request line is not JSON (or could not be read).
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the parameters are wrong (a usage error for the command line).
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the method failed.
pub const INTERNAL_ERROR: i64 = -32603;
/// Every connection slot of the daemon is taken: the command line says "busy", not "not
/// running" (a server error code of the JSON-RPC reserved range).
pub const BUSY: i64 = -32001;

/// A JSON-RPC error a method returns.
#[derive(Debug)]
pub struct RpcError {
    /// The JSON-RPC error code ([`INVALID_PARAMS`], [`METHOD_NOT_FOUND`], …).
    pub code: i64,
    /// What went wrong, in words.
    pub message: String,
}

impl RpcError {
    /// A parameter is missing or of the wrong kind (a usage error for the command line).
    pub fn invalid_params(msg: impl Into<String>) -> Self {
        RpcError {
            code: INVALID_PARAMS,
            message: msg.into(),
        }
    }
    /// The method failed.
    pub fn internal(msg: impl Into<String>) -> Self {
        RpcError {
            code: INTERNAL_ERROR,
            message: msg.into(),
        }
    }
    /// No method of that name.
    pub fn no_method(method: &str) -> Self {
        RpcError {
            code: METHOD_NOT_FOUND,
            message: format!("no such method: {method}"),
        }
    }
}

/// The socket path of a data directory.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET_NAME)
}

/// One request line: `{"jsonrpc": "2.0", "id", "method", "params"}`.
pub fn request(id: i64, method: &str, params: Value) -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// One answer line carrying a method's result.
pub fn result_reply(id: &Value, result: Value) -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// One answer line carrying an error.
pub fn error_reply(id: &Value, code: i64, message: &str) -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// A JSON value as one line (its newline included).
pub fn line(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(v).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}
