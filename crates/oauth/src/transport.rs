//! The transport's two calls: the headers of a request ([`OAuth::headers_for`]) and what to do
//! with an answer ([`OAuth::on_answer`]).

use webfetch::{header, HeaderMap, HeaderName, StatusCode};

use crate::error::cut;
use crate::{
    due, origin, sensitive, union, AuthError, Challenge, OAuth, Round, Tokens, Verdict,
    MAX_STEP_UPS,
};

impl OAuth {
    fn canonical(&self, url: &str) -> String {
        let dialled = match &self.net.dial {
            Some(d) => d(&self.config.resource_url),
            None => self.config.resource_url.clone(),
        };
        if url == dialled {
            self.config.resource_url.clone()
        } else {
            url.to_owned()
        }
    }

    fn for_server_origin(&self, url: &str) -> bool {
        let canonical = self.canonical(url);
        origin(&canonical).is_some() && origin(&canonical) == origin(&self.config.resource_url)
    }

    fn tokens(&self) -> Option<Tokens> {
        self.st().current.as_ref().and_then(|c| c.tokens.clone())
    }

    /// The `Authorization` (and `DPoP`) headers of a request to `url`: none for another
    /// origin or without a token. A token due for a refresh is refreshed first (one refresh
    /// for all the requests that find it due).
    pub async fn headers_for(
        &self,
        method: &str,
        url: &str,
        round: &mut Round,
    ) -> Result<HeaderMap, AuthError> {
        let mut out = HeaderMap::new();
        round.sent = None;
        if !self.for_server_origin(url) {
            return Ok(out);
        }
        self.load().await?;
        if !self.read_only && self.tokens().is_some_and(|t| due(&t)) {
            let _flow = self.flow.lock().await;
            // Another request may have refreshed it while this one waited.
            if self.tokens().is_some_and(|t| due(&t)) {
                // A refused refresh leaves no token: the request goes without, and its 401
                // says what happens next.
                let _ = self.refresh().await;
            }
        }
        let (t, key, nonce) = {
            let st = self.st();
            let Some(t) = st.current.as_ref().and_then(|c| c.tokens.clone()) else {
                return Ok(out);
            };
            (t, st.dpop.clone(), st.rs_nonce.clone())
        };
        round.sent = Some(t.access_token.clone());
        if t.token_type.eq_ignore_ascii_case("dpop") {
            let key = key.ok_or(AuthError::NeedsAuthorization)?;
            out.insert(
                header::AUTHORIZATION,
                sensitive(&format!("DPoP {}", t.access_token))?,
            );
            let proof = key.proof(
                method,
                &self.canonical(url),
                Some(&t.access_token),
                nonce.as_deref(),
            )?;
            out.insert(HeaderName::from_static("dpop"), sensitive(&proof)?);
        } else {
            out.insert(
                header::AUTHORIZATION,
                sensitive(&format!("Bearer {}", t.access_token))?,
            );
        }
        Ok(out)
    }

    /// What to do with a response to a request of the server: [`Verdict::SendAgain`] (a nonce
    /// learnt, a token refreshed, an authorization or a step-up made: the request goes again
    /// with [`OAuth::headers_for`]'s new headers), [`Verdict::Take`] (the response is the
    /// answer), or why the server cannot be used ([`AuthError::NeedsAuthorization`] among
    /// them).
    pub async fn on_answer(
        &self,
        url: &str,
        status: StatusCode,
        headers: &HeaderMap,
        round: &mut Round,
    ) -> Result<Verdict, AuthError> {
        if !self.for_server_origin(url) {
            return Ok(Verdict::Take);
        }
        let nonce = headers
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(cut);
        if let Some(n) = &nonce {
            self.st().rs_nonce = Some(n.clone());
        }
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(Verdict::Take);
        }
        let challenge = Challenge::parse(
            headers
                .get_all(header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
        if challenge.error.as_deref() == Some("use_dpop_nonce") {
            if nonce.is_some() && round.nonce_retries == 0 {
                round.nonce_retries += 1;
                return Ok(Verdict::SendAgain);
            }
            return Ok(Verdict::Take);
        }
        let server = &self.config.server;
        if status == StatusCode::FORBIDDEN {
            if challenge.error.as_deref() != Some("insufficient_scope") {
                return Ok(Verdict::Take);
            }
            let wanted = challenge.scopes();
            let had = {
                let st = self.st();
                let granted = st
                    .current
                    .as_ref()
                    .and_then(|c| c.tokens.as_ref())
                    .map(|t| t.scopes.clone())
                    .unwrap_or_default();
                union(&st.requested, &granted)
            };
            tracing::info!(server = %server, scope = %cut(challenge.scope.as_deref().unwrap_or("")), reason = %challenge.reason(), "the server asks for a wider scope");
            if !wanted.is_empty() && wanted.iter().all(|s| had.contains(s)) {
                return Err(AuthError::ScopeLoop {
                    scope: cut(challenge.scope.as_deref().unwrap_or("")),
                });
            }
            if round.step_ups >= MAX_STEP_UPS {
                return Err(AuthError::TooManyStepUps {
                    count: round.step_ups,
                });
            }
            round.step_ups += 1;
            // What was asked or granted before, and what is asked now (a daemon that restarted
            // has asked nothing yet: the kept token's scopes count).
            let scopes = union(&had, &wanted);
            if self.agent.is_none() {
                // The owner authorizes the wider scope (Connect, `maven mcp login`): the kept
                // challenge asks for all of it.
                let mut wider = challenge.clone();
                wider.scope = Some(scopes.join(" "));
                self.st().challenge = Some(wider);
                return Err(AuthError::NeedsAuthorization);
            }
            self.authorize_with(&challenge, Some(scopes)).await?;
            return Ok(Verdict::SendAgain);
        }
        // 401.
        let current = {
            let mut st = self.st();
            st.challenge = Some(challenge.clone());
            st.current
                .as_ref()
                .and_then(|c| c.tokens.as_ref().map(|t| (c.issuer.clone(), t.clone())))
        };
        if let Some((issuer, t)) = &current {
            if t.token_type.eq_ignore_ascii_case("dpop")
                && !challenge.schemes.is_empty()
                && !challenge.offers_dpop()
            {
                // Refreshing would only bind the next token to the same key: an error that
                // names both ends, never a loop.
                let e = AuthError::DpopRefused {
                    issuer: cut(issuer),
                    server: cut(&self.config.resource_url),
                    schemes: challenge.schemes.join(", "),
                    reason: challenge.reason(),
                };
                tracing::warn!(server = %server, error = %e, "the server refused the DPoP-bound token");
                if !self.read_only {
                    let _flow = self.flow.lock().await;
                    self.drop_tokens(e.to_string()).await;
                }
                return Err(e);
            }
        }
        if current.is_some() && !round.refreshed && round.authorized == 0 && !self.read_only {
            round.refreshed = true;
            tracing::info!(server = %server, reason = %challenge.reason(), "the server refused the access token; refreshing it");
            let _flow = self.flow.lock().await;
            let now_token = self.tokens().map(|t| t.access_token);
            // Refreshed by another request meanwhile: send again with the new token.
            if now_token.is_some() && now_token != round.sent {
                return Ok(Verdict::SendAgain);
            }
            if now_token.is_some() && self.refresh().await.is_ok() {
                return Ok(Verdict::SendAgain);
            }
        }
        if round.authorized >= 1 {
            if !self.grant.needs_owner() {
                return Err(AuthError::Grant(format!(
                    "the server refused the token the {} grant just gave: {}",
                    self.grant.as_str(),
                    challenge.reason()
                )));
            }
            return Err(AuthError::NeedsAuthorization);
        }
        // The token (if any) is not accepted: it is dropped, so the server is "needs
        // authorization" until it is authorized again.
        if !self.read_only && self.tokens().is_some() {
            tracing::warn!(server = %server, reason = %challenge.reason(), "the server refused the access token; it needs authorization");
            let _flow = self.flow.lock().await;
            self.drop_tokens(format!(
                "the server refused the access token: {}",
                challenge.reason()
            ))
            .await;
        }
        if !self.grant.needs_owner() && !self.read_only {
            // A grant that needs no person runs here, in the request that met the challenge
            // (one grant per request: a refusal is the error, never a reason to try again).
            // Never in a read-only look (`maven mcp inspect`: discovery, never a grant).
            round.authorized += 1;
            let _flow = self.flow.lock().await;
            let now_token = self.tokens().map(|t| t.access_token);
            if now_token.is_none() || now_token == round.sent {
                // Boxed: the grant's future is large, and this one sits in every request's.
                Box::pin(self.obtain(&challenge)).await?;
            }
            return Ok(Verdict::SendAgain);
        }
        if self.agent.is_none() {
            // No discovery here: the daemon's dial ends at once, and discovery runs where the
            // owner asks for it (Connect, `maven mcp login`, `maven mcp inspect`).
            return Err(AuthError::NeedsAuthorization);
        }
        round.authorized += 1;
        self.authorize_with(&challenge, None).await?;
        Ok(Verdict::SendAgain)
    }
}
