//! IPC (I-1): line-delimited JSON-RPC 2.0 over a Unix socket in the data directory.
//!
//! The socket is created with mode 0600 inside a 0700 data directory. Requests are bounded in
//! size, connections in number and in idle time. There is deliberately no method that calls a
//! tool or enables one: mutation has exactly one path (a turn with its confirmation) and
//! enabling has exactly one path (the page with step-up).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::daemon::State;

/// The socket's file name inside the data directory.
pub(crate) const SOCKET_NAME: &str = "maven.sock";
/// Largest request line the daemon reads.
const MAX_REQUEST: u64 = 1 << 20;
/// Largest response line the client reads.
const MAX_RESPONSE: u64 = 64 << 20;
/// Connections served at once; more wait for a slot.
const MAX_CONNECTIONS: usize = 32;
/// A connection that sends nothing for this long is closed.
const IDLE: Duration = Duration::from_secs(300);
/// How long the client waits for the daemon's answer.
const CLIENT_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// A JSON-RPC error a method returns.
#[derive(Debug)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
}

impl RpcError {
    pub(crate) fn invalid_params(msg: impl Into<String>) -> Self {
        RpcError {
            code: -32602,
            message: msg.into(),
        }
    }
    pub(crate) fn internal(msg: impl Into<String>) -> Self {
        RpcError {
            code: -32603,
            message: msg.into(),
        }
    }
    pub(crate) fn no_method(method: &str) -> Self {
        RpcError {
            code: -32601,
            message: format!("no such method: {method}"),
        }
    }
}

/// The socket path of a data directory.
pub(crate) fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET_NAME)
}

/// Binds the socket. The caller holds the data directory's lock, so a socket file already
/// there was left by a daemon that died: it is removed.
pub(crate) fn bind(data_dir: &Path) -> anyhow::Result<UnixListener> {
    use anyhow::Context;
    let path = socket_path(data_dir);
    if path.as_os_str().len() >= 100 {
        anyhow::bail!(
            "the socket path {} is too long for a Unix socket (at most 100 bytes); use a shorter --data",
            path.display()
        );
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {
            tracing::info!(socket = %path.display(), "removed a stale socket left by a daemon that stopped without cleaning up")
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(e).with_context(|| format!("cannot remove stale socket {}", path.display()))
        }
    }
    let listener = UnixListener::bind(&path)
        .with_context(|| format!("cannot listen on {}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("cannot set mode 0600 on {}", path.display()))?;
    Ok(listener)
}

/// Accepts connections until `cancel` fires.
pub(crate) async fn serve(
    listener: UnixListener,
    state: Arc<State>,
    cancel: CancellationToken,
    tracker: TaskTracker,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            _ = cancel.cancelled() => break,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                tracing::warn!(error = %e, "IPC accept failed");
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => continue,
                }
            }
        };
        let permit = tokio::select! {
            _ = cancel.cancelled() => break,
            p = slots.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
        };
        let state = state.clone();
        let cancel = cancel.clone();
        tracker.spawn(async move {
            let _permit = permit;
            if let Err(e) = connection(stream, state, cancel).await {
                tracing::debug!(error = %e, "IPC connection ended");
            }
        });
    }
}

/// Reads one line of at most `max` bytes (newline excluded). `Ok(None)` at end of stream.
///
/// The bound is enforced by the reader (`take`), so an endless line is never assembled.
/// Not cancel safe: a dropped call loses a partly read line; callers drop the connection then.
async fn read_line<R: AsyncRead + Unpin>(
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

async fn connection(
    stream: UnixStream,
    state: Arc<State>,
    cancel: CancellationToken,
) -> std::io::Result<()> {
    let (r, mut w) = stream.into_split();
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        let line = tokio::select! {
            _ = cancel.cancelled() => return Ok(()),
            l = tokio::time::timeout(IDLE, read_line(&mut r, MAX_REQUEST, &mut buf)) => l,
        };
        match line {
            Err(_) => return Ok(()),
            Ok(Err(e)) => {
                let reply = error_reply(
                    &Value::Null,
                    -32700,
                    &format!("request too large or unreadable: {e}"),
                );
                w.write_all(&reply).await?;
                return Ok(());
            }
            Ok(Ok(None)) => return Ok(()),
            Ok(Ok(Some(()))) => {}
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let reply = match serde_json::from_slice::<Value>(&buf) {
            Err(e) => Some(error_reply(
                &Value::Null,
                -32700,
                &format!("parse error: {e}"),
            )),
            Ok(Value::Array(_)) => Some(error_reply(
                &Value::Null,
                -32600,
                "batches are not supported: send one request per line",
            )),
            Ok(req) => handle(&state, req).await,
        };
        if let Some(reply) = reply {
            w.write_all(&reply).await?;
        }
    }
}

async fn handle(state: &State, req: Value) -> Option<Vec<u8>> {
    let id = req.get("id").cloned();
    let Some(method) = req.get("method").and_then(Value::as_str) else {
        return Some(error_reply(
            id.as_ref().unwrap_or(&Value::Null),
            -32600,
            "invalid request: no method",
        ));
    };
    let params = req.get("params").cloned().unwrap_or(Value::Null);
    let result = state.dispatch(method, params).await;
    // A notification (no id) is never answered.
    let id = id?;
    Some(match result {
        Ok(v) => line(&json!({"jsonrpc": "2.0", "id": id, "result": v})),
        Err(e) => error_reply(&id, e.code, &e.message),
    })
}

fn error_reply(id: &Value, code: i64, message: &str) -> Vec<u8> {
    line(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn line(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(v).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}

/// What went wrong talking to the daemon.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IpcError {
    #[error("no maven daemon is running for {data_dir} ({reason}); start one with `maven daemon`")]
    NoDaemon { data_dir: String, reason: String },
    #[error("lost the connection to the daemon: {0}")]
    Io(#[from] std::io::Error),
    #[error("the daemon did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the daemon sent an answer that is not JSON-RPC: {0}")]
    Protocol(String),
    #[error("{message}")]
    Remote { code: i64, message: String },
}

impl IpcError {
    /// The process exit code for this error (I-4).
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            IpcError::NoDaemon { .. } => crate::exit::EXIT_USAGE,
            IpcError::Remote { code: -32602, .. } => crate::exit::EXIT_USAGE,
            _ => crate::exit::EXIT_FAILED,
        }
    }
}

/// Sends one request to the daemon of `data_dir` and returns its result.
pub(crate) async fn call(data_dir: &Path, method: &str, params: Value) -> Result<Value, IpcError> {
    let path = socket_path(data_dir);
    let no_daemon = |reason: String| IpcError::NoDaemon {
        data_dir: data_dir.display().to_string(),
        reason,
    };
    let stream = match UnixStream::connect(&path).await {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(no_daemon(format!("no socket at {}", path.display())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(no_daemon(format!(
                "nothing listens on {}: a stale socket",
                path.display()
            )))
        }
        Err(e) => return Err(no_daemon(format!("{}: {e}", path.display()))),
    };
    let (r, mut w) = stream.into_split();
    let req = line(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    w.write_all(&req).await?;
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    let got = tokio::time::timeout(CLIENT_DEADLINE, read_line(&mut r, MAX_RESPONSE, &mut buf))
        .await
        .map_err(|_| IpcError::Timeout(CLIENT_DEADLINE))??;
    if got.is_none() {
        return Err(IpcError::Protocol(
            "the daemon closed the connection".into(),
        ));
    }
    let mut reply: Value =
        serde_json::from_slice(&buf).map_err(|e| IpcError::Protocol(e.to_string()))?;
    if reply.get("id") != Some(&json!(1)) {
        return Err(IpcError::Protocol("answer with another id".into()));
    }
    if let Some(err) = reply.get("error") {
        return Err(IpcError::Remote {
            code: err.get("code").and_then(Value::as_i64).unwrap_or(-32603),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown error")
                .to_string(),
        });
    }
    match reply.get_mut("result") {
        Some(v) => Ok(v.take()),
        None => Err(IpcError::Protocol("answer without result or error".into())),
    }
}
