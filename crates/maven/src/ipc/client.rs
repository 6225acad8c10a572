//! The command line's side of IPC: one typed request, its typed reply, with a deadline.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::line::read_line;
use crate::exit::{EXIT_FAILED, EXIT_USAGE};
use wire::protocol::{request, socket_path, BUSY, INTERNAL_ERROR, INVALID_PARAMS, MAX_RESPONSE};
use wire::{Method, Reply, Request};

/// How long the client waits for the daemon's answer.
const CLIENT_DEADLINE: Duration = Duration::from_secs(15 * 60);

/// What went wrong talking to the daemon.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IpcError {
    #[error("no maven daemon is running for {data_dir} ({reason}); start one with `maven daemon`")]
    NoDaemon { data_dir: String, reason: String },
    #[error("the maven daemon for {data_dir} is running but busy ({reason}); try again in a few seconds")]
    Busy { data_dir: String, reason: String },
    #[error("lost the connection to the daemon: {0}")]
    Io(#[from] std::io::Error),
    #[error("the daemon did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the daemon sent an answer that is not JSON-RPC: {0}")]
    Protocol(String),
    #[error("{message}")]
    Remote { code: i64, message: String },
    #[error("the daemon's answer to {method} is of another shape: {reason}")]
    Shape { method: Method, reason: String },
}

impl IpcError {
    /// The process exit code for this error (I-4).
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            IpcError::NoDaemon { .. } => EXIT_USAGE,
            IpcError::Remote {
                code: INVALID_PARAMS,
                ..
            } => EXIT_USAGE,
            _ => EXIT_FAILED,
        }
    }
}

/// Connects to the socket; a full backlog (`EAGAIN`) is tried again for up to two seconds.
async fn connect(path: &Path) -> std::io::Result<UnixStream> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    loop {
        match UnixStream::connect(path).await {
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            r => return r,
        }
    }
}

/// Sends one request to the daemon of `data_dir` and reads its reply back as the reply of
/// that method.
pub(crate) async fn send(data_dir: &Path, req: &Request) -> Result<Reply, IpcError> {
    let method = req.method();
    let v = call(data_dir, method.name(), req.params()).await?;
    Reply::parse(method, v).map_err(|e| IpcError::Shape {
        method,
        reason: e.to_string(),
    })
}

/// [`send`], and the view of the method's reply: `T` is the view `req`'s method answers with.
pub(crate) async fn ask<T: TryFrom<Reply, Error = Reply>>(
    data_dir: &Path,
    req: &Request,
) -> Result<T, IpcError> {
    let method = req.method();
    T::try_from(send(data_dir, req).await?).map_err(|other| IpcError::Shape {
        method,
        reason: format!("a reply to {}", other.method()),
    })
}

async fn call(data_dir: &Path, method: &str, params: Value) -> Result<Value, IpcError> {
    let path = socket_path(data_dir);
    let no_daemon = |reason: String| IpcError::NoDaemon {
        data_dir: data_dir.display().to_string(),
        reason,
    };
    let busy = |reason: String| IpcError::Busy {
        data_dir: data_dir.display().to_string(),
        reason,
    };
    let stream = match connect(&path).await {
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
        // A full listen backlog: a daemon listens there but has not accepted yet.
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
            return Err(busy(format!(
                "{} accepts no connection: its backlog is full",
                path.display()
            )))
        }
        Err(e) => return Err(no_daemon(format!("{}: {e}", path.display()))),
    };
    let (r, mut w) = stream.into_split();
    let req = request(1, method, params);
    // A daemon whose slots are all taken answers "busy" without reading and closes: the
    // write may then fail, and the answer is still there to read.
    let written = w.write_all(&req).await;
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    let got = tokio::time::timeout(CLIENT_DEADLINE, read_line(&mut r, MAX_RESPONSE, &mut buf))
        .await
        .map_err(|_| IpcError::Timeout(CLIENT_DEADLINE))?;
    if let Ok(Some(())) = &got {
        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
            if v.pointer("/error/code").and_then(Value::as_i64) == Some(BUSY) {
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("every connection slot is in use");
                return Err(busy(message.to_owned()));
            }
        }
    }
    written?;
    let got = got?;
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
            code: err
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or(INTERNAL_ERROR),
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
