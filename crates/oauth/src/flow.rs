//! The authorization code flow: discovery, registration, the authorization URL with PKCE, and
//! the callback checked and its code redeemed.

use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use webfetch::HeaderMap;

use crate::error::cut;
use crate::tokens::{parse_tokens, secret_method};
use crate::{
    discovery, random_b64, AuthError, Challenge, Credentials, Discovered, DpopKey, DpopMode, OAuth,
    Pending, Registration, ServerMetadata, REGISTER, TOKEN,
};

impl OAuth {
    pub(crate) async fn authorize_with(
        &self,
        challenge: &Challenge,
        scopes: Option<Vec<String>>,
    ) -> Result<(), AuthError> {
        let agent = self.agent.clone().ok_or(AuthError::NoUserAgent)?;
        let pending = self.begin_with(challenge, scopes).await?;
        let callback = agent.authorize(pending.url.clone()).await?;
        self.complete(pending, &callback).await
    }

    /// Begin an authorization: discovery, registration (reused for the same issuer), the
    /// authorization URL with PKCE S256, `state`, `resource` and the scopes. Refused for a
    /// server whose grant needs no person.
    pub async fn begin(&self, challenge: &Challenge) -> Result<Pending, AuthError> {
        if !self.grant.needs_owner() {
            return Err(AuthError::Grant(format!(
                "oauth.grant is \"{}\": this server needs no one to authorize it; Maven obtains its tokens by itself when it connects",
                self.grant.as_str()
            )));
        }
        self.begin_with(challenge, None).await
    }

    /// Whether the tokens of this authorization are bound to a DPoP key.
    pub(crate) fn uses_dpop(&self, d: &Discovered) -> bool {
        match self.dpop_mode {
            DpopMode::Never => false,
            DpopMode::Auto => d.server.dpop_es256() && d.resource_speaks_dpop(),
            DpopMode::Required => d.server.dpop_es256(),
        }
    }

    /// With `oauth.dpop` "required": refused unless both ends can (before anything is
    /// shown or asked).
    pub(crate) fn dpop_possible(&self, d: &Discovered) -> Result<(), AuthError> {
        if self.dpop_mode == DpopMode::Required {
            if !d.server.dpop_es256() {
                return Err(AuthError::DpopUnavailable(format!(
                    "the authorization server {} does not offer DPoP with ES256",
                    cut(&d.server.issuer)
                )));
            }
            if !d.resource_speaks_dpop() {
                return Err(AuthError::DpopUnavailable(format!(
                    "the MCP server {} does not say it takes DPoP-bound tokens (neither its protected resource metadata nor its challenge)",
                    cut(&self.config.resource_url)
                )));
            }
        }
        Ok(())
    }

    async fn begin_with(
        &self,
        challenge: &Challenge,
        scopes: Option<Vec<String>>,
    ) -> Result<Pending, AuthError> {
        let d = discovery::discover(&self.net, &self.config.resource_url, challenge).await;
        self.st().discovered = Some(d.clone());
        let d = d?;
        self.dpop_possible(&d)?;
        let resource = d.resource_indicator(&self.config.resource_url);
        let issuer = d.server.issuer.clone();
        // Credentials are bound to their issuer: another issuer means another registration.
        let known = self
            .store
            .load(&self.config.server)
            .await?
            .into_iter()
            .find(|c| c.issuer == issuer);
        let registration = match known {
            // Reused while it is the one configured (the same redirect URI, and the same
            // pre-registered client, if one is).
            Some(c)
                if c.registration.redirect_uri == self.config.redirect_uri
                    && self
                        .config
                        .client_id
                        .as_ref()
                        .is_none_or(|id| *id == c.registration.client_id) =>
            {
                c.registration
            }
            _ => self.register(&d.server).await?,
        };
        let mut scopes = match scopes {
            Some(s) => s,
            None => d
                .challenge_scope
                .clone()
                .filter(|s| !s.is_empty())
                .or_else(|| d.resource.as_ref().and_then(|r| r.scopes_supported.clone()))
                .unwrap_or_default(),
        };
        if !scopes.is_empty()
            && d.server
                .scopes_supported
                .as_ref()
                .is_some_and(|s| s.iter().any(|x| x == "offline_access"))
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".to_owned());
        }
        // OpenID Connect Core §11: an OpenID provider grants offline_access only with
        // prompt=consent (else it must drop it, and no refresh token comes).
        let consent = d.server.openid && scopes.iter().any(|s| s == "offline_access");
        let verifier = random_b64(32);
        let code_challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = random_b64(16);
        let mut url =
            url::Url::parse(&d.server.authorization_endpoint).map_err(|e| AuthError::Endpoint {
                what: "authorization endpoint",
                url: cut(&d.server.authorization_endpoint),
                reason: e.to_string(),
            })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &registration.client_id)
                .append_pair("redirect_uri", &registration.redirect_uri)
                .append_pair("code_challenge", &code_challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &resource);
            if !scopes.is_empty() {
                q.append_pair("scope", &scopes.join(" "));
            }
            if consent {
                q.append_pair("prompt", "consent");
            }
        }
        self.st().requested = scopes.clone();
        Ok(Pending {
            url: url.to_string(),
            state,
            verifier,
            scopes,
            discovered: d,
            registration,
            resource,
        })
    }

    /// Complete an authorization with the callback URL the authorization server redirected
    /// to: `state` checked, `iss` checked against the recorded issuer, then the code
    /// redeemed and the tokens kept.
    pub async fn complete(&self, pending: Pending, callback: &str) -> Result<(), AuthError> {
        self.load().await?;
        let cb = url::Url::parse(callback).map_err(|e| AuthError::Malformed {
            what: "callback",
            reason: e.to_string(),
        })?;
        let param = |k: &str| {
            cb.query_pairs()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.into_owned())
        };
        if param("state").as_deref() != Some(pending.state.as_str()) {
            return Err(AuthError::StateMismatch);
        }
        let server = &pending.discovered.server;
        // RFC 9207: an `iss` must be the recorded issuer (simple string comparison), and must
        // be there when the AS says it sends one. Checked before anything else is believed.
        match param("iss") {
            Some(iss) if iss != server.issuer => {
                return Err(AuthError::IssMismatch {
                    expected: cut(&server.issuer),
                    found: Some(cut(&iss)),
                })
            }
            None if server.iss_parameter_supported => {
                return Err(AuthError::IssMismatch {
                    expected: cut(&server.issuer),
                    found: None,
                })
            }
            _ => {}
        }
        if let Some(e) = param("error") {
            let e = AuthError::Declined { error: cut(&e) };
            tracing::warn!(server = %self.config.server, issuer = %cut(&server.issuer), error = %e, "the authorization was declined");
            return Err(e);
        }
        let code = param("code").ok_or_else(|| AuthError::Malformed {
            what: "callback",
            reason: "no code".to_owned(),
        })?;
        let _flow = self.flow.lock().await;
        let reg = &pending.registration;
        let body = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", reg.redirect_uri.as_str()),
            ("code_verifier", pending.verifier.as_str()),
            ("resource", pending.resource.as_str()),
        ];
        let dpop = if self.uses_dpop(&pending.discovered) {
            let kept = self.st().dpop.clone();
            Some(match kept {
                Some(k) => k,
                None => Arc::new(DpopKey::generate()?),
            })
        } else {
            None
        };
        let mut reg = reg.clone();
        let answer = self
            .authenticated_token_request(
                TOKEN,
                &server.token_endpoint,
                &server.issuer,
                &body,
                &mut reg,
                dpop.as_deref(),
            )
            .await
            .inspect_err(|e| {
                tracing::warn!(server = %self.config.server, issuer = %cut(&server.issuer), error = %e, "the code was not redeemed");
            })?;
        let tokens = parse_tokens(&answer, &pending.scopes, None, dpop.is_some())?;
        if tokens.refresh_token.is_none() {
            tracing::warn!(
                server = %self.config.server,
                issuer = %cut(&server.issuer),
                expires_at = ?tokens.expires_at,
                "the authorization server gave no refresh token: the owner is asked to authorize again when the access token expires"
            );
        }
        let creds = Credentials {
            issuer: server.issuer.clone(),
            token_endpoint: server.token_endpoint.clone(),
            revocation_endpoint: server.revocation_endpoint.clone(),
            resource: pending.resource.clone(),
            registration: reg,
            tokens: Some(tokens),
            dpop_key: dpop.as_ref().map(|k| k.pkcs8().to_vec()),
        };
        if !self.read_only {
            self.store.save(&self.config.server, &creds).await?;
        }
        let mut st = self.st();
        st.dpop = dpop;
        st.current = Some(creds);
        st.lost = None;
        Ok(())
    }

    /// How Maven would register with this authorization server: `pre-registered`,
    /// `client-metadata-document`, `dynamic`, or `none` (no way: configure
    /// `oauth.client_id`); with a grant that needs no person, the configured client and the
    /// grant by name (`pre-registered, grant client_credentials`).
    pub fn registration_method(&self, server: &ServerMetadata) -> &'static str {
        match (&self.grant, self.config.client_id.is_some()) {
            (crate::Grant::AuthorizationCode, _) => {}
            (crate::Grant::ClientCredentials, true) => {
                return "pre-registered, grant client_credentials"
            }
            (crate::Grant::Enterprise(_), true) => return "pre-registered, grant enterprise",
            (crate::Grant::JwtBearer(_), true) => return "pre-registered, grant jwt_bearer",
            (crate::Grant::JwtBearer(_), false) => return "grant jwt_bearer",
            (_, false) => return "none",
        }
        if self.config.client_id.is_some() {
            "pre-registered"
        } else if self.config.client_metadata_url.is_some() && server.cimd_supported {
            "client-metadata-document"
        } else if server.registration_endpoint.is_some() {
            "dynamic"
        } else {
            "none"
        }
    }

    async fn register(&self, server: &ServerMetadata) -> Result<Registration, AuthError> {
        let redirect_uri = self.config.redirect_uri.clone();
        if let Some(id) = &self.config.client_id {
            let auth_method = match &self.config.client_secret {
                Some(_) => secret_method(&server.token_endpoint_auth_methods),
                None => "none".to_owned(),
            };
            return Ok(Registration {
                client_id: id.clone(),
                client_secret: self.config.client_secret.clone(),
                auth_method,
                redirect_uri,
                method: "pre-registered".to_owned(),
                basic_with_client_id: false,
            });
        }
        if let (Some(url), true) = (&self.config.client_metadata_url, server.cimd_supported) {
            return Ok(Registration {
                client_id: url.clone(),
                client_secret: None,
                auth_method: "none".to_owned(),
                redirect_uri,
                method: "client-metadata-document".to_owned(),
                basic_with_client_id: false,
            });
        }
        let Some(endpoint) = &server.registration_endpoint else {
            return Err(AuthError::NoRegistration {
                issuer: cut(&server.issuer),
            });
        };
        let supported = &server.token_endpoint_auth_methods;
        // A public client (PKCE) where the server takes one; else a secret, the way the server
        // prefers.
        let wanted = if supported.iter().any(|m| m == "none") {
            "none".to_owned()
        } else if supported
            .iter()
            .any(|m| m == "client_secret_basic" || m == "client_secret_post")
        {
            secret_method(supported)
        } else {
            "none".to_owned()
        };
        let request = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted,
            "application_type": "native",
        });
        let a = self
            .net
            .post(
                REGISTER,
                endpoint,
                request.to_string().into_bytes(),
                true,
                HeaderMap::new(),
            )
            .await?;
        if !a.status.is_success() {
            let e = a.oauth_error(REGISTER);
            tracing::warn!(server = %self.config.server, issuer = %cut(&server.issuer), error = %e, "client registration refused");
            return Err(e);
        }
        let v = a.json(REGISTER)?;
        let client_id = v
            .get("client_id")
            .and_then(|s| s.as_str())
            .filter(|s| !s.is_empty() && s.len() <= 1024)
            .ok_or_else(|| AuthError::Malformed {
                what: REGISTER,
                reason: "no client_id".to_owned(),
            })?
            .to_owned();
        let client_secret = v
            .get("client_secret")
            .and_then(|s| s.as_str())
            .filter(|s| s.len() <= 4096)
            .map(str::to_owned);
        let auth_method = match v.get("token_endpoint_auth_method").and_then(|s| s.as_str()) {
            Some(m @ ("none" | "client_secret_basic" | "client_secret_post")) => m.to_owned(),
            Some(other) => {
                return Err(AuthError::Malformed {
                    what: REGISTER,
                    reason: format!(
                        "token_endpoint_auth_method {:?} is not supported",
                        cut(other)
                    ),
                })
            }
            None if client_secret.is_some() => secret_method(supported),
            None => "none".to_owned(),
        };
        Ok(Registration {
            client_id,
            client_secret,
            auth_method,
            redirect_uri,
            method: "dynamic".to_owned(),
            basic_with_client_id: false,
        })
    }
}
