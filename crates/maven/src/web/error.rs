//! The page's refusals and failures, answered as `{"error": code, "message": text}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// A refusal or failure, answered as `{"error": code, "message": text}`.
#[derive(Debug)]
pub(crate) struct AppError {
    pub(super) status: StatusCode,
    pub(super) code: &'static str,
    pub(super) message: String,
}

impl AppError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        AppError {
            status,
            code,
            message: message.into(),
        }
    }
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        tracing::error!(%message, "web: internal error");
        AppError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
    pub(super) fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        AppError::new(StatusCode::BAD_REQUEST, code, message)
    }
}

impl From<store::Error> for AppError {
    fn from(e: store::Error) -> Self {
        if e.is_not_found() {
            AppError::new(StatusCode::NOT_FOUND, "not_found", e.to_string())
        } else if e.is_bad_transition() {
            AppError::new(StatusCode::CONFLICT, "bad_transition", e.to_string())
        } else {
            AppError::internal(format!("store: {e}"))
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
