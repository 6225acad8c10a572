//! The grants that need no person (the block's `oauth.grant`): `client_credentials` (a
//! secret, or a `private_key_jwt` assertion, RFC 7523 §2.2), the enterprise-managed flow
//! (an ID token exchanged at the identity provider for an ID-JAG, RFC 8693, then presented
//! as an RFC 7523 jwt-bearer grant), and a workload's own token as a jwt-bearer grant. Each
//! runs where the authorization code flow would ask the owner: on the server's 401, through
//! the same door, its tokens kept as the code flow's are. A refusal is the error, never a
//! reason to try another grant. No token, assertion or key is logged.

use std::sync::Arc;

use crate::error::cut;
use crate::grant::{
    ClientKey, Enterprise, Grant, KeySource, ID_JAG, ID_TOKEN, JWT_BEARER, TOKEN_EXCHANGE,
};
use crate::tokens::{parse_tokens, secret_method};
use crate::{
    discovery, AuthError, Challenge, Credentials, Discovered, DpopKey, OAuth, Registration, TOKEN,
};

const EXCHANGE: &str = "token exchange";

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
            Ok((creds, dpop)) => {
                if !self.read_only {
                    self.store.save(&self.config.server, &creds).await?;
                }
                tracing::info!(server = %self.config.server, issuer = %cut(&creds.issuer), grant = self.grant.as_str(), dpop = dpop.is_some(), "tokens obtained");
                let mut st = self.st();
                st.dpop = dpop;
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
        // A workload's jwt-bearer grant may need no client (RFC 7523 §3.1): its assertion
        // says who it is.
        let client_id = match (&self.config.client_id, &self.grant) {
            (Some(id), _) => id.clone(),
            (None, Grant::JwtBearer(_)) => String::new(),
            (None, _) => {
                return Err(AuthError::Grant(format!(
                    "the {} grant needs oauth.client_id",
                    self.grant.as_str()
                )))
            }
        };
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

    async fn grant_request(
        &self,
        d: &Discovered,
    ) -> Result<(Credentials, Option<Arc<DpopKey>>), AuthError> {
        let resource = d.resource_indicator(&self.config.resource_url);
        let scopes = Self::grant_scopes(d);
        let scope = scopes.join(" ");
        let server = &d.server;
        let mut reg = self.machine_registration(d)?;
        self.dpop_possible(d)?;
        // Bound to a DPoP key where both ends speak it, as the code flow's tokens are.
        let dpop = if self.uses_dpop(d) {
            let kept = self.st().dpop.clone();
            Some(match kept {
                Some(k) => k,
                None => Arc::new(DpopKey::generate()?),
            })
        } else {
            None
        };
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
                dpop.as_deref(),
            )
            .await?;
        let tokens = parse_tokens(&v, &scopes, None, dpop.is_some())?;
        let creds = Credentials {
            issuer: server.issuer.clone(),
            token_endpoint: server.token_endpoint.clone(),
            revocation_endpoint: server.revocation_endpoint.clone(),
            resource,
            registration: reg,
            tokens: Some(tokens),
            dpop_key: dpop.as_ref().map(|k| k.pkcs8().to_vec()),
        };
        Ok((creds, dpop))
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

    /// The client's key for `private_key_jwt`, if one is configured (a key file is read at
    /// each use: a key replaced on disk is the one that signs).
    pub(crate) fn client_key(&self) -> Result<Option<Arc<ClientKey>>, AuthError> {
        match &self.client_key {
            None => Ok(None),
            Some(KeySource::Loaded(k)) => Ok(Some(k.clone())),
            Some(KeySource::File { path, kid }) => {
                ClientKey::from_file(path, kid.clone()).map(|k| Some(Arc::new(k)))
            }
        }
    }
}
