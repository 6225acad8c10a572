//! The daemon's side of IPC: the socket, the accept loop, the bounds on connections, and one
//! answer per request. Which methods exist is the [`Dispatch`] implementation's business.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::protocol::{
    error_reply, read_line, result_reply, socket_path, RpcError, INVALID_REQUEST, MAX_REQUEST,
    PARSE_ERROR,
};

/// Connections served at once; more wait for a slot.
const MAX_CONNECTIONS: usize = 32;
/// A connection that sends nothing for this long is closed.
const IDLE: Duration = Duration::from_secs(300);

/// A boxed future, so [`Dispatch`] futures can be spawned.
pub(crate) type BoxFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What answers the methods: the daemon implements it.
pub(crate) trait Dispatch: Send + Sync + 'static {
    /// Answers one request: its result, or the JSON-RPC error to send.
    fn dispatch<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, RpcError>>;

    /// The server whose process is `pid` (a direct child of the daemon), for the log of a
    /// refused connection.
    fn child_name(&self, _pid: u32) -> Option<String> {
        None
    }
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
pub(crate) async fn serve<D: Dispatch>(
    listener: UnixListener,
    dispatch: Arc<D>,
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
            // no process that descends from the daemon may speak to it.
            Ok((s, _)) => match super::peer::admit(&s) {
                Ok(()) => s,
                Err(r) => {
                    // An orphan is its own direct child: its group still names the server.
                    let name = |p: Option<u32>| p.and_then(|p| dispatch.child_name(p));
                    let server = name(r.child).or_else(|| name(r.group));
                    tracing::warn!(
                        server = server.as_deref().unwrap_or("(unknown)"),
                        pid = r.pid,
                        child = ?r.child,
                        group = ?r.group,
                        "IPC connection refused: {}",
                        r.reason
                    );
                    continue;
                }
            },
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
        let dispatch = dispatch.clone();
        let cancel = cancel.clone();
        tracker.spawn(async move {
            let _permit = permit;
            if let Err(e) = connection(stream, dispatch, cancel).await {
                tracing::debug!(error = %e, "IPC connection ended");
            }
        });
    }
}

async fn connection<D: Dispatch>(
    stream: UnixStream,
    dispatch: Arc<D>,
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
                    PARSE_ERROR,
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
                PARSE_ERROR,
                &format!("parse error: {e}"),
            )),
            Ok(Value::Array(_)) => Some(error_reply(
                &Value::Null,
                INVALID_REQUEST,
                "batches are not supported: send one request per line",
            )),
            Ok(req) => handle(&*dispatch, req).await,
        };
        if let Some(reply) = reply {
            w.write_all(&reply).await?;
        }
    }
}

async fn handle<D: Dispatch>(dispatch: &D, req: Value) -> Option<Vec<u8>> {
    let id = req.get("id").cloned();
    let Some(method) = req.get("method").and_then(Value::as_str) else {
        return Some(error_reply(
            id.as_ref().unwrap_or(&Value::Null),
            INVALID_REQUEST,
            "invalid request: no method",
        ));
    };
    let params = req.get("params").cloned().unwrap_or(Value::Null);
    tracing::trace!(method, "IPC request");
    let result = dispatch.dispatch(method, params).await;
    // A notification (no id) is never answered.
    let id = id?;
    Some(match result {
        Ok(v) => result_reply(&id, v),
        Err(e) => error_reply(&id, e.code, &e.message),
    })
}
