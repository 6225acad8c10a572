//! The wire of IPC: where the socket is, how a message is framed (one JSON value per line,
//! bounded in size) and the JSON-RPC 2.0 objects. A leaf: it names nothing of the crate.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// The socket's file name inside the data directory.
pub(crate) const SOCKET_NAME: &str = "maven.sock";
/// Largest request line the daemon reads.
pub(crate) const MAX_REQUEST: u64 = 1 << 20;
/// Largest response line the client reads.
pub(crate) const MAX_RESPONSE: u64 = 64 << 20;

/// JSON-RPC: the request line is not JSON (or could not be read).
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC: the parameters are wrong (a usage error for the command line).
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC: the method failed.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// Every connection slot of the daemon is taken: the command line says "busy", not "not
/// running" (a server error code of the JSON-RPC reserved range).
pub(crate) const BUSY: i64 = -32001;

/// A JSON-RPC error a method returns.
#[derive(Debug)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
}

impl RpcError {
    pub(crate) fn invalid_params(msg: impl Into<String>) -> Self {
        RpcError {
            code: INVALID_PARAMS,
            message: msg.into(),
        }
    }
    pub(crate) fn internal(msg: impl Into<String>) -> Self {
        RpcError {
            code: INTERNAL_ERROR,
            message: msg.into(),
        }
    }
    pub(crate) fn no_method(method: &str) -> Self {
        RpcError {
            code: METHOD_NOT_FOUND,
            message: format!("no such method: {method}"),
        }
    }
}

/// The socket path of a data directory.
pub(crate) fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET_NAME)
}

/// Reads one line of at most `max` bytes (newline excluded). `Ok(None)` at end of stream.
///
/// The bound is enforced by the reader (`take`), so an endless line is never assembled.
/// Not cancel safe: a dropped call loses a partly read line; callers drop the connection then.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(
    r: &mut BufReader<R>,
    max: u64,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<()>> {
    buf.clear();
    let n = r.take(max + 1).read_until(b'\n', buf).await?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if buf.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("line longer than {max} bytes"),
        ));
    }
    Ok(Some(()))
}

/// One request line: `{"jsonrpc": "2.0", "id", "method", "params"}`.
pub(crate) fn request(id: i64, method: &str, params: Value) -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// One answer line carrying a method's result.
pub(crate) fn result_reply(id: &Value, result: Value) -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

pub(crate) fn error_reply(id: &Value, code: i64, message: &str) -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

pub(crate) fn line(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(v).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}
