//! The service side: a connection a Wyoming client opened (Home Assistant, a satellite, the
//! reference library), read event by event and dispatched to a [`Handler`].
//!
//! `describe` is answered with the handler's [`Info`]; `transcript` goes to
//! [`Handler::handle`] and its [`Answer`] goes back as `handled` or `not-handled` — and, when
//! the handler's `info` offers a `handle` program that `supports_handled_streaming`, a handled
//! answer first as `handled-start`, one `handled-chunk` per sentence ([`crate::text::sentences`],
//! the chunks joined are the answer's text), `handled-stop`, then the plain `handled` with the
//! whole text, for a client that reads only that (Home Assistant's agent skips the events it
//! does not know); `ping` is answered `pong`. Any
//! other event is answered with an `error` event naming it, and the connection goes on. An
//! event that does not read (too big, malformed, late) is answered with an `error` event when
//! the stream can still take one, and ends the connection with that error (after reading what
//! the client still sends for a second, at most 1 MiB, so that the close does not reset the
//! connection before the client read why).

use std::future::Future;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::client::Stream;
use crate::events::{
    ErrorEvent, Handled, HandledChunk, HandledStart, Info, Message, Ping, Transcript,
};
use crate::{codec, Error};

/// A conversation agent's answer to a transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// Whether the agent could help (`handled`) or not (`not-handled`).
    pub handled: bool,
    /// What it says.
    pub text: String,
    /// The context to send back; `None` sends back the transcript's own.
    pub context: Option<Map<String, Value>>,
}

/// What a service does with what its clients send.
pub trait Handler: Send + Sync {
    /// What the service offers, sent as `info` for each `describe`.
    fn info(&self) -> Info;
    /// The answer to one transcript. Its time is the handler's to bound.
    fn handle(&self, transcript: Transcript) -> impl Future<Output = Answer> + Send;
}

/// The bounds of one served connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerLimits {
    /// Each event read or written (once its first byte arrived).
    pub event: codec::Limits,
    /// The longest wait for the next event's first byte; then the connection ends with
    /// [`Error::Timeout`]. Default 5 minutes.
    pub idle: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            event: codec::Limits {
                // A client sends text, not audio, to a conversation agent.
                payload: 64 * 1024,
                ..codec::Limits::default()
            },
            idle: Duration::from_secs(300),
        }
    }
}

/// Serves one accepted connection until the client closes it (`Ok`), an event does not read,
/// or the client is idle longer than [`ServerLimits::idle`].
pub async fn serve<S: Stream, H: Handler>(
    stream: S,
    handler: &H,
    limits: &ServerLimits,
) -> Result<(), Error> {
    let mut conn = BufReader::new(stream);
    loop {
        match tokio::time::timeout(limits.idle, conn.fill_buf()).await {
            Err(_) => {
                return Err(Error::Timeout {
                    what: "next event from the Wyoming client",
                    after: limits.idle,
                })
            }
            Ok(Err(e)) => return Err(Error::Io(e)),
            Ok(Ok([])) => return Ok(()),
            Ok(Ok(_)) => {}
        }
        let event = match codec::read_event(&mut conn, &limits.event).await {
            Ok(Some(event)) => event,
            Ok(None) => return Ok(()),
            Err(e) => return Err(refuse(&mut conn, e, limits).await),
        };
        let message = match Message::from_event(event) {
            Ok(m) => m,
            Err(e) => return Err(refuse(&mut conn, e, limits).await),
        };
        for reply in answer(message, handler).await {
            codec::write_event(&mut conn, &reply.into_event(), &limits.event).await?;
        }
    }
}

/// Tells the client why its connection ends, if the stream can still take it, and gives the
/// error back.
async fn refuse<S: Stream>(conn: &mut BufReader<S>, e: Error, limits: &ServerLimits) -> Error {
    if !matches!(
        e,
        Error::Io(_) | Error::Truncated { .. } | Error::Timeout { .. }
    ) {
        let text = e.to_string();
        let reply = Message::Error(ErrorEvent {
            text,
            code: Some("bad-event".to_owned()),
        });
        if codec::write_event(conn, &reply.into_event(), &limits.event)
            .await
            .is_ok()
        {
            linger(conn).await;
        }
    }
    e
}

/// Closes the writing side and reads what the client still sends, a little and briefly, so
/// that the close is not a reset that could drop the error event before the client reads it.
async fn linger<S: Stream>(conn: &mut BufReader<S>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let drain = async {
        let _ = conn.get_mut().shutdown().await;
        let mut sink = [0u8; 8192];
        let mut left = LINGER_BYTES;
        while left > 0 {
            match conn.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

/// How long, and how much, [`linger`] reads.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 1024 * 1024;

async fn answer<H: Handler>(message: Message, handler: &H) -> Vec<Message> {
    match message {
        Message::Describe => vec![Message::Info(handler.info())],
        Message::Ping(p) => vec![Message::Pong(Ping { text: p.text })],
        Message::Transcript(t) => {
            let own = t.context.clone();
            let streaming = handler
                .info()
                .handle
                .iter()
                .any(|p| p.supports_handled_streaming);
            let a = handler.handle(t).await;
            let context = a.context.or(own);
            let mut replies = Vec::new();
            if a.handled && streaming {
                replies.push(Message::HandledStart(HandledStart {
                    context: context.clone(),
                }));
                for piece in crate::text::sentences(&a.text) {
                    replies.push(Message::HandledChunk(HandledChunk {
                        text: piece.to_owned(),
                    }));
                }
                replies.push(Message::HandledStop);
            }
            let h = Handled {
                text: Some(a.text),
                context,
            };
            replies.push(if a.handled {
                Message::Handled(h)
            } else {
                Message::NotHandled(h)
            });
            replies
        }
        other => vec![Message::Error(ErrorEvent {
            text: format!(
                "this service does not take `{}` events",
                other.kind().escape_debug()
            ),
            code: Some("unsupported".to_owned()),
        })],
    }
}
