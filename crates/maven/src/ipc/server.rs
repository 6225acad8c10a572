//! The daemon's side of IPC: the socket, the door through `gate::serve` (the accept loop), the
//! bounds on connections, and one answer per request. Which methods exist is the [`Dispatch`]
//! implementation's business.
//!
//! The socket is made 0600 (so no other uid reaches it), and the gate refuses every process
//! the daemon started and every descendant of one before a byte is read. At most `MAX_CONNECTIONS` (128) connections are served at once; one
//! beyond them is answered with one `-32001` "busy" line and closed, so the backlog never fills.
//! A connection has 5 s for its first complete line and 30 s between later ones; each line is
//! one bounded JSON value (`wire::protocol`) and gets exactly one answer.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use super::line::read_line;
use wire::protocol::{
    error_reply, result_reply, socket_path, RpcError, BUSY, INVALID_REQUEST, MAX_REQUEST,
    PARSE_ERROR,
};

/// Connections served at once. One CLI uses one connection per command, so this is far more
/// than one user needs; a connection beyond it gets a "busy" answer at once and is closed, so
/// the listen backlog never fills.
pub(crate) const MAX_CONNECTIONS: usize = 128;
/// The first complete request line must arrive within this after the connection is accepted
/// (the command line sends it at once).
pub(crate) const FIRST_LINE: Duration = Duration::from_secs(5);
/// IPC connections open now, and refused since start-up (for `maven status`).
static OPEN: AtomicUsize = AtomicUsize::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

/// Connections open now and connections refused since start-up.
pub(crate) fn stats() -> (usize, u64) {
    (
        OPEN.load(Ordering::Relaxed),
        REFUSED.load(Ordering::Relaxed),
    )
}

/// After a stop, a request under way (an act, say) runs on to its end for this long: as long
/// as the daemon waits for its tasks.
const STOPPING: Duration = Duration::from_secs(10);

/// After an answer, a connection that starts no complete line within this is closed.
const IDLE: Duration = Duration::from_secs(30);

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

/// Serves connections until `cancel` fires (through `gate::serve`: a descendant of the daemon
/// is refused before a byte is read, X-3).
pub(crate) async fn serve<D: Dispatch>(
    listener: UnixListener,
    dispatch: Arc<D>,
    cancel: CancellationToken,
) {
    let named = dispatch.clone();
    let door = gate::Gate::open("IPC")
        .no_descendants()
        .on_refusal(move |_, why| refused(&*named, why));
    let slots = gate::Slots::new(MAX_CONNECTIONS)
        .when_full(|stream, _| {
            let refused = REFUSED.fetch_add(1, Ordering::Relaxed) + 1;
            busy(stream, refused);
        })
        .grace(STOPPING);
    let served = cancel.clone();
    let handler = move |stream: UnixStream, admitted: gate::Admitted| {
        let dispatch = dispatch.clone();
        let cancel = served.clone();
        OPEN.fetch_add(1, Ordering::Relaxed);
        async move {
            let _slot = admitted.slot;
            if let Err(e) = connection(stream, dispatch, cancel).await {
                tracing::debug!(error = %e, "IPC connection ended");
            }
            OPEN.fetch_sub(1, Ordering::Relaxed);
        }
    };
    gate::serve(listener, door, slots, handler, cancel).await;
}

/// Logs a peer the gate refused, naming the server it descends from when known.
fn refused<D: Dispatch>(dispatch: &D, why: &gate::Refusal) {
    let gate::Refusal::Descendant(r) = why else {
        tracing::warn!("IPC connection refused: {why}");
        return;
    };
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
}

/// Answers a connection beyond [`MAX_CONNECTIONS`] with one "busy" line (without waiting: a
/// peer that does not read loses it) and closes it.
fn busy(stream: UnixStream, refused: u64) {
    let reply = error_reply(
        &serde_json::Value::Null,
        BUSY,
        &format!("all {MAX_CONNECTIONS} IPC connections are in use"),
    );
    let _ = stream.try_write(&reply);
    // The first refusal and every hundredth: a flood does not flood the log.
    if refused % 100 == 1 {
        tracing::warn!(
            max = MAX_CONNECTIONS,
            refused,
            "IPC connection refused: every connection slot is in use"
        );
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
    let mut deadline = FIRST_LINE;
    loop {
        let line = tokio::select! {
            _ = cancel.cancelled() => return Ok(()),
            l = tokio::time::timeout(deadline, read_line(&mut r, MAX_REQUEST, &mut buf)) => l,
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
        deadline = IDLE;
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
