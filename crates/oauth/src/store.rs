//! What is kept per (server, issuer), and the small trait that keeps it: memory for the
//! conformance client and tests, the daemon's store for the daemon.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::error::AuthError;

/// A client registration with one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, if any.
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint: `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt` (an assertion signed by its key) or `none`.
    pub auth_method: String,
    /// The redirect URI registered.
    pub redirect_uri: String,
    /// How it was obtained: `pre-registered`, `client-metadata-document`, `dynamic`.
    pub method: String,
    /// With `client_secret_basic`: the authorization server answered a token request that
    /// authenticated by Basic alone that it wants `client_id` in the body as well (the Python
    /// SDK's server does), so it is sent there too from then on. Learned from its answer,
    /// never assumed.
    #[serde(default)]
    pub basic_with_client_id: bool,
}

/// Tokens from one authorization server.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The access token.
    pub access_token: String,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// The refresh token, if any.
    pub refresh_token: Option<String>,
    /// When the access token expires (Unix seconds), if said.
    pub expires_at: Option<u64>,
    /// Its lifetime as given (`expires_in`), which sets how early it is refreshed.
    #[serde(default)]
    pub lifetime: Option<u64>,
    /// The scopes granted (or requested, when the answer did not say).
    pub scopes: Vec<String>,
}

/// Everything kept for one (server, issuer).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// The authorization server.
    pub issuer: String,
    /// Its token endpoint (to refresh without discovery).
    pub token_endpoint: String,
    /// Its revocation endpoint, if offered.
    pub revocation_endpoint: Option<String>,
    /// The `resource` parameter used.
    pub resource: String,
    /// The registration.
    pub registration: Registration,
    /// The tokens, once authorized.
    pub tokens: Option<Tokens>,
    /// The DPoP key (PKCS#8), when the tokens are bound to one.
    #[serde(default, with = "opt_b64")]
    pub dpop_key: Option<Vec<u8>>,
}

// Secrets never reach a log through Debug.
impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("auth_method", &self.auth_method)
            .field("method", &self.method)
            .field("basic_with_client_id", &self.basic_with_client_id)
            .finish()
    }
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"***")
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "***"))
            .field("expires_at", &self.expires_at)
            .field("lifetime", &self.lifetime)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("issuer", &self.issuer)
            .field("registration", &self.registration)
            .field("tokens", &self.tokens)
            .field("dpop_key", &self.dpop_key.as_ref().map(|_| "***"))
            .finish()
    }
}

mod opt_b64 {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_some(&STANDARD.encode(b)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        let v: Option<String> = Option::deserialize(d)?;
        v.map(|s| STANDARD.decode(s).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// What a [`CredentialStore`] method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuthError>> + Send + 'a>>;

/// Keeps credentials per (server, issuer). `save` replaces the row of that pair in one step
/// (a crash leaves the old row or the new one, never neither and never two).
pub trait CredentialStore: Send + Sync {
    /// Every issuer's credentials for a server.
    fn load<'a>(&'a self, server: &'a str) -> StoreFuture<'a, Vec<Credentials>>;
    /// Keep these credentials for (server, `creds.issuer`), replacing what was there.
    fn save<'a>(&'a self, server: &'a str, creds: &'a Credentials) -> StoreFuture<'a, ()>;
    /// Forget everything kept for a server.
    fn forget<'a>(&'a self, server: &'a str) -> StoreFuture<'a, ()>;
}

/// Credentials in memory only.
#[derive(Debug, Default)]
pub struct MemoryStore {
    rows: Mutex<BTreeMap<(String, String), Credentials>>,
}

impl CredentialStore for MemoryStore {
    fn load<'a>(&'a self, server: &'a str) -> StoreFuture<'a, Vec<Credentials>> {
        let rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        let out = rows
            .iter()
            .filter(|((s, _), _)| s == server)
            .map(|(_, c)| c.clone())
            .collect();
        Box::pin(std::future::ready(Ok(out)))
    }

    fn save<'a>(&'a self, server: &'a str, creds: &'a Credentials) -> StoreFuture<'a, ()> {
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        rows.insert((server.to_owned(), creds.issuer.clone()), creds.clone());
        Box::pin(std::future::ready(Ok(())))
    }

    fn forget<'a>(&'a self, server: &'a str) -> StoreFuture<'a, ()> {
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        rows.retain(|(s, _), _| s != server);
        Box::pin(std::future::ready(Ok(())))
    }
}
