//! The owner's step-up: proof that the owner verified themselves a moment ago.
//!
//! A [`StepUp`] is the one value that lets an allowlist row be enabled or disabled
//! (`store::Store::owner_sets_tool_state` takes one). Its fields are private and it has no
//! public constructor: the only ways to get one are [`verify_passphrase`], which checks a
//! passphrase against the configured argon2id hash, and [`finish_passkey`], which runs
//! WebAuthn's verification of a passkey assertion. So no other code path *can* enable a row:
//!
//! ```compile_fail
//! // A step-up cannot be made up: its fields are private.
//! let forged = stepup::StepUp { at: std::time::Instant::now(), method: "forged".into() };
//! ```
//!
//! Freshness (five minutes on the page) is the caller's rule: the instant of the verification is
//! kept, read with [`StepUp::at`].

#![warn(clippy::expect_used, clippy::panic)]

use std::time::Instant;

use webauthn_rs::prelude::{
    AuthenticationResult, PasskeyAuthentication, PublicKeyCredential, WebauthnError,
};
use webauthn_rs::Webauthn;

/// A verified step-up: when it was verified, and how (named in the audit trail).
#[derive(Debug, Clone)]
pub struct StepUp {
    at: Instant,
    method: String,
}

impl StepUp {
    /// The instant of the verification, on the caller's clock.
    pub fn at(&self) -> Instant {
        self.at
    }

    /// How the owner verified: `passphrase` or `passkey <first 8 hex digits of its id>`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The actor written in the audit trail for a change made with this step-up.
    pub fn actor(&self) -> String {
        format!("owner ({})", self.method)
    }
}

/// The first eight hex digits of a credential id: how a passkey is named in logs and the
/// audit trail.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// Checks `passphrase` against an argon2id PHC string; a step-up when it matches. Any other
/// algorithm, a malformed hash or a mismatch gives `None`. Slow on purpose (argon2): run it off
/// the async workers.
pub fn verify_passphrase(hash: &str, passphrase: &str, at: Instant) -> Option<StepUp> {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    let parsed = PasswordHash::new(hash).ok()?;
    if parsed.algorithm.as_str() != "argon2id" {
        return None;
    }
    argon2::Argon2::default()
        .verify_password(passphrase.as_bytes(), &parsed)
        .ok()?;
    Some(StepUp {
        at,
        method: "passphrase".to_owned(),
    })
}

/// Hashes a passphrase with argon2id (a fresh random salt, the library's default cost) into the
/// PHC string that goes in `web.passphrase_hash`.
pub fn hash_passphrase(passphrase: &str) -> Result<String, String> {
    use argon2::password_hash::{PasswordHasher, SaltString};
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    argon2::Argon2::default()
        .hash_password(passphrase.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Verifies a passkey assertion against the ceremony `state` the server issued; on success a
/// step-up named after the credential, and WebAuthn's result (for updating the stored
/// credential's counter).
pub fn finish_passkey(
    webauthn: &Webauthn,
    credential: &PublicKeyCredential,
    state: &PasskeyAuthentication,
    at: Instant,
) -> Result<(StepUp, AuthenticationResult), WebauthnError> {
    let result = webauthn.finish_passkey_authentication(credential, state)?;
    let id = hex::encode(result.cred_id());
    let step = StepUp {
        at,
        method: format!("passkey {}", short_id(&id)),
    };
    Ok((step, result))
}

/// For tests of the crates that take a step-up (the `testing` feature, which only
/// dev-dependencies enable): a step-up made the only way there is, by verifying a passphrase
/// against its argon2id hash.
#[cfg(feature = "testing")]
pub mod testing {
    use std::sync::OnceLock;
    use std::time::Instant;

    /// The passphrase whose hash [`passphrase_hash`] gives.
    pub const PASSPHRASE: &str = "correct horse battery staple";

    /// The argon2id hash of [`PASSPHRASE`] (made once per process).
    pub fn passphrase_hash() -> &'static str {
        static HASH: OnceLock<String> = OnceLock::new();
        HASH.get_or_init(|| super::hash_passphrase(PASSPHRASE).unwrap_or_default())
    }

    /// A step-up verified now, from [`PASSPHRASE`]; its method is `passphrase`.
    #[expect(
        clippy::disallowed_methods,
        reason = "a step-up is stamped on the page's clock, std's `Instant`"
    )]
    pub fn step_up() -> super::StepUp {
        match super::verify_passphrase(passphrase_hash(), PASSPHRASE, Instant::now()) {
            Some(s) => s,
            None => unreachable!("the hash was made from this passphrase"),
        }
    }
}

#[cfg(test)]
#[expect(
    clippy::disallowed_methods,
    reason = "a step-up is stamped on the page's clock, std's `Instant`"
)]
mod tests {
    use super::*;

    #[test]
    fn only_the_right_passphrase_gives_a_step_up() {
        let hash = hash_passphrase("correct horse").unwrap();
        let now = Instant::now();
        let step = verify_passphrase(&hash, "correct horse", now).unwrap();
        assert_eq!(step.method(), "passphrase");
        assert_eq!(step.actor(), "owner (passphrase)");
        assert_eq!(step.at(), now);
        assert!(verify_passphrase(&hash, "wrong", now).is_none());
        assert!(verify_passphrase("not a hash", "correct horse", now).is_none());
        let argon2i = hash.replacen("$argon2id$", "$argon2i$", 1);
        assert!(verify_passphrase(&argon2i, "correct horse", now).is_none());
    }

    #[test]
    fn short_ids() {
        assert_eq!(short_id("0123456789abcdef"), "01234567");
        assert_eq!(short_id("abc"), "abc");
    }
}
