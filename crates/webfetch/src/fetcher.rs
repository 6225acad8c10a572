//! The fetcher of one door: vetting, resolving, dialling, TLS, HTTP/1.1, redirects.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, StatusCode, Version};
use http_body_util::Full;
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::addr::Lifts;
use crate::door::DoorConfig;
use crate::error::{Error, Phase, Refusal};
use crate::pool::{Pool, Release, Sender};
use crate::rate::RateLimit;
use crate::resolve::{Resolve, SystemResolver};
use crate::response::{Body, Request, Response};
use crate::target::{parse_url, HostPattern, Scheme, Target, TargetHost, UrlPolicy};
#[cfg(feature = "test-hooks")]
use crate::testing;

/// The most redirects any door follows.
pub const MAX_REDIRECTS: u8 = 3;

/// hyper's read buffer: also the largest response head (status line and headers) accepted.
const MAX_BUF: usize = 256 * 1024;
/// Most response headers accepted.
const MAX_HEADERS: usize = 128;

/// Headers kept on a cross-origin redirect; every other header is dropped.
const CROSS_ORIGIN_KEEP: [header::HeaderName; 4] = [
    header::ACCEPT,
    header::ACCEPT_LANGUAGE,
    header::CONTENT_TYPE,
    header::USER_AGENT,
];

/// Headers webfetch owns: a caller's values are removed.
const OWNED: [header::HeaderName; 9] = [
    header::HOST,
    header::CONNECTION,
    header::TRANSFER_ENCODING,
    header::CONTENT_LENGTH,
    header::ACCEPT_ENCODING,
    header::TE,
    header::UPGRADE,
    header::PROXY_AUTHORIZATION,
    header::EXPECT,
];

#[cfg(feature = "test-hooks")]
type DialHook = Arc<dyn Fn(SocketAddr) + Send + Sync>;

/// The network door of one configured use: every request of a feed, an MCP server or the
/// router goes through its own `Fetcher`.
///
/// Cheap to clone (an `Arc` inside); clones share the door's keep-alive pool and rate limit.
/// Never reads proxy settings from the environment.
#[derive(Clone)]
pub struct Fetcher {
    inner: Arc<Inner>,
}

struct Inner {
    door: DoorConfig,
    policy: UrlPolicy,
    resolver: Arc<dyn Resolve>,
    tls: Result<Arc<ClientConfig>, String>,
    #[cfg(feature = "test-hooks")]
    on_dial: Option<DialHook>,
    rate: RateLimit,
    pool: Arc<Pool>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("door", &self.inner.door.name)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Fetcher`]: a door's config plus a resolver, and for tests extra TLS roots (and,
/// with the `test-hooks` feature only, a dial hook and pretend-public addresses).
pub struct FetcherBuilder {
    door: DoorConfig,
    resolver: Arc<dyn Resolve>,
    roots: RootCertStore,
    #[cfg(feature = "test-hooks")]
    on_dial: Option<DialHook>,
    #[cfg(feature = "test-hooks")]
    pretend_public: Vec<IpAddr>,
}

impl std::fmt::Debug for FetcherBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetcherBuilder")
            .field("door", &self.door.name)
            .finish_non_exhaustive()
    }
}

impl FetcherBuilder {
    /// Use this resolver instead of the system's.
    pub fn resolver(mut self, resolver: impl Resolve) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }

    /// Trust one more root certificate (DER) besides the webpki roots. Meant for tests, which
    /// make a CA at run time.
    pub fn add_root_certificate(mut self, der: &[u8]) -> Result<Self, Error> {
        self.roots
            .add(CertificateDer::from(der.to_vec()))
            .map_err(|e| Error::Tls {
                host: "(root certificate)".to_string(),
                reason: e.to_string(),
            })?;
        Ok(self)
    }

    /// Test-only (`test-hooks` feature): call `hook` with every address right before a
    /// connection attempt to it. Observation only (tests count attempts with it); it cannot
    /// change where webfetch connects.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn on_dial(mut self, hook: impl Fn(SocketAddr) + Send + Sync + 'static) -> Self {
        self.on_dial = Some(Arc::new(hook));
        self
    }

    /// Test-only (`test-hooks` feature): judge one loopback address other than 127.0.0.1 as
    /// if it were public, so redirect chains from a "public" server to forbidden ones can run
    /// on loopback.
    ///
    /// It exists because tests may use only loopback, and a real public address is what a
    /// redirect test needs. It is compiled only with the `test-hooks` feature, which only
    /// dev-dependencies enable; the config module never builds a [`testing::PretendPublic`],
    /// and that type accepts only 127.0.0.0/8, so no configuration can reach this.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn pretend_public(mut self, pretend: testing::PretendPublic) -> Self {
        self.pretend_public.push(pretend.addr());
        self
    }

    /// The test hooks the environment names in a build with the `test-hooks` feature, which
    /// only dev-dependencies enable (so a daemon built for the integration tests has them):
    /// `pretend_public` for every address `MAVEN_TEST_PRETEND_PUBLIC` lists (entries
    /// that are not a loopback IPv4 address other than 127.0.0.1 are ignored). In any other
    /// build, nothing: the builder as it is.
    pub fn test_hooks_from_env(self) -> Self {
        #[cfg(feature = "test-hooks")]
        let hooked = match std::env::var(testing::PRETEND_PUBLIC_ENV) {
            Ok(list) => testing::pretend_public_list(&list)
                .into_iter()
                .fold(self, FetcherBuilder::pretend_public),
            Err(_) => self,
        };
        #[cfg(not(feature = "test-hooks"))]
        let hooked = self;
        hooked
    }

    /// The fetcher.
    pub fn build(self) -> Fetcher {
        let door = self.door;
        let policy = UrlPolicy {
            lifts: Lifts {
                private: door.allow_private,
                cgnat: door.allow_cgnat,
            },
            allow: if door.allow_hosts.is_empty() {
                None
            } else {
                Some(
                    door.allow_hosts
                        .iter()
                        .filter_map(|h| HostPattern::parse(h))
                        .collect(),
                )
            },
            deny: door
                .deny_hosts
                .iter()
                .filter_map(|h| HostPattern::parse(h))
                .collect(),
            #[cfg(feature = "test-hooks")]
            pretend_public: self.pretend_public,
        };
        let tls = tls_config(self.roots);
        Fetcher {
            inner: Arc::new(Inner {
                rate: RateLimit::new(door.host_interval),
                door,
                policy,
                resolver: self.resolver,
                tls,
                #[cfg(feature = "test-hooks")]
                on_dial: self.on_dial,
                pool: Arc::new(Pool::default()),
            }),
        }
    }
}

fn tls_config(roots: RootCertStore) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The deadlines of one request.
struct Clock {
    end: Instant,
    total: Duration,
}

impl Clock {
    fn start(total: Duration) -> Self {
        Clock {
            end: Instant::now() + total,
            total,
        }
    }

    /// Run `fut` under the phase's deadline and the total one, whichever comes first.
    async fn phase<F: Future>(
        &self,
        phase: Phase,
        limit: Duration,
        fut: F,
    ) -> Result<F::Output, Error> {
        let phase_end = Instant::now() + limit;
        let (end, phase, limit) = if phase_end < self.end {
            (phase_end, phase, limit)
        } else {
            (self.end, Phase::Total, self.total)
        };
        tokio::time::timeout_at(end, fut)
            .await
            .map_err(|_| Error::Timeout { phase, limit })
    }

    async fn sleep_until(&self, at: Instant) -> Result<(), Error> {
        if at > self.end {
            tokio::time::sleep_until(self.end).await;
            return Err(Error::Timeout {
                phase: Phase::Total,
                limit: self.total,
            });
        }
        tokio::time::sleep_until(at).await;
        Ok(())
    }
}

trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

fn is_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}

/// What one exchange on one connection produced.
struct Exchange {
    head: http::response::Parts,
    body: hyper::body::Incoming,
    sender: Sender,
    peer: SocketAddr,
}

impl Fetcher {
    /// A fetcher for this door, with the system resolver.
    pub fn new(door: DoorConfig) -> Self {
        Fetcher::builder(door).build()
    }

    /// A builder for this door.
    pub fn builder(door: DoorConfig) -> FetcherBuilder {
        FetcherBuilder {
            door,
            resolver: Arc::new(SystemResolver),
            roots: RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            },
            #[cfg(feature = "test-hooks")]
            on_dial: None,
            #[cfg(feature = "test-hooks")]
            pretend_public: Vec::new(),
        }
    }

    /// The door's configuration.
    pub fn door(&self) -> &DoorConfig {
        &self.inner.door
    }

    /// Idle keep-alive connections held by this door.
    pub fn idle_connections(&self) -> usize {
        self.inner.pool.idle_count()
    }

    /// Vet a URL as [`Fetcher::send`] does before anything else (step 1: scheme, credentials,
    /// local names, a literal address by the table, the deny and allow lists), without
    /// resolving, connecting or sending anything. `Ok` does not mean a request would succeed:
    /// a host name is judged again by its resolved addresses at connect time.
    pub fn vet(&self, url: &str) -> Result<(), Error> {
        self.inner.policy.vet_url(parse_url(url)?).map(|_| ())
    }

    /// GET a URL.
    pub async fn get(&self, url: &str) -> Result<Response, Error> {
        self.send(Request::get(url)).await
    }

    /// POST a body to a URL with this content type.
    pub async fn post(
        &self,
        url: &str,
        content_type: HeaderValue,
        body: impl Into<Bytes>,
    ) -> Result<Response, Error> {
        self.send(Request::post(url, body).header(header::CONTENT_TYPE, content_type))
            .await
    }

    /// Send a request through the door: vet, rate-limit, resolve, vet every answer, connect
    /// to a vetted address, re-check the peer, TLS, HTTP/1.1; follow redirects by W-6.
    ///
    /// Any status comes back as `Ok` (see [`Response::error_for_status`]); redirects are
    /// followed, except on a door that allows private addresses, where a redirect is an
    /// error. The response head must arrive within the headers deadline; the body is read
    /// by the caller within the total deadline.
    pub async fn send(&self, req: Request) -> Result<Response, Error> {
        let door = &self.inner.door;
        let clock = Clock::start(req.timeout.unwrap_or(door.timeouts.total));
        if req.method == Method::CONNECT {
            return Err(Error::Refused(Refusal::Method {
                method: req.method.to_string(),
            }));
        }
        let max_redirects = door.max_redirects.min(MAX_REDIRECTS);
        let mut url = parse_url(&req.url)?;
        let mut method = req.method;
        let mut headers = req.headers;
        let mut body = req.body;
        let follow = req.follow_redirects;
        let mut hops = 0u8;
        loop {
            let target = self.inner.policy.vet_url(url)?;
            if let Some(slot) = self.inner.rate.reserve(&target.host.as_key()) {
                clock.sleep_until(slot).await?;
            }
            let ex = self
                .exchange(&target, &method, &headers, &body, &clock)
                .await?;
            let status = ex.head.status;
            let location = ex.head.headers.get(header::LOCATION);
            if let (true, true, Some(location)) = (follow, is_redirect(status), location) {
                if door.allow_private {
                    return Err(Error::Refused(Refusal::RedirectOnPrivateDoor));
                }
                if hops >= max_redirects {
                    return Err(Error::Refused(Refusal::TooManyRedirects {
                        max: max_redirects,
                    }));
                }
                let location = location
                    .to_str()
                    .map_err(|_| Error::http("redirect Location is not visible ASCII"))?;
                let next = target
                    .url
                    .join(location)
                    .map_err(|e| Error::http(format!("redirect Location {location:?}: {e}")))?;
                hops += 1;
                let to_get = match status {
                    StatusCode::SEE_OTHER => method != Method::HEAD,
                    StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND => method == Method::POST,
                    _ => false,
                };
                if to_get {
                    method = Method::GET;
                    body = Bytes::new();
                    headers.remove(header::CONTENT_TYPE);
                    headers.remove(header::CONTENT_ENCODING);
                }
                if next.origin() != target.url.origin() {
                    headers.retain_only(&CROSS_ORIGIN_KEEP);
                }
                url = next;
                continue;
            }
            return self.respond(target, ex, hops, &method, &clock);
        }
    }

    fn respond(
        &self,
        target: Target,
        ex: Exchange,
        redirects: u8,
        method: &Method,
        clock: &Clock,
    ) -> Result<Response, Error> {
        let limit = self.inner.door.max_body;
        let head = ex.head;
        let gzip = match head.headers.get(header::CONTENT_ENCODING) {
            None => false,
            Some(v) => {
                let v = v.to_str().unwrap_or("").trim().to_ascii_lowercase();
                match v.as_str() {
                    "" | "identity" => false,
                    "gzip" | "x-gzip" => true,
                    other => {
                        return Err(Error::http(format!(
                            "unsupported Content-Encoding {other:?} (only gzip was offered)"
                        )))
                    }
                }
            }
        };
        // HEAD, 1xx, 204 and 304 have no body, whatever Content-Length says (a 304 may
        // announce the size of the resource it did not send).
        let bodiless = *method == Method::HEAD
            || head.status.is_informational()
            || head.status == StatusCode::NO_CONTENT
            || head.status == StatusCode::NOT_MODIFIED;
        if !bodiless {
            if let Some(len) = head.headers.get(header::CONTENT_LENGTH) {
                let len = len
                    .to_str()
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .ok_or_else(|| Error::http("Content-Length is not a number"))?;
                if len > limit {
                    return Err(Error::TooLarge { limit });
                }
            }
        }
        let keep_alive = head.version == Version::HTTP_11
            && !head.headers.get_all(header::CONNECTION).iter().any(|v| {
                v.to_str()
                    .is_ok_and(|s| s.to_ascii_lowercase().contains("close"))
            });
        let release = keep_alive.then(|| Release {
            pool: Arc::clone(&self.inner.pool),
            origin: target.origin(),
            sender: ex.sender,
            peer: ex.peer,
        });
        Ok(Response {
            status: head.status,
            headers: head.headers,
            url: target.url,
            remote_addr: ex.peer,
            redirects,
            body: Body::new(ex.body, gzip, limit, clock.end, clock.total, release),
        })
    }

    /// One request and its response head, on a pooled connection or a fresh one.
    async fn exchange(
        &self,
        target: &Target,
        method: &Method,
        headers: &HeaderMap,
        body: &Bytes,
        clock: &Clock,
    ) -> Result<Exchange, Error> {
        let limits = self.inner.door.timeouts;
        let origin = target.origin();
        while let Some((mut sender, peer)) = self.inner.pool.take(&origin) {
            if clock
                .phase(Phase::Headers, limits.headers, sender.ready())
                .await?
                .is_err()
            {
                continue;
            }
            let req = build_request(target, method, headers, body)?;
            let sent = clock
                .phase(Phase::Headers, limits.headers, sender.try_send_request(req))
                .await?;
            match sent {
                Ok(resp) => return Ok(split(resp, sender, peer)),
                // Not written at all: try another connection.
                Err(e) if e.message().is_some() => continue,
                // Written, then the server closed the idle connection before answering: only a
                // request that may be repeated is sent again. A POST (a JSON-RPC call that may
                // write) is never sent twice.
                Err(e) if e.error().is_incomplete_message() && is_idempotent(method) => continue,
                Err(e) => return Err(Error::http(e.error().to_string())),
            }
        }
        let (mut sender, peer) = self.dial(target, clock).await?;
        let req = build_request(target, method, headers, body)?;
        let resp = clock
            .phase(Phase::Headers, limits.headers, sender.send_request(req))
            .await?
            .map_err(|e| Error::http(e.to_string()))?;
        Ok(split(resp, sender, peer))
    }

    /// Resolve, vet every answer, connect to a vetted address, re-check the peer, TLS, and
    /// the HTTP/1.1 handshake.
    async fn dial(&self, target: &Target, clock: &Clock) -> Result<(Sender, SocketAddr), Error> {
        let limits = self.inner.door.timeouts;
        let tcp = self.open_tcp(&target.host, target.port, clock).await?;
        let peer = tcp.1;
        let io: Box<dyn Io> = match target.scheme {
            Scheme::Http => Box::new(tcp.0),
            Scheme::Https => {
                let tls = self.inner.tls.clone().map_err(|reason| Error::Tls {
                    host: target.host.as_key(),
                    reason,
                })?;
                let name = match &target.host {
                    TargetHost::Addr(ip) => ServerName::IpAddress((*ip).into()),
                    TargetHost::Name(n) => {
                        ServerName::try_from(n.clone()).map_err(|e| Error::Tls {
                            host: n.clone(),
                            reason: e.to_string(),
                        })?
                    }
                };
                let stream = clock
                    .phase(
                        Phase::Tls,
                        limits.tls,
                        tokio_rustls::TlsConnector::from(tls).connect(name, tcp.0),
                    )
                    .await?
                    .map_err(|e| Error::Tls {
                        host: target.host.as_key(),
                        reason: e.to_string(),
                    })?;
                Box::new(stream)
            }
        };
        let (sender, conn) = clock
            .phase(
                Phase::Headers,
                limits.headers,
                hyper::client::conn::http1::Builder::new()
                    .max_buf_size(MAX_BUF)
                    .max_headers(MAX_HEADERS)
                    .handshake::<_, Full<Bytes>>(TokioIo::new(io)),
            )
            .await?
            .map_err(|e| Error::http(e.to_string()))?;
        // The connection task ends when the connection closes: when the server closes it, on
        // an error, or once every sender (the pool's and the response's) is dropped.
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended");
            }
        });
        Ok((sender, peer))
    }

    /// A raw TCP connection to `host:port` through the door's guard, for a relay that speaks
    /// for someone else (Maven's proxy for sandboxed servers): the host is vetted as the host
    /// of an http URL would be (no `localhost`, a literal address by the table, the door's
    /// deny and allow lists), a name is resolved by the door's resolver and refused if **any**
    /// answer is forbidden, only vetted addresses are dialled, and the connected peer is
    /// checked again. Returns the stream and the peer's (canonical) address.
    ///
    /// `host` is a name, an IPv4 literal, or an IPv6 literal with or without brackets. The
    /// door's resolve and connect deadlines apply (and its total one over both); its rate
    /// limit does not (a relay does not know what its connections carry). Errors are the
    /// same as [`Fetcher::send`]'s: [`Error::Refused`] for a policy refusal (nothing was
    /// dialled unless the refusal is [`crate::Refusal::Peer`]), [`Error::Dns`],
    /// [`Error::Connect`], [`Error::Timeout`], and [`Error::InvalidUrl`] for a host that does
    /// not parse or port 0.
    pub async fn connect_tcp(
        &self,
        host: &str,
        port: u16,
    ) -> Result<(TcpStream, SocketAddr), Error> {
        if port == 0 {
            return Err(Error::InvalidUrl {
                reason: format!("port 0 of {host:?}"),
            });
        }
        let host = self.inner.policy.vet_bare_host(host)?;
        let clock = Clock::start(self.inner.door.timeouts.total);
        self.open_tcp(&host, port, &clock).await
    }

    /// Resolve a vetted host, vet every answer, connect to a vetted address and re-check the
    /// peer: the TCP half of every dial.
    async fn open_tcp(
        &self,
        host: &TargetHost,
        port: u16,
        clock: &Clock,
    ) -> Result<(TcpStream, SocketAddr), Error> {
        let limits = self.inner.door.timeouts;
        let policy = &self.inner.policy;
        let addrs: Vec<IpAddr> = match host {
            TargetHost::Addr(ip) => vec![*ip],
            TargetHost::Name(name) => {
                let answers = clock
                    .phase(
                        Phase::Resolve,
                        limits.resolve,
                        self.inner.resolver.resolve(name),
                    )
                    .await?
                    .map_err(|e| Error::Dns {
                        host: name.clone(),
                        reason: e.to_string(),
                    })?;
                if answers.is_empty() {
                    return Err(Error::Dns {
                        host: name.clone(),
                        reason: "no addresses".to_string(),
                    });
                }
                let mut vetted = Vec::with_capacity(answers.len());
                for ip in answers {
                    let ip = policy.vet_addr(host, ip).map_err(Error::Refused)?;
                    if !vetted.contains(&ip) {
                        vetted.push(ip);
                    }
                }
                vetted
            }
        };
        clock
            .phase(
                Phase::Connect,
                limits.connect,
                self.connect_any(host, port, &addrs),
            )
            .await?
    }

    /// Connect to the first vetted address that accepts, and re-check the connected peer.
    async fn connect_any(
        &self,
        host: &TargetHost,
        port: u16,
        addrs: &[IpAddr],
    ) -> Result<(TcpStream, SocketAddr), Error> {
        let mut last = None;
        for ip in addrs {
            let addr = SocketAddr::new(*ip, port);
            #[cfg(feature = "test-hooks")]
            if let Some(hook) = &self.inner.on_dial {
                hook(addr);
            }
            #[expect(
                clippy::disallowed_methods,
                reason = "webfetch is the one place that opens outbound sockets, to vetted addresses only"
            )]
            let connected = TcpStream::connect(addr).await;
            match connected {
                Ok(stream) => {
                    let peer = stream.peer_addr().map_err(|e| Error::Connect {
                        addr,
                        reason: e.to_string(),
                    })?;
                    let canonical = SocketAddr::new(crate::addr::canonical(peer.ip()), peer.port());
                    if canonical != addr {
                        return Err(Error::Refused(Refusal::Peer { vetted: addr, peer }));
                    }
                    self.inner
                        .policy
                        .vet_addr(host, canonical.ip())
                        .map_err(Error::Refused)?;
                    // Best effort: latency matters more than packet count here.
                    let _ = stream.set_nodelay(true);
                    return Ok((stream, canonical));
                }
                Err(e) => last = Some((addr, e)),
            }
        }
        Err(match last {
            Some((addr, e)) => Error::Connect {
                addr,
                reason: e.to_string(),
            },
            None => Error::Dns {
                host: host.as_key(),
                reason: "no addresses".to_string(),
            },
        })
    }
}

fn split(
    resp: http::Response<hyper::body::Incoming>,
    sender: Sender,
    peer: SocketAddr,
) -> Exchange {
    let (head, body) = resp.into_parts();
    Exchange {
        head,
        body,
        sender,
        peer,
    }
}

trait RetainOnly {
    fn retain_only(&mut self, keep: &[header::HeaderName]);
}

impl RetainOnly for HeaderMap {
    fn retain_only(&mut self, keep: &[header::HeaderName]) {
        let drop: Vec<header::HeaderName> =
            self.keys().filter(|k| !keep.contains(k)).cloned().collect();
        for name in drop {
            self.remove(name);
        }
    }
}

fn build_request(
    target: &Target,
    method: &Method,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<http::Request<Full<Bytes>>, Error> {
    let uri: http::Uri = target
        .path_and_query()
        .parse()
        .map_err(|e| Error::InvalidUrl {
            reason: format!("{}: {e}", target.url),
        })?;
    let host = HeaderValue::from_str(&target.host_header()).map_err(|e| Error::InvalidUrl {
        reason: format!("{}: {e}", target.url),
    })?;
    let mut req = http::Request::new(Full::new(body.clone()));
    *req.method_mut() = method.clone();
    *req.uri_mut() = uri;
    *req.version_mut() = Version::HTTP_11;
    let h = req.headers_mut();
    h.reserve(headers.len() + 4);
    h.insert(header::HOST, host);
    for (name, value) in headers {
        if !OWNED.contains(name) {
            h.append(name.clone(), value.clone());
        }
    }
    h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
    if !h.contains_key(header::USER_AGENT) {
        h.insert(
            header::USER_AGENT,
            HeaderValue::from_static(concat!("maven-webfetch/", env!("CARGO_PKG_VERSION"))),
        );
    }
    Ok(req)
}

/// Methods that may be sent again when a reused connection died before answering (RFC 9110
/// §9.2.2).
fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::PUT | Method::DELETE
    )
}
