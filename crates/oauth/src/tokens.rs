//! Requests to the token and revocation endpoints, the client's authentication at them, and
//! the token answer checked.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use webfetch::{header, HeaderMap, HeaderName};

use crate::error::cut;
use crate::grant::CLIENT_ASSERTION_TYPE;
use crate::{
    form, now, refused_by_server, sensitive, AuthError, ClientKey, DpopKey, OAuth, Registration,
    Tokens, MAX_EXPIRES_IN, MAX_TOKEN, REFRESH, REVOKE,
};

impl OAuth {
    /// POST to the token endpoint, with a DPoP proof when `dpop` (retried once with the
    /// AS's nonce on `use_dpop_nonce`). A non-2xx answer is its OAuth error.
    pub(crate) async fn token_request(
        &self,
        what: &'static str,
        endpoint: &str,
        body: &[(&str, &str)],
        extra: HeaderMap,
        dpop: Option<&DpopKey>,
    ) -> Result<serde_json::Value, AuthError> {
        let encoded = form(body);
        let mut tries = 0;
        loop {
            tries += 1;
            let mut h = extra.clone();
            if let Some(key) = dpop {
                let nonce = self.st().as_nonce.clone();
                let proof = key.proof("POST", endpoint, None, nonce.as_deref())?;
                h.insert(HeaderName::from_static("dpop"), sensitive(&proof)?);
            }
            let a = self
                .net
                .post(what, endpoint, encoded.clone(), false, h)
                .await?;
            if let Some(n) = a.headers.get("dpop-nonce").and_then(|v| v.to_str().ok()) {
                self.st().as_nonce = Some(cut(n));
            }
            if a.status.is_success() {
                return a.json(what);
            }
            let err = a.oauth_error(what);
            let nonce_asked =
                matches!(&err, AuthError::Refused { error, .. } if error == "use_dpop_nonce");
            if nonce_asked && dpop.is_some() && tries == 1 && a.headers.contains_key("dpop-nonce") {
                continue;
            }
            return Err(err);
        }
    }

    /// A token request (`body` without the client's authentication) that authenticates the
    /// client by its registration's one method (RFC 6749 §2.3.1; a `private_key_jwt`
    /// assertion's `aud` is `audience`, the authorization server's issuer). A `client_secret_basic`
    /// client whose Basic alone the server refuses as `invalid_client` saying it misses the
    /// `client_id` is asked again once with `client_id` in the body as well, and `reg`
    /// remembers it (the caller keeps it with the credentials).
    pub(crate) async fn authenticated_token_request(
        &self,
        what: &'static str,
        endpoint: &str,
        audience: &str,
        body: &[(&str, &str)],
        reg: &mut Registration,
        dpop: Option<&DpopKey>,
    ) -> Result<serde_json::Value, AuthError> {
        let key = match reg.auth_method.as_str() {
            "private_key_jwt" => self.client_key()?,
            _ => None,
        };
        let key = key.as_deref().map(|k| (k, audience));
        let send = |reg: Registration| async move {
            let (extra, auth_body) = client_auth(&reg, key)?;
            let mut full: Vec<(&str, &str)> = body.to_vec();
            full.extend(auth_body.iter().map(|(k, v)| (*k, v.as_str())));
            self.token_request(what, endpoint, &full, extra, dpop).await
        };
        match send(reg.clone()).await {
            Err(e)
                if reg.auth_method == "client_secret_basic"
                    && !reg.basic_with_client_id
                    && misses_client_id(&e) =>
            {
                tracing::info!(server = %self.config.server, error = %e, "the authorization server wants client_id in the body beside Basic: asked again with it, and so from now on");
                reg.basic_with_client_id = true;
                send(reg.clone()).await
            }
            other => other,
        }
    }

    /// Refresh the tokens in use; the new refresh token (rotation) replaces the old. A refusal
    /// by the authorization server forgets the tokens: the server needs authorization, and
    /// nothing retries by itself; a server that could not be reached leaves them for the next
    /// request. The caller holds `flow`.
    pub(crate) async fn refresh(&self) -> Result<(), AuthError> {
        let (creds, dpop) = {
            let st = self.st();
            let Some(creds) = st.current.clone() else {
                return Err(AuthError::NeedsAuthorization);
            };
            let dpop = st.dpop.clone().filter(|_| {
                creds
                    .tokens
                    .as_ref()
                    .is_some_and(|t| t.token_type.eq_ignore_ascii_case("dpop"))
            });
            (creds, dpop)
        };
        let Some(old) = creds.tokens.clone() else {
            return Err(AuthError::NeedsAuthorization);
        };
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Err(AuthError::NeedsAuthorization);
        };
        let body = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token.as_str()),
            ("resource", creds.resource.as_str()),
        ];
        let mut reg = creds.registration.clone();
        let result = async {
            self.net.check(REFRESH, &creds.token_endpoint)?;
            let v = self
                .authenticated_token_request(
                    REFRESH,
                    &creds.token_endpoint,
                    &creds.issuer,
                    &body,
                    &mut reg,
                    dpop.as_deref(),
                )
                .await?;
            parse_tokens(&v, &old.scopes, Some(&refresh_token), dpop.is_some())
        }
        .await;
        match result {
            Ok(tokens) => {
                let mut next = creds;
                next.tokens = Some(tokens);
                next.registration = reg;
                if !self.read_only {
                    self.store.save(&self.config.server, &next).await?;
                }
                tracing::debug!(server = %self.config.server, "tokens refreshed");
                let mut st = self.st();
                st.current = Some(next);
                st.lost = None;
                Ok(())
            }
            Err(e) if refused_by_server(&e) => {
                tracing::warn!(server = %self.config.server, issuer = %cut(&creds.issuer), error = %e, "token refresh refused; the server needs authorization");
                self.drop_tokens(format!("token refresh refused: {e}"))
                    .await;
                Err(e)
            }
            Err(e) => {
                tracing::warn!(server = %self.config.server, issuer = %cut(&creds.issuer), error = %e, "token refresh failed; the tokens are kept for the next try");
                Err(e)
            }
        }
    }

    /// Forget this server's credentials, revoking the tokens first where the authorization
    /// server offers revocation (best effort: a failure there still forgets, and is logged).
    pub async fn logout(&self) -> Result<(), AuthError> {
        let _ = self.load().await;
        let _flow = self.flow.lock().await;
        let taken = {
            let mut st = self.st();
            st.dpop = None;
            st.requested.clear();
            st.lost = Some("the credentials were forgotten by a logout".to_owned());
            st.current.take()
        };
        if let Some(c) = taken {
            if let (Some(endpoint), Some(t)) = (&c.revocation_endpoint, &c.tokens) {
                // A key that cannot be read now leaves the revocation unauthenticated (and
                // likely refused, logged); the credentials are forgotten all the same.
                let key = match c.registration.auth_method.as_str() {
                    "private_key_jwt" => self.client_key().ok().flatten(),
                    _ => None,
                };
                let key = key.as_deref().map(|k| (k, c.issuer.as_str()));
                let (extra, auth_body) = client_auth(&c.registration, key)?;
                for (token, hint) in [
                    (t.refresh_token.as_deref(), "refresh_token"),
                    (Some(t.access_token.as_str()), "access_token"),
                ] {
                    let Some(token) = token else { continue };
                    let mut body = vec![("token", token), ("token_type_hint", hint)];
                    body.extend(auth_body.iter().map(|(k, v)| (*k, v.as_str())));
                    let answer = self
                        .net
                        .post(REVOKE, endpoint, form(&body), false, extra.clone())
                        .await;
                    let failed = match answer {
                        Ok(a) if a.status.is_success() => None,
                        Ok(a) => Some(a.oauth_error(REVOKE)),
                        Err(e) => Some(e),
                    };
                    match failed {
                        None => {
                            tracing::info!(server = %self.config.server, %hint, "token revoked")
                        }
                        // RFC 7009 §2.2.1: the server does not revoke tokens of this kind (a
                        // self-contained JWT access token, which the refresh token's revocation
                        // ends with its grant).
                        Some(AuthError::Refused { error, .. })
                            if error == "unsupported_token_type" =>
                        {
                            tracing::info!(server = %self.config.server, %hint, "the authorization server does not revoke this kind of token (unsupported_token_type)")
                        }
                        Some(e) => {
                            tracing::warn!(server = %self.config.server, %hint, error = %e, "token revocation failed; the token is forgotten anyway")
                        }
                    }
                }
            }
        }
        if self.read_only {
            return Ok(());
        }
        self.store.forget(&self.config.server).await
    }
}

/// Whether a token endpoint refused a client's authentication for want of a `client_id` in
/// the body (`invalid_client`, "Missing client_id", as the Python SDK's server answers Basic
/// alone).
fn misses_client_id(e: &AuthError) -> bool {
    matches!(e, AuthError::Refused { error, description, .. }
        if error == "invalid_client"
            && description.as_deref().is_some_and(|d| d.to_ascii_lowercase().contains("client_id")))
}

/// How a client with a secret authenticates: the first of `client_secret_basic` and
/// `client_secret_post` in the authorization server's own list (its preference: a server may
/// take one of them fully and the other only at some endpoints), `client_secret_basic` (the
/// default of RFC 8414) when it lists neither.
pub(crate) fn secret_method(supported: &[String]) -> String {
    supported
        .iter()
        .find(|m| *m == "client_secret_basic" || *m == "client_secret_post")
        .cloned()
        .unwrap_or_else(|| "client_secret_basic".to_owned())
}

/// The client authentication of a token request: headers and body parameters.
/// Headers and body parameters of a client's authentication.
type ClientAuth = (HeaderMap, Vec<(&'static str, String)>);

/// With `private_key_jwt`, `key` is the client's key and the assertion's audience.
pub(crate) fn client_auth(
    reg: &Registration,
    key: Option<(&ClientKey, &str)>,
) -> Result<ClientAuth, AuthError> {
    let mut h = HeaderMap::new();
    let mut body = Vec::new();
    if let ("private_key_jwt", Some((key, audience))) = (reg.auth_method.as_str(), key) {
        // RFC 7523 §2.2: the assertion is the client's authentication; no secret beside it.
        body.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
        body.push(("client_assertion", key.assertion(&reg.client_id, audience)?));
        return Ok((h, body));
    }
    match (reg.auth_method.as_str(), &reg.client_secret) {
        ("client_secret_basic", Some(secret)) => {
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&reg.client_id), enc(secret));
            h.insert(
                header::AUTHORIZATION,
                sensitive(&format!("Basic {}", STANDARD.encode(pair)))?,
            );
            // One method per request (RFC 6749 §2.3.1): Basic alone — some servers refuse a
            // client_id in the body beside it ("multiple authentication methods") — unless
            // this server answered that it wants it there too.
            if reg.basic_with_client_id {
                body.push(("client_id", reg.client_id.clone()));
            }
        }
        ("client_secret_post", Some(secret)) => {
            body.push(("client_id", reg.client_id.clone()));
            body.push(("client_secret", secret.clone()));
        }
        // A client without an id (a workload's jwt-bearer grant) names none.
        _ if reg.client_id.is_empty() => {}
        _ => body.push(("client_id", reg.client_id.clone())),
    }
    Ok((h, body))
}

/// Check a token answer: a visible-ASCII access token, a known `token_type` (`DPoP` only
/// when a proof was sent), a sane `expires_in`.
pub(crate) fn parse_tokens(
    v: &serde_json::Value,
    requested: &[String],
    old_refresh: Option<&str>,
    dpop: bool,
) -> Result<Tokens, AuthError> {
    let bad = |s: String| AuthError::BadToken(s);
    let access_token = v
        .get("access_token")
        .and_then(|s| s.as_str())
        .ok_or_else(|| bad("no access_token".to_owned()))?;
    if access_token.is_empty()
        || access_token.len() > MAX_TOKEN
        || !access_token.bytes().all(|b| (0x21..=0x7e).contains(&b))
    {
        return Err(bad(
            "the access_token is empty, too long or not visible ASCII".to_owned(),
        ));
    }
    let token_type = v
        .get("token_type")
        .and_then(|s| s.as_str())
        .ok_or_else(|| bad("no token_type".to_owned()))?;
    let token_type = if token_type.eq_ignore_ascii_case("bearer") {
        "Bearer"
    } else if token_type.eq_ignore_ascii_case("dpop") && dpop {
        "DPoP"
    } else {
        return Err(bad(format!("unknown token_type {:?}", cut(token_type))));
    };
    let lifetime = match v.get("expires_in") {
        None | Some(serde_json::Value::Null) => None,
        Some(e) => Some(
            e.as_u64()
                .filter(|s| *s <= MAX_EXPIRES_IN)
                .ok_or_else(|| bad(format!("absurd expires_in {}", cut(&e.to_string()))))?,
        ),
    };
    let expires_at = lifetime.map(|secs| now().saturating_add(secs));
    let refresh_token = match v.get("refresh_token").and_then(|s| s.as_str()) {
        Some(r) if !r.is_empty() && r.len() <= MAX_TOKEN => Some(r.to_owned()),
        Some(_) => return Err(bad("the refresh_token is empty or too long".to_owned())),
        None => old_refresh.map(str::to_owned),
    };
    let scopes = v
        .get("scope")
        .and_then(|s| s.as_str())
        .map(|s| s.split_whitespace().take(256).map(str::to_owned).collect())
        .unwrap_or_else(|| requested.to_vec());
    Ok(Tokens {
        access_token: access_token.to_owned(),
        token_type: token_type.to_owned(),
        refresh_token,
        expires_at,
        lifetime,
        scopes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{due, refresh_margin};

    #[test]
    fn token_answers() {
        let ok = parse_tokens(
            &serde_json::json!({"access_token": "a", "token_type": "bearer", "expires_in": 60}),
            &["s".to_owned()],
            Some("r0"),
            false,
        )
        .expect("ok");
        assert_eq!(ok.token_type, "Bearer");
        assert_eq!(
            ok.refresh_token.as_deref(),
            Some("r0"),
            "kept when not rotated"
        );
        assert_eq!(ok.scopes, ["s"]);
        for (v, want) in [
            (
                serde_json::json!({"access_token": "a", "token_type": "mac"}),
                "unknown token_type",
            ),
            (
                serde_json::json!({"access_token": "a", "token_type": "DPoP"}),
                "unknown token_type",
            ),
            (
                serde_json::json!({"access_token": "a", "token_type": "Bearer", "expires_in": 1e12}),
                "absurd expires_in",
            ),
            (
                serde_json::json!({"access_token": "a", "token_type": "Bearer", "expires_in": -1}),
                "absurd expires_in",
            ),
            (
                serde_json::json!({"access_token": "a b", "token_type": "Bearer"}),
                "visible ASCII",
            ),
            (
                serde_json::json!({"token_type": "Bearer"}),
                "no access_token",
            ),
        ] {
            let e = parse_tokens(&v, &[], None, false).expect_err("refused");
            assert!(e.to_string().contains(want), "{e} for {v}");
        }
    }

    #[test]
    fn the_refresh_margin_is_a_tenth_of_the_lifetime_within_bounds() {
        for (lifetime, margin) in [
            (Some(3600), 300),
            (Some(86_400), 300),
            (Some(600), 60),
            (Some(30), 5),
            (Some(8), 4),
            (Some(1), 0),
            (None, 30),
        ] {
            assert_eq!(refresh_margin(lifetime), margin, "{lifetime:?}");
        }
        let t = parse_tokens(
            &serde_json::json!({"access_token": "a", "token_type": "Bearer", "expires_in": 30, "refresh_token": "r"}),
            &[],
            None,
            false,
        )
        .expect("ok");
        assert_eq!(t.lifetime, Some(30));
        assert!(!due(&t), "not due right after the exchange");
    }

    #[test]
    fn the_secret_method_is_the_servers_first() {
        let m = |v: &[&str]| secret_method(&v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            m(&["client_secret_post", "client_secret_basic"]),
            "client_secret_post"
        );
        assert_eq!(
            m(&["client_secret_basic", "client_secret_post"]),
            "client_secret_basic"
        );
        assert_eq!(
            m(&["private_key_jwt", "client_secret_post"]),
            "client_secret_post"
        );
        assert_eq!(m(&["none"]), "client_secret_basic");
        assert_eq!(m(&[]), "client_secret_basic");
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        let mut reg = Registration {
            client_id: "a:b".to_owned(),
            client_secret: Some("s p".to_owned()),
            auth_method: "client_secret_basic".to_owned(),
            redirect_uri: String::new(),
            method: String::new(),
            basic_with_client_id: false,
        };
        let (h, body) = client_auth(&reg, None).expect("auth");
        assert!(body.is_empty(), "Basic alone: {body:?}");
        reg.basic_with_client_id = true;
        let (_, body) = client_auth(&reg, None).expect("auth");
        assert_eq!(
            body,
            [("client_id", "a:b".to_owned())],
            "named in the body too, once the server asked"
        );
        let v = h
            .get(header::AUTHORIZATION)
            .expect("basic")
            .to_str()
            .expect("ascii");
        assert_eq!(v, format!("Basic {}", STANDARD.encode("a%3Ab:s+p")));
    }
}
