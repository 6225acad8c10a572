//! Enrollment of passkeys through one-time links, and the step-ups: a passkey assertion, or
//! the configured argon2id passphrase.

use crate::error::Code;
use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::Value;
use webauthn_rs::prelude::{PublicKeyCredential, RegisterPublicKeyCredential, Uuid};
use wire::views::{EnrolledReply, StepUpReply};

use super::app::{no_session, App, SessionCookie};
use super::error::AppError;
use super::session;
use super::{api, creds};

/// The owner's WebAuthn user handle: Maven serves one person.
const OWNER: Uuid = Uuid::from_u128(0x6d61_7665_6e00_4f77_6e65_7200_0000_0001);
/// Passphrases longer than this are refused before hashing.
const MAX_PASSPHRASE: usize = 1024;

#[derive(Deserialize)]
pub(super) struct EnrollStart {
    token: String,
}

fn gone(msg: &str) -> AppError {
    AppError::new(StatusCode::FORBIDDEN, Code::EnrollLink, msg.to_owned())
}

/// `POST /api/enroll/start {"token"}`: checks the one-time link and starts a registration.
pub(super) async fn enroll_start(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Json(req): Json<EnrollStart>,
) -> Result<Json<Value>, AppError> {
    let web = &app.web;
    let now = web.clock.now();
    let th = session::hash(req.token.trim());
    if !web.sessions.enrollment_valid(&th, now) {
        return Err(gone(
            "this enrollment link is unknown, used or expired: run `maven web enroll` for a new one",
        ));
    }
    let existing: Vec<_> = creds::all(&*app.host)
        .await?
        .iter()
        .map(|e| e.passkey.cred_id().clone())
        .collect();
    let exclude = (!existing.is_empty()).then_some(existing);
    let (challenge, state) = web
        .webauthn
        .start_passkey_registration(OWNER, "owner", "Maven owner", exclude)
        .map_err(|e| AppError::internal(format!("cannot start a passkey registration: {e}")))?;
    web.sessions
        .with(&c.0, now, |s| s.registration = Some(((state, th), now)))
        .ok_or_else(no_session)?;
    Ok(Json(
        serde_json::to_value(challenge).map_err(|e| AppError::internal(e.to_string()))?,
    ))
}

/// `POST /api/enroll/finish <credential>`: verifies the authenticator's answer, stores the
/// passkey, uses up the link and signs the session in (for `web.session_hours`, as a sign-in
/// does; enabling an act still asks for a step-up).
pub(super) async fn enroll_finish(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Json(cred): Json<RegisterPublicKeyCredential>,
) -> Result<Json<EnrolledReply>, AppError> {
    let web = &app.web;
    let now = web.clock.now();
    let (state, th) = ceremony(&app, &c.0, "registration", |s| s.registration.take())?;
    let passkey = web
        .webauthn
        .finish_passkey_registration(&cred, &state)
        .map_err(|e| {
            AppError::bad_request(Code::Webauthn, format!("the passkey was not accepted: {e}"))
        })?;
    if !web.sessions.consume_enrollment(&th, now) {
        return Err(gone("this enrollment link was used or expired meanwhile"));
    }
    let id = creds::add(&*app.host, &passkey).await?;
    // Enrolling signs this browser in, as a sign-in does; it makes no step-up.
    web.sessions
        .with(&c.0, now, |s| s.enrolled = Some(now))
        .ok_or_else(no_session)?;
    tracing::info!(passkey = %creds::short_id(&id), "passkey enrolled on the page; the session is signed in");
    Ok(Json(EnrolledReply {
        enrolled: api::passkey_method(&id),
    }))
}

/// `POST /api/stepup/passkey/start`: a challenge for any enrolled passkey.
pub(super) async fn passkey_start(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
) -> Result<Json<Value>, AppError> {
    let web = &app.web;
    let keys: Vec<_> = creds::all(&*app.host)
        .await?
        .into_iter()
        .map(|e| e.passkey)
        .collect();
    if keys.is_empty() {
        return Err(AppError::new(
            StatusCode::CONFLICT,
            Code::NoPasskey,
            "no passkey is enrolled: run `maven web enroll` on this machine and open the link",
        ));
    }
    let (challenge, state) = web
        .webauthn
        .start_passkey_authentication(&keys)
        .map_err(|e| AppError::internal(format!("cannot start a passkey authentication: {e}")))?;
    let now = web.clock.now();
    web.sessions
        .with(&c.0, now, |s| s.authentication = Some((state, now)))
        .ok_or_else(no_session)?;
    Ok(Json(
        serde_json::to_value(challenge).map_err(|e| AppError::internal(e.to_string()))?,
    ))
}

/// `POST /api/stepup/passkey/finish <assertion>`: verifies it; the session's step-up is fresh
/// for five minutes.
pub(super) async fn passkey_finish(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Json(cred): Json<PublicKeyCredential>,
) -> Result<Json<StepUpReply>, AppError> {
    let web = &app.web;
    let state = ceremony(&app, &c.0, "verification", |s| s.authentication.take())?;
    #[expect(
        clippy::disallowed_methods,
        reason = "the page verifies the owner's passkey"
    )]
    let (step, result) = stepup::finish_passkey(&web.webauthn, &cred, &state, web.clock.now())
        .map_err(|e| {
            AppError::new(
                StatusCode::UNAUTHORIZED,
                Code::Webauthn,
                format!("the passkey did not verify: {e}"),
            )
        })?;
    let id = hex::encode(result.cred_id());
    let mut keys = creds::all(&*app.host).await?;
    let updated = keys.iter_mut().find(|e| e.id == id).and_then(|e| {
        e.passkey
            .update_credential(&result)
            .filter(|changed| *changed)
            .map(|_| e.passkey.clone())
    });
    creds::used(&*app.host, &id, updated.as_ref()).await?;
    let method = step.method().to_owned();
    grant(&app, &c.0, step)?;
    Ok(Json(StepUpReply {
        step_up: method,
        fresh_for_s: session::STEP_UP_FRESH.as_secs(),
    }))
}

/// Takes the session's WebAuthn ceremony in progress (it is used once, whatever the outcome),
/// refusing when there is none or it is older than [`session::CEREMONY_VALID`].
fn ceremony<S>(
    app: &App,
    cookie: &str,
    what: &str,
    take: impl FnOnce(&mut session::Session) -> Option<(S, std::time::Instant)>,
) -> Result<S, AppError> {
    let now = app.web.clock.now();
    let pending = app
        .web
        .sessions
        .with(cookie, now, take)
        .ok_or_else(no_session)?;
    let Some((state, started)) = pending else {
        return Err(AppError::bad_request(
            Code::NoCeremony,
            format!("no passkey {what} in progress in this session: start again"),
        ));
    };
    if now.saturating_duration_since(started) > session::CEREMONY_VALID {
        return Err(AppError::bad_request(
            Code::CeremonyExpired,
            format!("the passkey {what} took too long: start again"),
        ));
    }
    Ok(state)
}

fn grant(app: &App, cookie: &str, step: stepup::StepUp) -> Result<(), AppError> {
    let now = app.web.clock.now();
    let method = step.method().to_owned();
    app.web
        .sessions
        .with(cookie, now, |s| s.step_up = Some(step))
        .ok_or_else(no_session)?;
    tracing::info!(%method, "step-up verified on the page");
    Ok(())
}

#[derive(Deserialize)]
pub(super) struct PassphraseReq {
    passphrase: String,
}

/// `POST /api/stepup/passphrase {"passphrase"}`: the fallback step-up, when `web.passphrase_hash`
/// is configured. One verification at a time; five wrong passphrases in a row (attempts in
/// flight included) lock the passphrase for a minute (see `gate`).
pub(super) async fn passphrase(
    State(app): State<App>,
    Extension(c): Extension<SessionCookie>,
    Json(req): Json<PassphraseReq>,
) -> Result<Json<StepUpReply>, AppError> {
    let web = &app.web;
    let Some(hash) = web.passphrase_hash.clone() else {
        return Err(AppError::new(
            StatusCode::CONFLICT,
            Code::NoPassphrase,
            "no passphrase is configured (web.passphrase_hash; make one with `maven web passphrase`)",
        ));
    };
    if req.passphrase.len() > MAX_PASSPHRASE {
        return Err(AppError::bad_request(
            Code::Passphrase,
            "passphrase too long",
        ));
    }
    let admitted = web.gate.admit(web.clock.now()).map_err(|e| {
        AppError::new(
            StatusCode::TOO_MANY_REQUESTS,
            Code::TooManyAttempts,
            e.to_string(),
        )
    })?;
    let now = web.clock.now();
    let clock = web.clock.clone();
    #[expect(
        clippy::disallowed_methods,
        reason = "the page verifies the owner's passphrase"
    )]
    let step = web
        .gate
        .verify(
            admitted,
            move || clock.now(),
            move || stepup::verify_passphrase(hash.expose(), &req.passphrase, now),
        )
        .await
        .map_err(AppError::internal)?;
    let Some(step) = step else {
        tracing::warn!("wrong passphrase on the page");
        return Err(AppError::new(
            StatusCode::UNAUTHORIZED,
            Code::Passphrase,
            "wrong passphrase",
        ));
    };
    grant(&app, &c.0, step)?;
    Ok(Json(StepUpReply {
        step_up: "passphrase".to_owned(),
        fresh_for_s: session::STEP_UP_FRESH.as_secs(),
    }))
}
