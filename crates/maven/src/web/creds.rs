//! The owner's enrolled passkeys, kept in the store.

use webauthn_rs::prelude::Passkey;

use super::error::AppError;

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

/// Reads and writes passkeys through the store.
#[derive(Clone)]
pub(crate) struct Creds {
    store: store::Store,
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

impl Creds {
    pub(crate) fn new(store: store::Store) -> Creds {
        Creds { store }
    }

    /// Every enrolled passkey that can be read.
    pub(crate) async fn all(&self) -> Result<Vec<Enrolled>, AppError> {
        let rows = self.store.passkeys().await?;
        Ok(rows
            .iter()
            .filter_map(|r| decode(&r.id, &r.passkey))
            .collect())
    }

    /// How many passkeys are enrolled.
    pub(crate) async fn count(&self) -> Result<usize, AppError> {
        Ok(self.store.passkeys().await?.len())
    }

    /// Stores a newly enrolled passkey.
    pub(crate) async fn add(&self, p: &Passkey) -> Result<String, AppError> {
        let id = hex::encode(p.cred_id());
        let json = serde_json::to_string(p)
            .map_err(|e| AppError::internal(format!("cannot serialise a passkey: {e}")))?;
        self.store.add_passkey(&id, &json).await?;
        Ok(id)
    }

    /// Records a use (and the authenticator's new counter, when it changed).
    pub(crate) async fn used(&self, id: &str, p: Option<&Passkey>) -> Result<(), AppError> {
        let json = match p {
            Some(p) => Some(
                serde_json::to_string(p)
                    .map_err(|e| AppError::internal(format!("cannot serialise a passkey: {e}")))?,
            ),
            None => None,
        };
        Ok(self.store.passkey_used(id, json.as_deref()).await?)
    }
}
