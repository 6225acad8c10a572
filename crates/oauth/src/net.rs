//! Every request of the flow, through the server's webfetch door: the address guard holds, no
//! redirect is followed, bodies are capped, each request has its deadline, and endpoints must
//! be `https` (plain `http` only to a loopback address, and only on a door with
//! `allow_private`).

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use bytes::Bytes;
use webfetch::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};

use super::error::{cut, AuthError};

/// Largest metadata document (protected resource, authorization server) read.
pub const METADATA_CAP: usize = 64 * 1024;
/// Largest token or registration answer read.
pub const ANSWER_CAP: usize = 64 * 1024;
/// Deadline of each request of the flow.
pub const FETCH_DEADLINE: Duration = Duration::from_secs(10);

/// Rewrites a URL before it is dialled (and only then): the identity of every party (the
/// resource, the issuer, `htu`) stays the URL as published. The daemon never sets one; the
/// conformance client maps its suite's `localhost` to 127.0.0.1, which the door requires.
pub type Dial = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The flow's view of the door.
#[derive(Clone)]
pub(crate) struct Net {
    pub(crate) fetcher: webfetch::Fetcher,
    pub(crate) dial: Option<Dial>,
    /// The requests of the flow waiting for their answer now: what a deadline of the caller's
    /// (an MCP request the flow runs inside) names when it passes first.
    pub(crate) waiting: Arc<Mutex<Vec<Waiting>>>,
}

/// A request of the flow sent and not answered yet.
#[derive(Debug, Clone)]
pub(crate) struct Waiting {
    id: u64,
    pub(crate) what: &'static str,
    pub(crate) url: String,
    pub(crate) since: Instant,
}

/// Takes its request off [`Net::waiting`] when the request ends, answered or dropped.
struct Sent<'a> {
    waiting: &'a Mutex<Vec<Waiting>>,
    id: u64,
}

impl Drop for Sent<'_> {
    fn drop(&mut self) {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|w| w.id != self.id);
    }
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(0);

/// One answer, read whole (capped).
pub(crate) struct Answer {
    /// Where it came from (capped), for errors.
    pub(crate) url: String,
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    pub(crate) fn json(&self, what: &'static str) -> Result<serde_json::Value, AuthError> {
        let v: serde_json::Value =
            serde_json::from_slice(&self.body).map_err(|e| AuthError::Malformed {
                what,
                reason: format!("the answer at {} is not JSON: {e}", self.url),
            })?;
        if !v.is_object() {
            return Err(AuthError::Malformed {
                what,
                reason: format!("the answer at {} is not a JSON object", self.url),
            });
        }
        Ok(v)
    }

    /// An OAuth error answer's `error` and `error_description`.
    pub(crate) fn oauth_error(&self, what: &'static str) -> AuthError {
        let v: serde_json::Value = serde_json::from_slice(&self.body).unwrap_or_default();
        let error = v
            .get("error")
            .and_then(|e| e.as_str())
            .map(cut)
            .unwrap_or_else(|| format!("HTTP {}", self.status.as_u16()));
        let description = v.get("error_description").and_then(|e| e.as_str()).map(cut);
        AuthError::Refused {
            what,
            error,
            description,
        }
    }
}

fn is_loopback(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Ipv4(a) => IpAddr::V4(*a).is_loopback(),
        url::Host::Ipv6(a) => IpAddr::V6(*a).is_loopback(),
        url::Host::Domain(_) => false,
    }
}

impl Net {
    pub(crate) fn new(fetcher: webfetch::Fetcher) -> Net {
        Net {
            fetcher,
            dial: None,
            waiting: Arc::default(),
        }
    }

    /// The oldest request of the flow still waiting for its answer.
    pub(crate) fn oldest_waiting(&self) -> Option<Waiting> {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .min_by_key(|w| w.since)
            .cloned()
    }

    fn dialled(&self, url: &str) -> String {
        match &self.dial {
            Some(d) => d(url),
            None => url.to_owned(),
        }
    }

    /// Whether Maven sends anything to this endpoint: https, or plain http to a loopback
    /// address on a door that allows private addresses; then the door's own vetting (the
    /// address table, the lists), without connecting.
    pub(crate) fn check(&self, what: &'static str, url: &str) -> Result<(), AuthError> {
        let refuse = |reason: String| AuthError::Endpoint {
            what,
            url: cut(url),
            reason,
        };
        let dialled = self.dialled(url);
        let parsed = url::Url::parse(&dialled).map_err(|e| refuse(format!("not a URL: {e}")))?;
        // The door's judgement first (the address table, the lists): its reason is the most
        // specific.
        self.fetcher
            .vet(&dialled)
            .map_err(|e| refuse(e.to_string()))?;
        match parsed.scheme() {
            "https" => {}
            "http" => {
                let loopback = parsed.host().is_some_and(|h| is_loopback(&h));
                if !loopback {
                    return Err(refuse("plain http is refused (https only)".to_owned()));
                }
                if !self.fetcher.door().allow_private {
                    return Err(refuse(
                        "plain http to loopback needs allow_private on this server".to_owned(),
                    ));
                }
            }
            other => return Err(refuse(format!("scheme {other:?} is refused"))),
        }
        if parsed.fragment().is_some() {
            return Err(refuse("a fragment is refused".to_owned()));
        }
        Ok(())
    }

    /// Send one request of the flow: checked, no redirect followed, the body read whole up to
    /// `cap`, all within [`FETCH_DEADLINE`].
    pub(crate) async fn send(
        &self,
        what: &'static str,
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: Vec<u8>,
        cap: usize,
    ) -> Result<Answer, AuthError> {
        self.check(what, url)?;
        let mut r = Request::new(method, self.dialled(url))
            .body(body)
            .follow_redirects(false)
            .timeout(FETCH_DEADLINE);
        *r.headers_mut() = headers;
        let shown = cut(url);
        let id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed);
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Waiting {
                id,
                what,
                url: shown.clone(),
                since: Instant::now(),
            });
        let _sent = Sent {
            waiting: &self.waiting,
            id,
        };
        let fut = async {
            let resp = self
                .fetcher
                .send(r)
                .await
                .map_err(|e| fetch_error(what, &shown, cap, e))?;
            let status = resp.status();
            if status.is_redirection() {
                return Err(AuthError::Redirect {
                    what,
                    url: shown.clone(),
                    status: status.as_u16(),
                });
            }
            let declared = resp
                .header_str(header::CONTENT_LENGTH)
                .and_then(|l| l.parse::<u64>().ok());
            let too_large = || AuthError::TooLarge {
                what,
                url: shown.clone(),
                cap,
            };
            if declared.is_some_and(|l| l > cap as u64) {
                return Err(too_large());
            }
            let headers = resp.headers().clone();
            let mut body = resp.into_body();
            let mut out = Vec::new();
            loop {
                match body.chunk().await {
                    Ok(Some(c)) => {
                        if out.len() + c.len() > cap {
                            return Err(too_large());
                        }
                        out.extend_from_slice(&c);
                    }
                    Ok(None) => break,
                    Err(webfetch::Error::TooLarge { .. }) => return Err(too_large()),
                    Err(e) => return Err(fetch_error(what, &shown, cap, e)),
                }
            }
            Ok(Answer {
                url: shown.clone(),
                status,
                headers,
                body: Bytes::from(out),
            })
        };
        // webfetch's own deadline covers the body; this one is the backstop.
        tokio::time::timeout(FETCH_DEADLINE + Duration::from_secs(1), fut)
            .await
            .map_err(|_| AuthError::Timeout {
                what,
                url: cut(url),
                secs: FETCH_DEADLINE.as_secs(),
            })?
    }

    /// GET a JSON document.
    pub(crate) async fn get(&self, what: &'static str, url: &str) -> Result<Answer, AuthError> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        self.send(what, Method::GET, url, h, Vec::new(), METADATA_CAP)
            .await
    }

    /// POST a form (or a JSON body when `json`).
    pub(crate) async fn post(
        &self,
        what: &'static str,
        url: &str,
        body: Vec<u8>,
        json: bool,
        extra: HeaderMap,
    ) -> Result<Answer, AuthError> {
        let ct = if json {
            "application/json"
        } else {
            "application/x-www-form-urlencoded"
        };
        let mut h = extra;
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
        h.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        self.send(what, Method::POST, url, h, body, ANSWER_CAP)
            .await
    }
}

fn fetch_error(what: &'static str, url: &str, cap: usize, e: webfetch::Error) -> AuthError {
    match e {
        webfetch::Error::TooLarge { .. } => AuthError::TooLarge {
            what,
            url: url.to_owned(),
            cap,
        },
        webfetch::Error::Timeout { .. } => AuthError::Timeout {
            what,
            url: url.to_owned(),
            secs: FETCH_DEADLINE.as_secs(),
        },
        e => AuthError::Fetch {
            what,
            url: url.to_owned(),
            reason: e.to_string(),
        },
    }
}
