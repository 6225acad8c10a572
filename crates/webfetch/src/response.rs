//! Requests, responses and the capped body.

use std::future::Future;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use hyper::body::{Body as _, Incoming};
use tokio::time::Sleep;

use crate::error::{Error, Phase};
use crate::pool::Release;

/// One request: method, URL, headers, body, and optionally its own total deadline.
///
/// webfetch sets `Host`, `Accept-Encoding` (gzip), `Content-Length` and the connection
/// headers itself; values given for them here are replaced. On a cross-origin redirect only
/// `Accept`, `Accept-Language`, `Content-Type` and `User-Agent` survive: credentials and
/// configured headers are never sent to another origin.
#[derive(Debug, Clone)]
pub struct Request {
    pub(crate) method: Method,
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) timeout: Option<Duration>,
    pub(crate) follow_redirects: bool,
}

impl Request {
    /// A request with any method but CONNECT (refused when sent).
    pub fn new(method: Method, url: impl Into<String>) -> Self {
        Request {
            method,
            url: url.into(),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            timeout: None,
            follow_redirects: true,
        }
    }

    /// A GET.
    pub fn get(url: impl Into<String>) -> Self {
        Request::new(Method::GET, url)
    }

    /// A POST with this body.
    pub fn post(url: impl Into<String>, body: impl Into<Bytes>) -> Self {
        Request::new(Method::POST, url).body(body)
    }

    /// Add a header (appended: a name may repeat).
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// The request headers, to change freely.
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }

    /// Replace the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// A total deadline for this request (redirects and body included) instead of the door's.
    pub fn timeout(mut self, total: Duration) -> Self {
        self.timeout = Some(total);
        self
    }

    /// Whether a redirect is followed (the default) or comes back as the response, its
    /// `Location` unread. With `false`, a door that allows private addresses returns the
    /// redirect too, instead of refusing it; nothing is ever sent to the `Location`.
    pub fn follow_redirects(mut self, follow: bool) -> Self {
        self.follow_redirects = follow;
        self
    }

    /// The method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }
}

/// A response: status and headers are here; the body is read with [`Response::bytes`] (whole,
/// capped) or [`Response::into_body`] (a stream of chunks, capped while streaming).
#[derive(Debug)]
pub struct Response {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) url: url::Url,
    pub(crate) remote_addr: SocketAddr,
    pub(crate) redirects: u8,
    pub(crate) body: Body,
}

impl Response {
    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response headers (`Mcp-Session-Id`, `ETag`, `Last-Modified`, `Retry-After`,
    /// `Content-Type`, …).
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// One header as text, when present and visible ASCII.
    pub fn header_str(&self, name: impl http::header::AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The URL that answered (after redirects).
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// The address of the server that answered.
    pub fn remote_addr(&self) -> SocketAddr {
        self.remote_addr
    }

    /// How many redirects were followed.
    pub fn redirects(&self) -> u8 {
        self.redirects
    }

    /// `Err(Error::Status)` unless the status is 2xx.
    pub fn error_for_status(self) -> Result<Self, Error> {
        if self.status.is_success() {
            Ok(self)
        } else {
            Err(Error::Status {
                status: self.status,
            })
        }
    }

    /// The whole body, decompressed, at most the door's cap.
    pub async fn bytes(self) -> Result<Bytes, Error> {
        self.body.collect().await
    }

    /// The body as a stream of chunks.
    pub fn into_body(self) -> Body {
        self.body
    }
}

/// Writes decompressed bytes to a buffer, refusing to grow past the cap.
#[derive(Debug)]
struct CapWriter {
    out: Vec<u8>,
    written: u64,
    limit: u64,
    over: bool,
}

impl Write for CapWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let len = buf.len() as u64;
        if self.written.saturating_add(len) > self.limit {
            self.over = true;
            return Err(io::Error::other("body cap reached"));
        }
        self.written += len;
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[derive(Debug)]
enum Decoder {
    Identity,
    Gzip(Box<flate2::write::GzDecoder<CapWriter>>),
}

/// The body of a response: a [`Stream`] of chunks (decompressed), which fails with
/// [`Error::TooLarge`] as soon as the door's cap would be passed and with [`Error::Timeout`]
/// when the request's total deadline passes.
///
/// Reading it to the end returns its connection to the door's pool; dropping it early closes
/// the connection. Cancel safe: dropping a pending [`Body::chunk`] loses no data.
pub struct Body {
    inner: Option<Incoming>,
    decoder: Decoder,
    limit: u64,
    received: u64,
    /// Whether any raw (still encoded) byte arrived.
    raw_seen: bool,
    deadline: Pin<Box<Sleep>>,
    total: Duration,
    release: Option<Release>,
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Body")
            .field("limit", &self.limit)
            .field("received", &self.received)
            .field("done", &self.inner.is_none())
            .finish()
    }
}

impl Body {
    pub(crate) fn new(
        inner: Incoming,
        gzip: bool,
        limit: u64,
        deadline: tokio::time::Instant,
        total: Duration,
        release: Option<Release>,
    ) -> Self {
        let decoder = if gzip {
            Decoder::Gzip(Box::new(flate2::write::GzDecoder::new(CapWriter {
                out: Vec::new(),
                written: 0,
                limit,
                over: false,
            })))
        } else {
            Decoder::Identity
        };
        Body {
            inner: Some(inner),
            decoder,
            limit,
            received: 0,
            raw_seen: false,
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
            total,
            release,
        }
    }

    /// The next chunk, `None` at the end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Error> {
        self.next().await.transpose()
    }

    /// Everything left, at most the cap.
    pub async fn collect(mut self) -> Result<Bytes, Error> {
        let mut all = BytesMut::new();
        while let Some(chunk) = self.chunk().await? {
            all.extend_from_slice(&chunk);
        }
        Ok(all.freeze())
    }

    /// Decoded bytes delivered so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The cap of this body, in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    fn fail(&mut self, e: Error) -> Poll<Option<Result<Bytes, Error>>> {
        self.inner = None;
        self.release = None;
        Poll::Ready(Some(Err(e)))
    }

    fn map_gzip_error(&self, e: &io::Error) -> Error {
        match &self.decoder {
            Decoder::Gzip(d) if d.get_ref().over => Error::TooLarge { limit: self.limit },
            _ => Error::http(format!("gzip body does not decode: {e}")),
        }
    }

    /// Feed one raw chunk through the decoder; the decoded bytes, maybe empty.
    fn decode(&mut self, data: Bytes) -> Result<Bytes, Error> {
        match &mut self.decoder {
            Decoder::Identity => {
                self.received = self.received.saturating_add(data.len() as u64);
                if self.received > self.limit {
                    return Err(Error::TooLarge { limit: self.limit });
                }
                Ok(data)
            }
            Decoder::Gzip(d) => {
                self.raw_seen |= !data.is_empty();
                if let Err(e) = d.write_all(&data) {
                    return Err(self.map_gzip_error(&e));
                }
                let out = std::mem::take(&mut d.get_mut().out);
                self.received = d.get_ref().written;
                Ok(Bytes::from(out))
            }
        }
    }

    /// The end of the raw body: flush the decoder.
    fn finish(&mut self) -> Result<Bytes, Error> {
        match &mut self.decoder {
            Decoder::Identity => Ok(Bytes::new()),
            // A body with no bytes at all (a 304 or HEAD answer that names its encoding) has
            // nothing to decode.
            Decoder::Gzip(_) if !self.raw_seen => Ok(Bytes::new()),
            Decoder::Gzip(d) => {
                if let Err(e) = d.try_finish() {
                    return Err(self.map_gzip_error(&e));
                }
                let out = std::mem::take(&mut d.get_mut().out);
                self.received = d.get_ref().written;
                Ok(Bytes::from(out))
            }
        }
    }
}

impl Stream for Body {
    type Item = Result<Bytes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let Some(inner) = this.inner.as_mut() else {
                return Poll::Ready(None);
            };
            if this.deadline.as_mut().poll(cx).is_ready() {
                let limit = this.total;
                return this.fail(Error::Timeout {
                    phase: Phase::Total,
                    limit,
                });
            }
            match Pin::new(inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => {
                    return this.fail(Error::http(format!("reading the body: {e}")));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    match this.decode(data) {
                        Ok(out) if out.is_empty() => continue,
                        Ok(out) => return Poll::Ready(Some(Ok(out))),
                        Err(e) => return this.fail(e),
                    }
                }
                Poll::Ready(None) => {
                    let tail = match this.finish() {
                        Ok(tail) => tail,
                        Err(e) => return this.fail(e),
                    };
                    this.inner = None;
                    if let Some(release) = this.release.take() {
                        release.release();
                    }
                    if tail.is_empty() {
                        return Poll::Ready(None);
                    }
                    return Poll::Ready(Some(Ok(tail)));
                }
            }
        }
    }
}
