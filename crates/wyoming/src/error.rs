//! The crate's one error type.

use std::time::Duration;

/// What went wrong reading, writing or using a Wyoming stream, an address or audio.
///
/// Each variant says what was too big, too late or malformed; a cause from the system is shown
/// through [`std::error::Error::source`], not repeated in the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A header line did not end within the bound (its newline not among the first
    /// `limit + 1` bytes).
    #[error("a Wyoming header line is longer than {limit} bytes")]
    HeaderTooLong {
        /// The bound, in bytes.
        limit: usize,
    },
    /// An event announced more extra data than the bound allows; nothing of it was read.
    #[error("a Wyoming event announced {length} bytes of data, more than the {limit} allowed")]
    DataTooLong {
        /// The announced length.
        length: u64,
        /// The bound, in bytes.
        limit: usize,
    },
    /// An event announced a larger payload than the bound allows; nothing of it was read.
    #[error(
        "a Wyoming event announced a payload of {length} bytes, more than the {limit} allowed"
    )]
    PayloadTooLong {
        /// The announced length.
        length: u64,
        /// The bound, in bytes.
        limit: usize,
    },
    /// A header line or an event's data was not what the protocol says.
    #[error("malformed Wyoming {part}: {reason}")]
    Malformed {
        /// Which part: "header", "data".
        part: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// An event of a known type whose data does not fit it (a missing `text`, a rate that is
    /// not a number).
    #[error("a Wyoming `{kind}` event is malformed: {reason}")]
    BadEvent {
        /// The event's type.
        kind: String,
        /// What is wrong with its data (cut to 300 characters: it may quote the peer).
        reason: String,
    },
    /// The peer closed the stream in the middle of an event.
    #[error("the Wyoming peer closed the connection in the middle of an event's {part}")]
    Truncated {
        /// Which part was cut: "header line", "data", "payload".
        part: &'static str,
    },
    /// The peer closed the stream while an answer was awaited.
    #[error("the Wyoming peer closed the connection before {awaited}")]
    Closed {
        /// What was awaited ("its `info`", "a `transcript`").
        awaited: &'static str,
    },
    /// Nothing (or not enough) arrived, or could be sent, in time.
    #[error("no {what} within {after:?}")]
    Timeout {
        /// What was late ("whole event", "answer to `describe`").
        what: &'static str,
        /// The deadline that passed.
        after: Duration,
    },
    /// A peer sent more than an answer may hold (bytes of audio, events).
    #[error("the Wyoming peer sent more than {limit} {unit} for {what}")]
    TooMuch {
        /// What was being received ("synthesized audio").
        what: &'static str,
        /// The bound.
        limit: u64,
        /// Its unit ("bytes", "events").
        unit: &'static str,
    },
    /// An event arrived that has no place at this point of the exchange.
    #[error("the Wyoming peer sent `{got}` while {expected} was expected")]
    Unexpected {
        /// The event's type, as the peer wrote it (shown with Rust's escaping, cut to 100
        /// characters).
        got: String,
        /// What was expected.
        expected: &'static str,
    },
    /// The service answered with a Wyoming `error` event (its text and code cut to 500 and 100
    /// characters).
    #[error("the Wyoming service reported an error: {text:?}{}", code.as_deref().map(|c| format!(" (code {c:?})")).unwrap_or_default())]
    Service {
        /// The service's text.
        text: String,
        /// The service's code, if it gave one.
        code: Option<String>,
    },
    /// Audio in a format this side does not take.
    #[error("unsupported audio: {reason}")]
    Audio {
        /// What is wrong with it ("48000 Hz, 4 bytes per sample, 2 channels; 16000 Hz mono
        /// 16-bit is needed").
        reason: String,
    },
    /// Bytes that should be a WAV file are not one this crate reads.
    #[error("not a WAV file this reader takes: {reason}")]
    Wav {
        /// What is wrong with it.
        reason: String,
    },
    /// A Wyoming address that does not parse.
    #[error("bad Wyoming address {address:?}: {reason}")]
    Address {
        /// The address as given.
        address: String,
        /// Why it is refused.
        reason: String,
    },
    /// The dialer (TCP) or the Unix socket connect failed.
    #[error("cannot connect to the Wyoming service at {address}")]
    Connect {
        /// The address dialled.
        address: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An I/O error on the stream.
    #[error("Wyoming stream I/O")]
    Io(#[from] std::io::Error),
}

/// `text` cut to at most `max` characters, an ellipsis marking the cut: a peer's words in an
/// error stay short whatever the peer sent.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

impl Error {
    /// Whether a deadline passed (the peer was silent or too slow).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// Whether the peer sent more than a bound allows (a header, data, payload or an answer
    /// too big).
    pub fn is_too_big(&self) -> bool {
        matches!(
            self,
            Error::HeaderTooLong { .. }
                | Error::DataTooLong { .. }
                | Error::PayloadTooLong { .. }
                | Error::TooMuch { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_peers_words_are_clipped() {
        assert_eq!(super::clip("short", 10), "short");
        assert_eq!(super::clip("ääääää", 3), "äää…");
        assert_eq!(super::clip("", 0), "");
    }
}
