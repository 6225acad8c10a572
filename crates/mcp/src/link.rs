//! The transports behind a [`Client`](crate::Client): one variant per transport, each in a
//! module of its own (`stdio.rs`, `http.rs`). Every decision the client makes that depends on
//! the transport is a method here, so the client never matches on a transport and a new one
//! is a variant here plus its module.

use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::http::{HttpLink, Mirror};
use crate::rpc::{self, Core};
use crate::stdio::{StdioLink, StdioSender};
use crate::{ClientOptions, Transport};

/// The connection to one server.
pub(crate) enum Link {
    Stdio(StdioLink),
    Http(Arc<HttpLink>),
}

impl Link {
    /// Starts the server (stdio) or prepares its endpoint (HTTP).
    pub(crate) async fn dial(
        transport: &Transport,
        options: &ClientOptions,
        core: Arc<Core>,
    ) -> Result<Link, Error> {
        Ok(match transport {
            Transport::Stdio { command, args, env } => {
                Link::Stdio(StdioLink::spawn(command, args, env, &options.limits, core).await?)
            }
            Transport::Http { url, headers, door } => {
                Link::Http(Arc::new(HttpLink::new(url, headers, door, options)?))
            }
        })
    }

    /// Whether each request is an exchange of its own (HTTP): dropping it cancels the request,
    /// and in the modern era its metadata is mirrored into headers.
    pub(crate) fn exchange_per_request(&self) -> bool {
        matches!(self, Link::Http(_))
    }

    /// The request of the server's authorization flow waiting for its answer now, as the
    /// error that names it (see [`oauth::OAuth::stalled`]).
    pub(crate) fn oauth_stalled(&self) -> Option<oauth::AuthError> {
        match self {
            Link::Stdio(_) => None,
            Link::Http(h) => h.oauth_stalled(),
        }
    }

    /// The era the connection speaks, once chosen.
    pub(crate) fn set_modern(&self, modern: bool) {
        if let Link::Http(h) = self {
            h.set_modern(modern);
        }
    }

    /// The protocol version the legacy handshake agreed on.
    pub(crate) fn set_protocol_version(&self, version: &str) {
        if let Link::Http(h) = self {
            h.set_protocol_version(version);
        }
    }

    /// HTTP: opens the standalone GET stream (its task, when the server offers one). Stdio has
    /// none: the child's stdout is already that stream.
    pub(crate) async fn open_standalone(
        &self,
        core: Arc<Core>,
        timeout: Duration,
    ) -> Result<Option<tokio::task::JoinHandle<()>>, Error> {
        match self {
            Link::Stdio(_) => Ok(None),
            Link::Http(h) => h.open_standalone(core, timeout).await,
        }
    }

    /// The tail of the server's stderr (stdio only), never parsed.
    pub(crate) fn stderr_tail(&self) -> Option<String> {
        match self {
            Link::Stdio(s) => Some(s.stderr.tail()),
            Link::Http(_) => None,
        }
    }

    /// The server process's id (stdio only).
    pub(crate) fn pid(&self) -> Option<u32> {
        match self {
            Link::Stdio(s) => s.pid,
            Link::Http(_) => None,
        }
    }

    /// "stdio" or "http".
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Link::Stdio(_) => "stdio",
            Link::Http(_) => "http",
        }
    }

    /// Closes and waits until it is gone: stdio closes stdin, waits, signals the group and
    /// reaps the child; HTTP sends DELETE for its session.
    pub(crate) async fn close(&self) {
        match self {
            Link::Stdio(s) => s.close().await,
            Link::Http(h) => h.close().await,
        }
    }

    /// Drops the connection without waiting.
    pub(crate) fn abandon(&self) {
        match self {
            Link::Stdio(s) => s.shutdown(),
            Link::Http(h) => h.abandon(),
        }
    }

    /// Sends a notification `frame` of `method`; an HTTP exchange is bounded by `timeout`.
    pub(crate) async fn notify(
        &self,
        frame: Vec<u8>,
        core: &Core,
        timeout: Duration,
        method: &str,
    ) -> Result<(), Error> {
        match self {
            Link::Stdio(s) => s.send(frame, core),
            Link::Http(h) => {
                tokio::time::timeout(timeout, h.post_message(&frame, core, timeout, method))
                    .await
                    .map_err(|_| Error::Timeout {
                        method: method.to_owned(),
                        after: timeout,
                    })?
            }
        }
    }

    /// Sends `notifications/cancelled` (`notice`) for a request past its deadline, best
    /// effort: the connection is dropped next.
    pub(crate) async fn send_cancel_notice(&self, notice: Vec<u8>, core: &Core) {
        match self {
            Link::Stdio(s) => {
                let _ = s.send(notice, core);
            }
            Link::Http(h) => h.send_notice_briefly(notice, core).await,
        }
    }

    /// Sends request `id` (its `frame`); the answer arrives through `core`. `timeout` is the
    /// HTTP exchange's backstop.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn send_request(
        &self,
        frame: Vec<u8>,
        id: u64,
        method: &str,
        core: &Core,
        options: &ClientOptions,
        timeout: Duration,
        mirror: &Mirror,
    ) -> Result<(), Error> {
        match self {
            Link::Stdio(s) => s.send(frame, core),
            Link::Http(h) => {
                h.exchange(frame, id, method, core, options, timeout, mirror)
                    .await
            }
        }
    }

    /// A clonable handle that sends frames from tasks of their own.
    pub(crate) fn replier(&self) -> Replier {
        match self {
            Link::Stdio(s) => Replier::Stdio(s.sender()),
            Link::Http(h) => Replier::Http(h.clone()),
        }
    }
}

/// How frames reach the server on a connection: the answer to a held question, or the
/// `subscriptions/listen` request (a clonable handle, for tasks of their own).
#[derive(Clone)]
pub(crate) enum Replier {
    Stdio(StdioSender),
    Http(Arc<HttpLink>),
}

impl Replier {
    /// Send the answer `frame` (best effort: the call's own outcome says what happened).
    pub(crate) async fn send(&self, frame: Vec<u8>, core: &Core) {
        match self {
            Replier::Stdio(s) => {
                let _ = s.send(frame, core);
            }
            Replier::Http(h) => {
                let _ = h.send_answer(&frame, core).await;
            }
        }
    }

    /// Sends request `id` (its `frame`) whose answer is a stream (`subscriptions/listen`).
    pub(crate) async fn send_request(
        &self,
        frame: Vec<u8>,
        id: u64,
        method: &str,
        core: &Core,
        options: &ClientOptions,
        timeout: Duration,
    ) -> Result<(), Error> {
        match self {
            Replier::Stdio(s) => s.send(frame, core),
            Replier::Http(h) => {
                h.exchange(frame, id, method, core, options, timeout, &Mirror::none())
                    .await
            }
        }
    }

    /// Ends request `id` whose answer was dropped: over stdio by cancelling it; over HTTP the
    /// dropped stream did it.
    pub(crate) fn end_dropped(&self, id: u64, reason: &str, core: &Core) {
        if let Replier::Stdio(s) = self {
            let params = serde_json::json!({"requestId": id, "reason": reason});
            let _ = s.send(
                rpc::encode(None, "notifications/cancelled", Some(&params)),
                core,
            );
        }
    }
}
