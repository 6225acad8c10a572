//! The owner's enrolled passkeys, kept by the host (in the daemon's store).

use webauthn_rs::prelude::Passkey;

use super::error::AppError;
use super::host::Host;

/// One enrolled passkey.
pub(crate) struct Enrolled {
    /// Hex of the credential id.
    pub(crate) id: String,
    pub(crate) passkey: Passkey,
}

/// The short form of a credential id the audit trail names: its first 8 hex digits.
pub(crate) fn short_id(id: &str) -> &str {
    stepup::short_id(id)
}

fn decode(id: &str, json: &str) -> Option<Enrolled> {
    match serde_json::from_str::<Passkey>(json) {
        Ok(passkey) => Some(Enrolled {
            id: id.to_owned(),
            passkey,
        }),
        Err(e) => {
            tracing::warn!(id = %short_id(id), error = %e, "a stored passkey cannot be read; it is skipped");
            None
        }
    }
}

/// Every enrolled passkey that can be read.
pub(crate) async fn all(host: &dyn Host) -> Result<Vec<Enrolled>, AppError> {
    let rows = host.passkeys().await?;
    Ok(rows
        .iter()
        .filter_map(|r| decode(&r.id, &r.passkey))
        .collect())
}

/// How many passkeys are enrolled.
pub(crate) async fn count(host: &dyn Host) -> Result<usize, AppError> {
    Ok(host.passkeys().await?.len())
}

/// Keeps a newly enrolled passkey.
pub(crate) async fn add(host: &dyn Host, p: &Passkey) -> Result<String, AppError> {
    let id = hex::encode(p.cred_id());
    let json = serde_json::to_string(p)
        .map_err(|e| AppError::internal(format!("cannot serialise a passkey: {e}")))?;
    host.add_passkey(&id, &json).await?;
    Ok(id)
}

/// Records a use (and the authenticator's new counter, when it changed).
pub(crate) async fn used(host: &dyn Host, id: &str, p: Option<&Passkey>) -> Result<(), AppError> {
    let json = match p {
        Some(p) => Some(
            serde_json::to_string(p)
                .map_err(|e| AppError::internal(format!("cannot serialise a passkey: {e}")))?,
        ),
        None => None,
    };
    Ok(host.passkey_used(id, json.as_deref()).await?)
}
