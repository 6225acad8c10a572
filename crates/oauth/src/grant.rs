//! The grants that need no person (the block's `oauth.grant`): `client_credentials` (a
//! secret, or a `private_key_jwt` assertion, RFC 7523 §2.2), the enterprise-managed flow
//! (an ID token exchanged at the identity provider for an ID-JAG, RFC 8693, then presented
//! as an RFC 7523 jwt-bearer grant), and a workload's own token as a jwt-bearer grant. Each
//! runs where the authorization code flow would ask the owner: on the server's 401, through
//! the same door, its tokens kept as the code flow's are. A refusal is the error, never a
//! reason to try another grant. No token, assertion or key is logged.

use std::path::PathBuf;
use std::sync::Arc;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, RsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING, RSA_PKCS1_SHA256,
};

use crate::error::cut;
use crate::tokens::{parse_tokens, secret_method};
use crate::{
    discovery, now, random_b64, AuthError, Challenge, Credentials, Discovered, OAuth, Registration,
    TOKEN,
};

/// `grant_type` of RFC 7523's JWT bearer grant.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of RFC 8693's token exchange.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The ID-JAG token type (the enterprise-managed authorization extension).
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The ID token type of RFC 8693.
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// `client_assertion_type` of RFC 7523 §2.2.
pub(crate) const CLIENT_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long a client assertion Maven signs is valid.
const ASSERTION_LIFETIME: u64 = 60;
/// Largest token file read (a workload token, an ID token).
pub(crate) const TOKEN_FILE_CAP: u64 = 64 * 1024;
/// Largest private key file read.
pub(crate) const KEY_FILE_CAP: u64 = 64 * 1024;

const EXCHANGE: &str = "token exchange";

/// Where a token given to Maven (a workload's token, the owner's ID token) comes from.
#[derive(Clone)]
pub enum TokenSource {
    /// A file, read at each use (so a token rotated on disk is the one sent).
    File(PathBuf),
    /// This value (the conformance client's, handed to it by the suite).
    Value(String),
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenSource::File(p) => f.debug_tuple("File").field(p).finish(),
            TokenSource::Value(_) => f.write_str("Value(***)"),
        }
    }
}

impl TokenSource {
    /// The token now: the file read again (bounded, one line of visible ASCII).
    pub fn read(&self, what: &'static str) -> Result<String, AuthError> {
        let text = match self {
            TokenSource::Value(v) => v.clone(),
            TokenSource::File(p) => read_small(p, TOKEN_FILE_CAP).map_err(|reason| {
                AuthError::Grant(format!("{what} file {}: {reason}", p.display()))
            })?,
        };
        let t = text.trim();
        if t.is_empty()
            || t.len() > crate::MAX_TOKEN
            || !t.bytes().all(|b| (0x21..=0x7e).contains(&b))
        {
            return Err(AuthError::Grant(format!(
                "the {what} is empty, longer than {} KiB or not one token of visible ASCII",
                crate::MAX_TOKEN / 1024
            )));
        }
        Ok(t.to_owned())
    }
}

fn read_small(p: &std::path::Path, cap: u64) -> Result<String, String> {
    use std::io::Read as _;
    let f = std::fs::File::open(p).map_err(|e| e.to_string())?;
    let mut out = String::new();
    f.take(cap + 1)
        .read_to_string(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() as u64 > cap {
        return Err(format!("larger than {} KiB", cap / 1024));
    }
    Ok(out)
}

/// The identity provider of the enterprise-managed flow.
#[derive(Debug, Clone)]
pub struct Enterprise {
    /// Its token endpoint, where the ID token is exchanged for an ID-JAG.
    pub token_endpoint: String,
    /// The client Maven is at the identity provider.
    pub client_id: String,
    /// Its secret there, if it has one (then `client_secret_basic`).
    pub client_secret: Option<String>,
    /// The owner's ID token from the identity provider.
    pub id_token: TokenSource,
}

/// How this server's tokens are obtained (`oauth.grant`).
#[derive(Debug, Clone, Default)]
pub enum Grant {
    /// The owner authorizes on the authorization server's page (the code flow with PKCE).
    #[default]
    AuthorizationCode,
    /// The client's own credentials (`client_credentials`): its secret, or its private key.
    ClientCredentials,
    /// Enterprise-managed: token exchange at the identity provider, then jwt-bearer.
    Enterprise(Enterprise),
    /// A workload's token presented as a jwt-bearer grant.
    JwtBearer(TokenSource),
}

impl Grant {
    /// Its word in the configuration (`oauth.grant`), as `mcp status` shows it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::Enterprise(_) => "enterprise",
            Grant::JwtBearer(_) => "jwt_bearer",
        }
    }

    /// Whether it needs the owner (the code flow) or runs by itself.
    pub fn needs_owner(&self) -> bool {
        matches!(self, Grant::AuthorizationCode)
    }
}

/// A private key that signs the client's `private_key_jwt` assertions (RFC 7523 §2.2): PKCS#8
/// PEM, an EC P-256 key (ES256) or an RSA key of 2048 bits or more (RS256); `kid` as given.
pub struct ClientKey {
    signer: Signer,
    kid: Option<String>,
}

enum Signer {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientKey")
            .field("alg", &self.alg())
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl ClientKey {
    /// The key of a PKCS#8 PEM text (`-----BEGIN PRIVATE KEY-----`).
    pub fn from_pem(pem: &str, kid: Option<String>) -> Result<ClientKey, AuthError> {
        let bad = |r: &str| AuthError::Grant(format!("the private key is unusable: {r}"));
        let begin = "-----BEGIN PRIVATE KEY-----";
        let end = "-----END PRIVATE KEY-----";
        let start = pem
            .find(begin)
            .ok_or_else(|| bad("not a PKCS#8 PEM (BEGIN PRIVATE KEY)"))?;
        let rest = &pem[start + begin.len()..];
        let stop = rest.find(end).ok_or_else(|| bad("no END PRIVATE KEY"))?;
        let b64: String = rest[..stop]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = STANDARD.decode(b64).map_err(|_| bad("not base64"))?;
        let rng = SystemRandom::new();
        let signer = match EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng) {
            Ok(k) => Signer::Es256(k),
            Err(_) => match RsaKeyPair::from_pkcs8(&der) {
                Ok(k) => Signer::Rs256(k),
                Err(_) => {
                    return Err(bad(
                        "neither an EC P-256 key nor an RSA key of 2048 bits or more",
                    ))
                }
            },
        };
        Ok(ClientKey { signer, kid })
    }

    /// The key in a PEM file (bounded).
    pub fn from_file(path: &std::path::Path, kid: Option<String>) -> Result<ClientKey, AuthError> {
        let text = read_small(path, KEY_FILE_CAP).map_err(|reason| {
            AuthError::Grant(format!("private key file {}: {reason}", path.display()))
        })?;
        ClientKey::from_pem(&text, kid)
    }

    /// `alg` of its signatures.
    pub fn alg(&self) -> &'static str {
        match self.signer {
            Signer::Es256(_) => "ES256",
            Signer::Rs256(_) => "RS256",
        }
    }

    /// A signed JWT of these claims.
    fn sign(&self, claims: &serde_json::Value) -> Result<String, AuthError> {
        let mut header = serde_json::json!({"alg": self.alg(), "typ": "JWT"});
        if let Some(kid) = &self.kid {
            header["kid"] = kid.clone().into();
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let failed = || AuthError::Grant("cannot sign the client assertion".to_owned());
        let sig = match &self.signer {
            Signer::Es256(k) => k
                .sign(&rng, input.as_bytes())
                .map_err(|_| failed())?
                .as_ref()
                .to_vec(),
            Signer::Rs256(k) => {
                let mut sig = vec![0u8; k.public().modulus_len()];
                k.sign(&RSA_PKCS1_SHA256, &rng, input.as_bytes(), &mut sig)
                    .map_err(|_| failed())?;
                sig
            }
        };
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }

    /// A client assertion (RFC 7523 §2.2, §3): `iss` and `sub` the client, `aud` the
    /// authorization server's issuer, a fresh `jti`, valid for a minute.
    pub fn assertion(&self, client_id: &str, audience: &str) -> Result<String, AuthError> {
        let iat = now();
        self.sign(&serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": random_b64(16),
            "iat": iat,
            "exp": iat + ASSERTION_LIFETIME,
        }))
    }
}

impl OAuth {
    /// The grant this server's tokens come by.
    pub fn grant(&self) -> &Grant {
        &self.grant
    }

    /// Obtain tokens by the configured grant that needs no person: discovery, then the grant
    /// (for `enterprise`, the token exchange at the identity provider first). The tokens are
    /// kept as the code flow's are. The caller holds `flow`.
    pub(crate) async fn obtain(&self, challenge: &Challenge) -> Result<(), AuthError> {
        let d = discovery::discover(&self.net, &self.config.resource_url, challenge).await;
        self.st().discovered = Some(d.clone());
        let d = d?;
        let result = self.grant_request(&d).await;
        match result {
            Ok(creds) => {
                if !self.read_only {
                    self.store.save(&self.config.server, &creds).await?;
                }
                tracing::info!(server = %self.config.server, issuer = %cut(&creds.issuer), grant = self.grant.as_str(), "tokens obtained");
                let mut st = self.st();
                st.current = Some(creds);
                st.lost = None;
                Ok(())
            }
            Err(e) => {
                tracing::warn!(server = %self.config.server, issuer = %cut(&d.server.issuer), grant = self.grant.as_str(), error = %e, "the grant was refused");
                self.st().lost = Some(format!("the {} grant failed: {e}", self.grant.as_str()));
                Err(e)
            }
        }
    }

    /// The scopes asked: the challenge's, else the protected resource metadata's.
    fn grant_scopes(d: &Discovered) -> Vec<String> {
        d.challenge_scope
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| d.resource.as_ref().and_then(|r| r.scopes_supported.clone()))
            .unwrap_or_default()
    }

    /// The client's registration at this authorization server for a grant without a person:
    /// the configured client (a secret by the server's method, or a private key), else a
    /// public client of that id.
    fn machine_registration(&self, d: &Discovered) -> Result<Registration, AuthError> {
        let client_id = self.config.client_id.clone().ok_or_else(|| {
            AuthError::Grant(format!(
                "the {} grant needs oauth.client_id",
                self.grant.as_str()
            ))
        })?;
        let auth_method = if self.client_key.is_some() {
            "private_key_jwt".to_owned()
        } else if self.config.client_secret.is_some() {
            secret_method(&d.server.token_endpoint_auth_methods)
        } else {
            "none".to_owned()
        };
        Ok(Registration {
            client_id,
            client_secret: self.config.client_secret.clone(),
            auth_method,
            redirect_uri: self.config.redirect_uri.clone(),
            method: "pre-registered".to_owned(),
            basic_with_client_id: false,
        })
    }

    async fn grant_request(&self, d: &Discovered) -> Result<Credentials, AuthError> {
        let resource = d.resource_indicator(&self.config.resource_url);
        let scopes = Self::grant_scopes(d);
        let scope = scopes.join(" ");
        let server = &d.server;
        let mut reg = self.machine_registration(d)?;
        let assertion = match &self.grant {
            Grant::AuthorizationCode => return Err(AuthError::NeedsAuthorization),
            Grant::ClientCredentials => None,
            Grant::JwtBearer(source) => Some(source.read("workload token")?),
            Grant::Enterprise(idp) => Some(
                self.id_jag(idp, server.issuer.as_str(), &resource, &scope)
                    .await?,
            ),
        };
        let grant_type = match assertion {
            None => "client_credentials",
            Some(_) => JWT_BEARER,
        };
        let mut body: Vec<(&str, &str)> = vec![("grant_type", grant_type)];
        if let Some(a) = &assertion {
            body.push(("assertion", a.as_str()));
        }
        body.push(("resource", resource.as_str()));
        if !scope.is_empty() {
            body.push(("scope", scope.as_str()));
        }
        let v = self
            .authenticated_token_request(
                TOKEN,
                &server.token_endpoint,
                &server.issuer,
                &body,
                &mut reg,
                None,
            )
            .await?;
        let tokens = parse_tokens(&v, &scopes, None, false)?;
        Ok(Credentials {
            issuer: server.issuer.clone(),
            token_endpoint: server.token_endpoint.clone(),
            revocation_endpoint: server.revocation_endpoint.clone(),
            resource,
            registration: reg,
            tokens: Some(tokens),
            dpop_key: None,
        })
    }

    /// The ID token exchanged at the identity provider for an ID-JAG for this authorization
    /// server and resource (RFC 8693; the enterprise-managed authorization extension).
    async fn id_jag(
        &self,
        idp: &Enterprise,
        audience: &str,
        resource: &str,
        scope: &str,
    ) -> Result<String, AuthError> {
        let id_token = idp.id_token.read("ID token")?;
        let mut body: Vec<(&str, &str)> = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("audience", audience),
            ("resource", resource),
            ("subject_token", id_token.as_str()),
            ("subject_token_type", ID_TOKEN),
        ];
        if !scope.is_empty() {
            body.push(("scope", scope));
        }
        let mut reg = Registration {
            client_id: idp.client_id.clone(),
            client_secret: idp.client_secret.clone(),
            auth_method: if idp.client_secret.is_some() {
                "client_secret_basic".to_owned()
            } else {
                "none".to_owned()
            },
            redirect_uri: String::new(),
            method: "pre-registered".to_owned(),
            basic_with_client_id: false,
        };
        let v = self
            .authenticated_token_request(EXCHANGE, &idp.token_endpoint, "", &body, &mut reg, None)
            .await?;
        let issued = v.get("issued_token_type").and_then(|s| s.as_str());
        if issued != Some(ID_JAG) {
            return Err(AuthError::Malformed {
                what: EXCHANGE,
                reason: format!(
                    "issued_token_type is {:?}, not {ID_JAG}",
                    issued.map(cut).unwrap_or_default()
                ),
            });
        }
        let jag = v
            .get("access_token")
            .and_then(|s| s.as_str())
            .filter(|t| {
                !t.is_empty()
                    && t.len() <= crate::MAX_TOKEN
                    && t.bytes().all(|b| (0x21..=0x7e).contains(&b))
            })
            .ok_or_else(|| AuthError::Malformed {
                what: EXCHANGE,
                reason: "no usable access_token (the ID-JAG)".to_owned(),
            })?;
        Ok(jag.to_owned())
    }

    /// The client's key for `private_key_jwt`, if one is configured.
    pub(crate) fn client_key(&self) -> Option<&Arc<ClientKey>> {
        self.client_key.as_ref()
    }
}
