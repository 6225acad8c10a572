//! The wire: one event is a JSON header line, then `data_length` bytes of JSON data, then
//! `payload_length` bytes of payload.
//!
//! The header is `{"type": …, "data"?: {…}, "data_length"?: N, "payload_length"?: N,
//! "version"?: "…"}`. A reader takes `data` inline in the header, as separate bytes after it
//! (what the reference library writes), or both (the separate data's keys win, as the reference
//! reader merges them). The writer writes the reference form: the data after the header.
//!
//! Every read is bounded before anything is buffered: the header line by [`Limits::header`]
//! (read through a `take`, never measured after it was assembled), the data and the payload by
//! their announced lengths against [`Limits::data`] and [`Limits::payload`], and the whole event
//! by [`Limits::timeout`].
//!
//! # Cancel safety
//!
//! [`read_event`] and [`write_event`] are not cancel safe: dropped mid-way, the stream is left
//! inside an event. Their own deadline ends them with [`Error::Timeout`], after which the
//! stream must be dropped too.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::Error;

/// The protocol version written in each header (the reference library's version whose wire
/// this crate speaks).
pub const VERSION: &str = "1.10.2";

/// One Wyoming event as it is on the wire: its type, its data (inline and separate merged) and
/// its payload (empty when there is none).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Event {
    /// The event's `type` (`"transcript"`, `"audio-chunk"`, …).
    pub kind: String,
    /// Its data, a JSON object (empty when the event has none).
    pub data: Map<String, Value>,
    /// Its payload (PCM for audio), empty when there is none.
    pub payload: Vec<u8>,
}

impl Event {
    /// An event of type `kind` with no data and no payload.
    pub fn new(kind: impl Into<String>) -> Event {
        Event {
            kind: kind.into(),
            data: Map::new(),
            payload: Vec::new(),
        }
    }
}

/// The bounds of one event read (and the deadline of one event written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest header line, its newline not counted. Default 64 KiB.
    pub header: usize,
    /// The most separate data bytes. Default 1 MiB.
    pub data: usize,
    /// The largest payload. Default 4 MiB (a Piper chunk is 2 KiB, a whole utterance a few
    /// hundred KiB).
    pub payload: usize,
    /// The deadline of one whole event, read or written, counted from when it is awaited (a
    /// read's includes the wait for its first byte: a service that thinks longer than this
    /// before it answers needs a longer one). Default 30 s.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header: 64 * 1024,
            data: 1024 * 1024,
            payload: 4 * 1024 * 1024,
            timeout: Duration::from_secs(30),
        }
    }
}

/// The header line as read, before its data is merged.
struct Header {
    kind: String,
    data: Map<String, Value>,
    data_length: u64,
    payload_length: u64,
}

fn malformed(reason: impl Into<String>) -> Error {
    Error::Malformed {
        part: "header",
        reason: reason.into(),
    }
}

/// A length field: absent, `null` or a non-negative integer.
fn length(header: &Map<String, Value>, key: &str) -> Result<u64, Error> {
    match header.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| malformed(format!("`{key}` is {n}, not a non-negative integer"))),
        Some(other) => Err(malformed(format!(
            "`{key}` is {}, not a non-negative integer",
            json_kind(other)
        ))),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_header(line: &[u8]) -> Result<Header, Error> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| malformed(format!("not JSON ({e})")))?;
    let Value::Object(mut map) = value else {
        return Err(malformed(format!(
            "{}, not a JSON object",
            json_kind(&value)
        )));
    };
    let kind = match map.remove("type") {
        Some(Value::String(s)) if !s.is_empty() => s,
        Some(Value::String(_)) => return Err(malformed("`type` is empty")),
        Some(other) => {
            return Err(malformed(format!(
                "`type` is {}, not a string",
                json_kind(&other)
            )))
        }
        None => return Err(malformed("no `type`")),
    };
    let data = match map.remove("data") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(malformed(format!(
                "`data` is {}, not an object",
                json_kind(&other)
            )))
        }
    };
    Ok(Header {
        kind,
        data,
        data_length: length(&map, "data_length")?,
        payload_length: length(&map, "payload_length")?,
    })
}

/// `n` bytes exactly, or [`Error::Truncated`] naming `part`.
async fn read_exact_part<R: AsyncBufRead + Unpin>(
    r: &mut R,
    n: usize,
    part: &'static str,
) -> Result<Vec<u8>, Error> {
    let mut buf = vec![0u8; n];
    match r.read_exact(&mut buf).await {
        Ok(_) => Ok(buf),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(Error::Truncated { part }),
        Err(e) => Err(Error::Io(e)),
    }
}

async fn read_unbounded_in_time<R: AsyncBufRead + Unpin>(
    r: &mut R,
    limits: &Limits,
) -> Result<Option<Event>, Error> {
    let mut line = Vec::new();
    let cap = u64::try_from(limits.header)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let n = (&mut *r).take(cap).read_until(b'\n', &mut line).await?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        if line.len() > limits.header {
            return Err(Error::HeaderTooLong {
                limit: limits.header,
            });
        }
        return Err(Error::Truncated {
            part: "header line",
        });
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    let header = parse_header(&line)?;
    let mut data = header.data;
    if header.data_length > 0 {
        let n = usize::try_from(header.data_length)
            .ok()
            .filter(|n| *n <= limits.data)
            .ok_or(Error::DataTooLong {
                length: header.data_length,
                limit: limits.data,
            })?;
        let bytes = read_exact_part(r, n, "data").await?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(extra)) => data.extend(extra),
            Ok(other) => {
                return Err(Error::Malformed {
                    part: "data",
                    reason: format!("{}, not a JSON object", json_kind(&other)),
                })
            }
            Err(e) => {
                return Err(Error::Malformed {
                    part: "data",
                    reason: format!("not JSON ({e})"),
                })
            }
        }
    }
    let mut payload = Vec::new();
    if header.payload_length > 0 {
        let n = usize::try_from(header.payload_length)
            .ok()
            .filter(|n| *n <= limits.payload)
            .ok_or(Error::PayloadTooLong {
                length: header.payload_length,
                limit: limits.payload,
            })?;
        payload = read_exact_part(r, n, "payload").await?;
    }
    Ok(Some(Event {
        kind: header.kind,
        data,
        payload,
    }))
}

/// Reads one event, or `None` when the stream ended cleanly before a header began.
///
/// Bounded by `limits` in size and in time (the whole event within [`Limits::timeout`]). A
/// header or data that is not what the protocol says is [`Error::Malformed`]; a stream that
/// ends inside an event is [`Error::Truncated`]. Not cancel safe (see the module's docs).
pub async fn read_event<R: AsyncBufRead + Unpin>(
    r: &mut R,
    limits: &Limits,
) -> Result<Option<Event>, Error> {
    match tokio::time::timeout(limits.timeout, read_unbounded_in_time(r, limits)).await {
        Ok(result) => result,
        Err(_) => Err(Error::Timeout {
            what: "whole Wyoming event",
            after: limits.timeout,
        }),
    }
}

/// The bytes of `event` on the wire, in the reference library's form: the header line with
/// `version` and the lengths, the data after it (when there is any), then the payload.
pub fn encode(event: &Event) -> Vec<u8> {
    let mut header = Map::new();
    header.insert("type".to_owned(), Value::String(event.kind.clone()));
    header.insert("version".to_owned(), Value::String(VERSION.to_owned()));
    let data = if event.data.is_empty() {
        Vec::new()
    } else {
        // A map of JSON values always serializes.
        serde_json::to_vec(&event.data).unwrap_or_default()
    };
    if !data.is_empty() {
        header.insert("data_length".to_owned(), Value::from(data.len()));
    }
    if !event.payload.is_empty() {
        header.insert(
            "payload_length".to_owned(),
            Value::from(event.payload.len()),
        );
    }
    let mut out = serde_json::to_vec(&header).unwrap_or_default();
    out.push(b'\n');
    out.extend_from_slice(&data);
    out.extend_from_slice(&event.payload);
    out
}

/// Writes `event` ([`encode`]) and flushes, within [`Limits::timeout`] (a peer that stops
/// reading cannot hold the writer). Not cancel safe.
pub async fn write_event<W: AsyncWrite + Unpin>(
    w: &mut W,
    event: &Event,
    limits: &Limits,
) -> Result<(), Error> {
    let bytes = encode(event);
    let write = async {
        w.write_all(&bytes).await?;
        w.flush().await
    };
    match tokio::time::timeout(limits.timeout, write).await {
        Ok(result) => result.map_err(Error::Io),
        Err(_) => Err(Error::Timeout {
            what: "write of a whole Wyoming event",
            after: limits.timeout,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(bytes: &[u8], limits: &Limits) -> Vec<Result<Option<Event>, String>> {
        let mut r = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            let ev = read_event(&mut r, limits).await;
            let stop = !matches!(ev, Ok(Some(_)));
            out.push(ev.map_err(|e| e.to_string()));
            if stop {
                return out;
            }
        }
    }

    fn ev(kind: &str, data: Value, payload: &[u8]) -> Event {
        let Value::Object(data) = data else {
            panic!("data must be an object")
        };
        Event {
            kind: kind.to_owned(),
            data,
            payload: payload.to_vec(),
        }
    }

    #[tokio::test]
    async fn both_forms_of_data_are_read_and_merged() {
        let wire =
            b"{\"type\":\"transcript\",\"data\":{\"text\":\"inline\",\"language\":\"en\"}}\n\
{\"type\":\"transcript\",\"data_length\":14,\"version\":\"1.5.0\"}\n{\"text\":\"sep\"}\
{\"type\":\"t\",\"data\":{\"a\":1,\"b\":2},\"data_length\":7}\n{\"b\":3}";
        let got = read_all(wire, &Limits::default()).await;
        assert_eq!(
            got,
            vec![
                Ok(Some(ev(
                    "transcript",
                    serde_json::json!({"text":"inline","language":"en"}),
                    b""
                ))),
                Ok(Some(ev(
                    "transcript",
                    serde_json::json!({"text":"sep"}),
                    b""
                ))),
                Ok(Some(ev("t", serde_json::json!({"a":1,"b":3}), b""))),
                Ok(None),
            ]
        );
    }

    #[tokio::test]
    async fn what_is_written_reads_back() {
        let events = [
            ev("describe", serde_json::json!({}), b""),
            ev(
                "audio-chunk",
                serde_json::json!({"rate":16000,"width":2,"channels":1}),
                &[1, 2, 3, 4],
            ),
            ev("x", serde_json::json!({"t":"π \n \"q\""}), b"\n\n"),
        ];
        let mut wire = Vec::new();
        for e in &events {
            write_event(&mut wire, e, &Limits::default()).await.unwrap();
        }
        let first_line = wire.split(|b| *b == b'\n').next().unwrap();
        assert_eq!(first_line, br#"{"type":"describe","version":"1.10.2"}"#);
        let got = read_all(&wire, &Limits::default()).await;
        let mut want: Vec<_> = events.iter().cloned().map(|e| Ok(Some(e))).collect();
        want.push(Ok(None));
        assert_eq!(got, want);
    }

    #[tokio::test]
    async fn each_bound_and_malformation_is_named() {
        let small = Limits {
            header: 40,
            data: 8,
            payload: 8,
            timeout: Duration::from_secs(5),
        };
        let table: &[(&[u8], &str)] = &[
            (
                b"{\"type\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}\n",
                "a Wyoming header line is longer than 40 bytes",
            ),
            (
                b"{\"type\":\"a\",\"data_length\":9}\n",
                "a Wyoming event announced 9 bytes of data, more than the 8 allowed",
            ),
            (
                b"{\"type\":\"a\",\"payload_length\":2147483648}\n",
                "a Wyoming event announced a payload of 2147483648 bytes, more than the 8 allowed",
            ),
            (
                b"{\"type\":\"a\",\"payload_length\":-1}\n",
                "malformed Wyoming header: `payload_length` is -1, not a non-negative integer",
            ),
            (
                b"{\"type\":\"a\",\"data_length\":\"3\"}\n",
                "malformed Wyoming header: `data_length` is a string, not a non-negative integer",
            ),
            (
                b"[1]\n",
                "malformed Wyoming header: an array, not a JSON object",
            ),
            (b"{}\n", "malformed Wyoming header: no `type`"),
            (
                b"{\"type\":7}\n",
                "malformed Wyoming header: `type` is a number, not a string",
            ),
            (
                b"{\"type\":\"a\",\"data\":[]}\n",
                "malformed Wyoming header: `data` is an array, not an object",
            ),
            (
                b"{\"type\":\"a\",\"data_length\":3}\n[1]",
                "malformed Wyoming data: an array, not a JSON object",
            ),
            (
                b"{\"type\":\"a\",\"payload_length\":4}\nab",
                "the Wyoming peer closed the connection in the middle of an event's payload",
            ),
            (
                b"{\"type\":\"a\"",
                "the Wyoming peer closed the connection in the middle of an event's header line",
            ),
        ];
        for (wire, want) in table {
            let got = read_all(wire, &small).await;
            assert_eq!(
                got.last(),
                Some(&Err((*want).to_owned())),
                "on {:?}",
                String::from_utf8_lossy(wire)
            );
        }
        // Garbage that is not JSON names the parser's complaint.
        let got = read_all(b"\x00\xffgarbage\n", &small).await;
        assert!(
            matches!(got.last(), Some(Err(e)) if e.starts_with("malformed Wyoming header: not JSON")),
            "{got:?}"
        );
    }

    #[tokio::test]
    async fn a_header_of_exactly_the_bound_is_taken() {
        let line = br#"{"type":"abcdefghij"}"#; // 21 bytes
        let limits = Limits {
            header: line.len(),
            ..Limits::default()
        };
        let mut wire = line.to_vec();
        wire.push(b'\n');
        let got = read_all(&wire, &limits).await;
        assert_eq!(got[0], Ok(Some(Event::new("abcdefghij"))));
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_peer_times_out() {
        let (mut client, server) = tokio::io::duplex(64);
        client.write_all(b"{\"type\":").await.unwrap();
        let mut r = tokio::io::BufReader::new(server);
        let err = read_event(&mut r, &Limits::default()).await.unwrap_err();
        assert!(err.is_timeout());
        assert_eq!(err.to_string(), "no whole Wyoming event within 30s");
        drop(client);
    }

    proptest::proptest! {
        #[test]
        fn events_read_the_same_however_the_stream_is_cut(
            texts in proptest::collection::vec(".{0,20}", 1..6),
            inline in proptest::collection::vec(proptest::bool::ANY, 6),
            capacity in 1usize..9,
        ) {
            // Each event in one of the two forms (data inline, data after the header), read
            // through a buffer of `capacity` bytes: the reader's result cannot depend on how
            // the bytes arrive.
            let mut wire = Vec::new();
            let mut want = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                let e = ev("transcript", serde_json::json!({"text": text}), if i % 2 == 0 { b"" } else { b"pcm" });
                if inline[i] {
                    let mut header = serde_json::json!({"type": "transcript", "data": {"text": text}});
                    if !e.payload.is_empty() {
                        header["payload_length"] = 3.into();
                    }
                    wire.extend(serde_json::to_vec(&header).unwrap());
                    wire.push(b'\n');
                    wire.extend(&e.payload);
                } else {
                    wire.extend(encode(&e));
                }
                want.push(Ok(Some(e)));
            }
            want.push(Ok(None));
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
            let got = rt.block_on(async {
                let mut r = tokio::io::BufReader::with_capacity(capacity, &wire[..]);
                let mut out = Vec::new();
                loop {
                    let e = read_event(&mut r, &Limits::default()).await.map_err(|e| e.to_string());
                    let stop = !matches!(e, Ok(Some(_)));
                    out.push(e);
                    if stop {
                        return out;
                    }
                }
            });
            proptest::prop_assert_eq!(got, want);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            crate::fuzzing::reader(&bytes);
        }

        #[test]
        fn any_event_round_trips(
            kind in "[a-z-]{1,12}",
            text in ".{0,40}",
            n in 0u32..100,
            payload in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
        ) {
            let e = ev(&kind, serde_json::json!({"text": text, "n": n}), &payload);
            let wire = encode(&e);
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
            let got = rt.block_on(read_all(&wire, &Limits::default()));
            proptest::prop_assert_eq!(got, vec![Ok(Some(e)), Ok(None)]);
        }
    }
}
