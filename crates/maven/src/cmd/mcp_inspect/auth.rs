//! Who holds a server's authorization and what its discovery found, as `inspect` reports it.

use serde::Serialize;
use shown::line;

use wire::views::{AuthState, AuthView};

/// The `"state"` of `"auth"`: its JSON is [`AuthWord::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AuthWord {
    Authorized,
    NeedsAuthorization,
    NotAsked,
    Refused,
    /// A kept token that expired (inspect never refreshes it).
    Expired,
}

impl Serialize for AuthWord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl AuthWord {
    /// The word of the JSON and of the text.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            AuthWord::Authorized => "authorized",
            AuthWord::NeedsAuthorization => "needs authorization",
            AuthWord::NotAsked => "not asked",
            AuthWord::Refused => "refused",
            AuthWord::Expired => "expired: the daemon refreshes it",
        }
    }
}

/// `"auth"`: a server's authorization as inspect found it. No secret is in it.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum AuthReport {
    /// What the running daemon said it holds.
    Daemon {
        state: AuthWord,
        held_by: &'static str,
        scopes: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        issuer: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        expires_at: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        refresh: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The grant that needs no person its tokens come by, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        grant: Option<String>,
    },
    /// An authorization kept in the store, read with no daemon running.
    Store {
        state: AuthWord,
        issuer: String,
        scopes: Vec<String>,
        expires_at: Option<u64>,
        refresh: bool,
        held_by: &'static str,
    },
    /// No usable authorization: why, and what the discovery found.
    Missing {
        state: AuthWord,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(flatten)]
        found: Option<Found>,
    },
}

/// What inspect found of a server with no usable authorization.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Found {
    /// A kept token that expired, which the daemon refreshes.
    Expired { issuer: String, expires_at: u64 },
    /// The discovery's findings.
    Discovered {
        #[serde(skip_serializing_if = "Option::is_none")]
        resource_metadata_url: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        resource: Option<String>,
        issuer: String,
        server_metadata_url: Option<String>,
        scopes: Vec<String>,
        registration: &'static str,
        dpop: bool,
    },
}

/// Every field of an [`AuthReport`] the text report shows, whichever kind it is.
#[derive(Default)]
struct Facts<'a> {
    state: Option<AuthWord>,
    held_by: Option<&'a str>,
    reason: Option<&'a str>,
    error: Option<&'a str>,
    resource_metadata_url: Option<&'a str>,
    resource: Option<&'a str>,
    server_metadata_url: Option<&'a str>,
    registration: Option<&'a str>,
    grant: Option<&'a str>,
    issuer: Option<&'a str>,
    scopes: Option<&'a [String]>,
}

/// The facts with a state (every report has one).
pub(super) struct Said<'a> {
    pub(super) state: AuthWord,
    pub(super) error: Option<&'a str>,
    pub(super) reason: Option<&'a str>,
}

impl AuthReport {
    fn state(&self) -> AuthWord {
        match self {
            AuthReport::Daemon { state, .. }
            | AuthReport::Store { state, .. }
            | AuthReport::Missing { state, .. } => *state,
        }
    }

    pub(super) fn facts(&self) -> Said<'_> {
        let f = self.fields();
        Said {
            state: self.state(),
            error: f.error,
            reason: f.reason,
        }
    }

    fn fields(&self) -> Facts<'_> {
        match self {
            AuthReport::Daemon {
                state,
                held_by,
                scopes,
                issuer,
                reason,
                grant,
                ..
            } => Facts {
                state: Some(*state),
                held_by: Some(held_by),
                scopes: Some(scopes),
                issuer: issuer.as_deref(),
                reason: reason.as_deref(),
                grant: grant.as_deref(),
                ..Facts::default()
            },
            AuthReport::Store {
                state,
                issuer,
                scopes,
                held_by,
                ..
            } => Facts {
                state: Some(*state),
                held_by: Some(held_by),
                scopes: Some(scopes),
                issuer: Some(issuer),
                ..Facts::default()
            },
            AuthReport::Missing {
                state,
                error,
                reason,
                found,
            } => {
                let mut f = Facts {
                    state: Some(*state),
                    error: error.as_deref(),
                    reason: reason.as_deref(),
                    ..Facts::default()
                };
                match found {
                    Some(Found::Expired { issuer, .. }) => f.issuer = Some(issuer),
                    Some(Found::Discovered {
                        resource_metadata_url,
                        resource,
                        issuer,
                        server_metadata_url,
                        scopes,
                        registration,
                        ..
                    }) => {
                        f.resource_metadata_url = resource_metadata_url.as_deref();
                        f.resource = resource.as_deref();
                        f.issuer = Some(issuer);
                        f.server_metadata_url = server_metadata_url.as_deref();
                        f.scopes = Some(scopes);
                        f.registration = Some(registration);
                    }
                    None => {}
                }
                f
            }
        }
    }
}

/// Whether the running daemon holds a usable authorization of the server.
pub(super) fn authorized(d: &Result<AuthView, String>) -> bool {
    matches!(
        d,
        Ok(AuthView {
            state: AuthState::Authorized,
            ..
        })
    )
}

/// What the running daemon said of the server's authorization, as `"auth"` shows it.
pub(super) fn daemon_report(d: &AuthView) -> AuthReport {
    AuthReport::Daemon {
        state: match d.state {
            AuthState::Authorized => AuthWord::Authorized,
            AuthState::NeedsAuthorization => AuthWord::NeedsAuthorization,
            AuthState::NotAsked => AuthWord::NotAsked,
        },
        held_by: "the running daemon",
        scopes: d.scopes.clone(),
        issuer: d.issuer.clone(),
        expires_at: d.expires_at,
        refresh: d.refresh,
        reason: d.reason.clone(),
        grant: d.grant.clone(),
    }
}

/// What the discovery found (or why it refused), for `"auth"`. No secret is in it.
pub(super) async fn auth_report(
    oauth: &::oauth::OAuth,
    error: &::oauth::AuthError,
    daemon: Option<&Result<AuthView, String>>,
) -> AuthReport {
    let refused = *error != ::oauth::AuthError::NeedsAuthorization;
    let mut state = if refused {
        AuthWord::Refused
    } else {
        AuthWord::NeedsAuthorization
    };
    let mut error = refused.then(|| error.to_string());
    let reason = match daemon {
        Some(Ok(d)) => d.reason.clone(),
        Some(Err(e)) => Some(format!("the running daemon could not say: {e}")),
        None => oauth.needs_authorization(),
    };
    // A kept token that expired: the daemon refreshes it; inspect never does.
    if let (
        None,
        ::oauth::AuthStatus::Authorized {
            expires_at: Some(e),
            refresh: true,
            issuer,
            ..
        },
    ) = (daemon, oauth.status_now())
    {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if e <= now && !refused {
            return AuthReport::Missing {
                state: AuthWord::Expired,
                error,
                reason,
                found: Some(Found::Expired {
                    issuer,
                    expires_at: e,
                }),
            };
        }
    }
    let found = match oauth.last_discovery().await {
        Some(Ok(d)) => Some(Found::Discovered {
            resource_metadata_url: d.resource.as_ref().map(|r| r.url.clone()),
            resource: d.resource.as_ref().map(|r| r.resource.clone()),
            issuer: d.server.issuer.clone(),
            server_metadata_url: d.server.url.clone(),
            scopes: d
                .challenge_scope
                .clone()
                .or_else(|| d.resource.as_ref().and_then(|r| r.scopes_supported.clone()))
                .unwrap_or_default(),
            registration: oauth.registration_method(&d.server),
            dpop: d.server.dpop_es256(),
        }),
        Some(Err(e)) => {
            state = AuthWord::Refused;
            error = Some(e.to_string());
            None
        }
        None => None,
    };
    AuthReport::Missing {
        state,
        error,
        reason,
        found,
    }
}

pub(super) fn auth_text(name: &str, auth: &AuthReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let f = auth.fields();
    fn field(v: Option<&str>) -> Option<std::borrow::Cow<'_, str>> {
        v.map(line)
    }
    let authorized = f.state == Some(AuthWord::Authorized);
    match f.state {
        Some(AuthWord::Authorized) => {
            let _ = writeln!(
                s,
                "auth:      authorized by {}",
                field(f.issuer).unwrap_or_default()
            );
        }
        Some(state) => {
            let _ = writeln!(s, "server:    {}", line(name));
            let _ = writeln!(s, "auth:      {}", state.as_str());
        }
        None => {}
    }
    for (v, label) in [
        (f.held_by, "held by"),
        (f.grant, "grant"),
        (f.reason, "reason"),
        (f.error, "error"),
        (f.resource_metadata_url, "resource metadata"),
        (f.resource, "resource"),
        (f.server_metadata_url, "AS metadata"),
        (f.registration, "registration"),
    ] {
        if let Some(v) = field(v) {
            let _ = writeln!(s, "  {label}: {v}");
        }
    }
    if !authorized {
        if let Some(v) = field(f.issuer) {
            let _ = writeln!(s, "  issuer: {v}");
        }
    }
    if let Some(scopes) = f.scopes {
        let list: Vec<String> = scopes.iter().map(|x| line(x).into_owned()).collect();
        let _ = writeln!(
            s,
            "  scopes: {}",
            if list.is_empty() {
                "(none asked)".to_owned()
            } else {
                list.join(" ")
            }
        );
    }
    s
}
