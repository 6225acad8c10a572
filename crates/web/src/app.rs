//! The page's state: its sessions and step-up rules ([`Web`]), and what the router shares
//! ([`App`]): that state and the page's [`Host`].

use crate::error::Code;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use config::{Secret, WebConfig};

use webauthn_rs::{Webauthn, WebauthnBuilder};

use super::error::AppError;
use super::host::Host;
use super::session::{self, Clock, Sessions};
use wire::views::EnrollLink;

/// The CSRF header every POST carries.
pub(super) const CSRF_HEADER: &str = "x-csrf-token";
/// The relying-party id of passkeys: WebAuthn treats `http://localhost` as a secure context.
pub(super) const RP_ID: &str = "localhost";

/// The page's own state: sessions, enrollment links, the step-up rules.
pub struct Web {
    pub(super) addr: SocketAddr,
    pub(super) hosts: Vec<String>,
    pub(super) origins: Vec<String>,
    pub(super) cookie: String,
    pub(super) passphrase_hash: Option<Secret>,
    pub(super) sessions: Sessions,
    pub(super) webauthn: Webauthn,
    pub(super) clock: Arc<dyn Clock>,
    /// The connection limits and counters of the page's server.
    pub(crate) limits: Arc<super::limits::Limits>,
    /// The passphrase step-up's gate: one verification at a time, the failure budget, the lock.
    pub(super) gate: super::gate::Gate,
    /// OAuth login links and the authorizations waiting for their callback.
    pub(super) oauth: super::flows::Flows,
    /// How long a step-up keeps its session signed in (`web.session_hours`).
    pub(super) session_for: std::time::Duration,
    /// The owner's uid, when the page checks the uid of every peer (a loopback address);
    /// `None` beyond loopback, where a peer's uid cannot be known.
    pub(crate) uid_check: Option<u32>,
    /// Connections of other users refused, for the log.
    pub(super) refusals: super::limits::Refusals,
}

/// What the accept loop knows of a connection, on each of its requests.
#[derive(Debug, Clone, Copy, Default)]
pub struct Conn {
    /// The peer's uid (checked to be the owner's) on loopback; `None` beyond it.
    pub uid: Option<u32>,
    /// It holds one of the slots kept for signed-in sessions.
    pub reserved: bool,
}

/// The peer uid of a request's connection, when known.
pub(super) fn peer_of(conn: Option<axum::Extension<Conn>>) -> Option<u32> {
    conn.and_then(|c| c.0.uid)
}

impl std::fmt::Debug for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Web").field("addr", &self.addr).finish()
    }
}

/// A name a Host header may carry, normalised: lowercase, one trailing dot removed.
fn normal_host(h: &str) -> String {
    let h = h.strip_suffix('.').unwrap_or(h);
    h.to_ascii_lowercase()
}

impl Web {
    /// The page's state for a server listening on `addr` (the address actually bound).
    pub fn new(
        cfg: &WebConfig,
        addr: SocketAddr,
        clock: Arc<dyn Clock>,
        limits: super::limits::Limits,
    ) -> anyhow::Result<Web> {
        let port = addr.port();
        let ip = match addr.ip() {
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
            v4 => v4.to_string(),
        };
        let mut hosts: Vec<String> = cfg.hosts.iter().map(|h| normal_host(h)).collect();
        hosts.push(ip.clone());
        hosts.push(RP_ID.to_owned());
        hosts.sort();
        hosts.dedup();
        let origins = hosts.iter().map(|h| format!("http://{h}:{port}")).collect();
        let rp_origin = url::Url::parse(&format!("http://{RP_ID}:{port}"))
            .context("the page's WebAuthn origin")?;
        let webauthn = WebauthnBuilder::new(RP_ID, &rp_origin)
            .and_then(|b| b.rp_name("Maven").build())
            .map_err(|e| anyhow::anyhow!("cannot set up WebAuthn for {rp_origin}: {e}"))?;
        Ok(Web {
            addr,
            hosts,
            origins,
            cookie: format!("maven_session_{port}"),
            passphrase_hash: cfg.passphrase_hash.clone(),
            sessions: Sessions::new(cfg.session.max(session::SESSION_IDLE)),
            webauthn,
            clock,
            gate: super::gate::Gate::default(),
            oauth: super::flows::Flows::default(),
            limits: Arc::new(limits),
            session_for: cfg.session,
            uid_check: addr.ip().is_loopback().then(::gate::owner_uid),
            refusals: super::limits::Refusals::default(),
        })
    }

    /// The owner's uid, when the page checks the uid of every peer (a loopback address).
    pub fn uid_check(&self) -> Option<u32> {
        self.uid_check
    }

    /// The address the page is bound to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address as the owner opens it (`localhost`, where passkeys work).
    pub(crate) fn base_url(&self) -> String {
        format!("http://{RP_ID}:{}", self.addr.port())
    }

    /// The page's OAuth callback, where authorization servers send the owner back: the
    /// address bound, as a loopback IP literal (RFC 8252 §7.3).
    pub(crate) fn callback_url(&self) -> String {
        format!("http://{}/oauth/callback", self.addr)
    }

    /// Makes a one-time link that starts the authorization of `server`, valid ten minutes
    /// (the `mcp_login` IPC method).
    pub fn oauth_link(&self, server: &str) -> wire::views::OAuthLink {
        let token = self.oauth.new_link(server, self.clock.now());
        wire::views::OAuthLink {
            url: format!("{}/oauth/login#{token}", self.base_url()),
            valid_s: super::flows::VALID.as_secs(),
        }
    }

    /// The page's limits and counters, for `maven status`.
    pub fn status(&self) -> wire::views::WebStatusView {
        use std::sync::atomic::Ordering;
        let now = self.clock.now();
        let gate = self.gate.status(now);
        wire::views::WebStatusView {
            listening: wire::views::PageListening::Listening {
                addr: self.addr.to_string(),
            },
            url: format!("{}/tools", self.base_url()),
            connections: self.limits.open.load(Ordering::Relaxed),
            max_connections: self.limits.max_connections,
            connections_refused: self.limits.refused.load(Ordering::Relaxed),
            header_deadline_s: self.limits.header_deadline.as_secs(),
            request_deadline_s: self.limits.request_deadline.as_secs(),
            sessions: self.sessions.len(),
            passphrase_verifications: gate.verifications,
            passphrase_attempts_refused: gate.refused,
            passphrase_locked_for_s: gate.locked_for_s,
            peer_uid_check: match self.uid_check {
                Some(uid) => format!("applies: only processes of uid {uid} are served"),
                None => format!(
                    "does not apply: web.listen {} is not a loopback address, so any peer that reaches it may open a session",
                    self.addr
                ),
            },
            connections_refused_other_uid: self.limits.other_uid_refused.load(Ordering::Relaxed),
            reserved_connections: self.limits.reserved,
            session_hours: self.session_for.as_secs() / 3600,
        }
    }

    /// Makes a one-time enrollment link valid for ten minutes (the `web_enroll` IPC method).
    pub fn enroll_link(&self) -> EnrollLink {
        let token = self.sessions.new_enrollment(self.clock.now());
        EnrollLink {
            url: format!("{}/enroll#{token}", self.base_url()),
            valid_s: session::ENROLL_VALID.as_secs(),
        }
    }

    pub(super) fn host_ok(&self, host: &str) -> bool {
        let (name, port) = if let Some(rest) = host.strip_prefix('[') {
            match rest.split_once(']') {
                Some((inner, tail)) => (format!("[{inner}]"), tail.strip_prefix(':')),
                None => return false,
            }
        } else {
            match host.split_once(':') {
                Some((n, p)) => (n.to_owned(), Some(p)),
                None => (host.to_owned(), None),
            }
        };
        let port_ok = match port {
            Some(p) => p.parse::<u16>().ok() == Some(self.addr.port()),
            None => self.addr.port() == 80,
        };
        port_ok && self.hosts.contains(&normal_host(&name))
    }

    pub(super) fn origin_ok(&self, origin: &str) -> bool {
        let o = origin.to_ascii_lowercase();
        self.origins.contains(&o)
            || (self.addr.port() == 80 && self.hosts.iter().any(|h| o == format!("http://{h}")))
    }

    /// The session cookie's value in these headers, if any.
    pub(super) fn cookie_of(&self, headers: &HeaderMap) -> Option<String> {
        let prefix = format!("{}=", self.cookie);
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .map(str::trim)
            .find_map(|c| c.strip_prefix(prefix.as_str()))
            .map(str::to_owned)
    }

    pub(super) fn set_cookie(&self, value: &str) -> HeaderValue {
        // The value is hex, so the header is always valid ASCII.
        HeaderValue::from_str(&format!(
            "{}={value}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie
        ))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// The live session of these headers, or a new one for a peer of uid `peer` (with the
    /// `Set-Cookie` to send); 429 `too_many_sessions` when no new one may be made now.
    pub(super) fn ensure_session(
        &self,
        headers: &HeaderMap,
        peer: Option<u32>,
    ) -> Result<(String, Option<HeaderValue>), AppError> {
        let now = self.clock.now();
        if let Some(c) = self.cookie_of(headers) {
            if self.sessions.with(&c, now, |_| ()).is_some() {
                return Ok((c, None));
            }
        }
        let c = self.sessions.create(now, peer).map_err(|e| {
            tracing::debug!("web: a new session was refused: {e}");
            AppError::new(
                StatusCode::TOO_MANY_REQUESTS,
                Code::TooManySessions,
                e.to_string(),
            )
        })?;
        let set = self.set_cookie(&c);
        Ok((c, Some(set)))
    }

    /// How much longer the session of `cookie` stays signed in: its last step-up (or the
    /// enrollment made in it) is younger than `web.session_hours`. `None`: not signed in (or no such session).
    pub(super) fn signed_in_for(&self, cookie: &str) -> Option<std::time::Duration> {
        let now = self.clock.now();
        let at = self.sessions.with(cookie, now, |s| s.signed_in_at())??;
        self.session_for
            .checked_sub(now.saturating_duration_since(at))
            .filter(|left| !left.is_zero())
    }

    /// The cookie of a signed-in session in these headers, or 401 `sign_in_required`: every
    /// route that shows the owner's data asks for it.
    pub(super) fn signed_in(&self, headers: &HeaderMap) -> Result<String, AppError> {
        self.cookie_of(headers)
            .filter(|c| self.signed_in_for(c).is_some())
            .ok_or_else(|| {
                AppError::new(
                    StatusCode::UNAUTHORIZED,
                    Code::SignInRequired,
                    format!(
                        "sign in first: verify with your passkey (or the configured passphrase); a sign-in lasts {} hours",
                        self.session_for.as_secs() / 3600
                    ),
                )
            })
    }

    /// The fresh step-up of a session, or the refusal to send.
    pub(super) fn fresh_step_up(&self, cookie: &str) -> Result<stepup::StepUp, AppError> {
        let now = self.clock.now();
        let step = self
            .sessions
            .with(cookie, now, |s| s.step_up.clone())
            .ok_or_else(no_session)?;
        match step {
            None => Err(AppError::new(
                StatusCode::UNAUTHORIZED,
                Code::StepUpRequired,
                "enabling or disabling an act needs a step-up: verify with your passkey (or the configured passphrase)",
            )),
            Some(s) if now.saturating_duration_since(s.at()) > session::STEP_UP_FRESH => {
                Err(AppError::new(
                    StatusCode::UNAUTHORIZED,
                    Code::StepUpStale,
                    "the last step-up is more than 5 minutes old: verify again",
                ))
            }
            Some(s) => Ok(s),
        }
    }
}

pub(super) fn no_session() -> AppError {
    AppError::new(
        StatusCode::UNAUTHORIZED,
        Code::NoSession,
        "no session: open the page first (GET /tools or GET /api/session)",
    )
}

/// The session cookie a guarded POST came with (put there by [`post_guard`]).
#[derive(Clone)]
pub(super) struct SessionCookie(pub(super) String);

/// The router's shared state: the page's own, and its host.
#[derive(Clone)]
pub struct App {
    pub(super) web: Arc<Web>,
    pub(super) host: Arc<dyn Host>,
}

impl App {
    /// The router's state for the page `web` served for `host`.
    pub fn new(web: Arc<Web>, host: Arc<dyn Host>) -> App {
        App { web, host }
    }
}
