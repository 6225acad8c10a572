//! The page's refusals and failures, answered as `{"error": code, "message": text}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// What went wrong, for the page's script to decide on: `{"error": CODE}` on the wire (its
/// snake_case name); the `message` beside it is for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Code {
    BadTransition,
    Busy,
    CeremonyExpired,
    Csrf,
    EnrollLink,
    Host,
    Internal,
    NoCeremony,
    NoPasskey,
    NoPassphrase,
    NoSession,
    NotFound,
    Oauth,
    OauthLink,
    Origin,
    Passphrase,
    SignInRequired,
    StepUpRequired,
    StepUpStale,
    Timeout,
    TooLarge,
    TooManyAttempts,
    TooManySessions,
    Unchanged,
    Unstable,
    Webauthn,
}

impl Code {
    /// Every code, so the page's script can be checked to word each one.
    #[cfg(test)]
    pub(crate) const ALL: [Code; 26] = [
        Code::BadTransition,
        Code::Busy,
        Code::CeremonyExpired,
        Code::Csrf,
        Code::EnrollLink,
        Code::Host,
        Code::Internal,
        Code::NoCeremony,
        Code::NoPasskey,
        Code::NoPassphrase,
        Code::NoSession,
        Code::NotFound,
        Code::Oauth,
        Code::OauthLink,
        Code::Origin,
        Code::Passphrase,
        Code::SignInRequired,
        Code::StepUpRequired,
        Code::StepUpStale,
        Code::Timeout,
        Code::TooLarge,
        Code::TooManyAttempts,
        Code::TooManySessions,
        Code::Unchanged,
        Code::Unstable,
        Code::Webauthn,
    ];
}

/// A refusal or failure, answered as `{"error": code, "message": text}`.
#[derive(Debug)]
pub(crate) struct AppError {
    pub(super) status: StatusCode,
    pub(super) code: Code,
    pub(super) message: String,
}

impl AppError {
    pub(crate) fn new(status: StatusCode, code: Code, message: impl Into<String>) -> Self {
        AppError {
            status,
            code,
            message: message.into(),
        }
    }
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        tracing::error!(%message, "web: internal error");
        AppError::new(StatusCode::INTERNAL_SERVER_ERROR, Code::Internal, message)
    }
    pub(super) fn bad_request(code: Code, message: impl Into<String>) -> Self {
        AppError::new(StatusCode::BAD_REQUEST, code, message)
    }
}

impl From<crate::host::HostError> for AppError {
    fn from(e: crate::host::HostError) -> Self {
        use crate::host::HostError;
        match e {
            HostError::NotFound(m) => AppError::new(StatusCode::NOT_FOUND, Code::NotFound, m),
            HostError::BadTransition(m) => {
                AppError::new(StatusCode::CONFLICT, Code::BadTransition, m)
            }
            HostError::Failed(m) => AppError::internal(m),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let mut r = (
            self.status,
            Json(json!({"error": self.code, "message": self.message})),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("StepUp realm=\"maven\""),
            );
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    /// [`Code::ALL`] names every code: this match stops compiling when one is added, and the
    /// count of the array then says to add it there too.
    #[test]
    fn all_is_every_code() {
        for c in Code::ALL {
            match c {
                Code::BadTransition
                | Code::Busy
                | Code::CeremonyExpired
                | Code::Csrf
                | Code::EnrollLink
                | Code::Host
                | Code::Internal
                | Code::NoCeremony
                | Code::NoPasskey
                | Code::NoPassphrase
                | Code::NoSession
                | Code::NotFound
                | Code::Oauth
                | Code::OauthLink
                | Code::Origin
                | Code::Passphrase
                | Code::SignInRequired
                | Code::StepUpRequired
                | Code::StepUpStale
                | Code::Timeout
                | Code::TooLarge
                | Code::TooManyAttempts
                | Code::TooManySessions
                | Code::Unchanged
                | Code::Unstable
                | Code::Webauthn => {}
            }
        }
        let mut names: Vec<_> = Code::ALL.iter().map(|c| format!("{c:?}")).collect();
        names.dedup();
        assert_eq!(names.len(), 26);
    }
}
