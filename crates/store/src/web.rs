//! The local page's credentials: the owner's enrolled passkeys.
//!
//! The store keeps each passkey as an opaque JSON document (the WebAuthn library's own
//! serialisation) under its credential id; it knows nothing of WebAuthn. Sessions and
//! enrollment links are not persisted: a restart ends them by design.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use time::OffsetDateTime;

use crate::ops::{from_ms, to_ms};
use crate::{Error, Store};

/// Migration 2: the passkeys table.
pub(crate) const V2: &str = r#"
CREATE TABLE passkeys (
    id        TEXT PRIMARY KEY NOT NULL
              CHECK (length(id) BETWEEN 2 AND 2048 AND id NOT GLOB '*[^0-9a-f]*'),
    passkey   TEXT NOT NULL CHECK (length(passkey) <= 65536 AND json_valid(passkey)),
    created   INTEGER NOT NULL,
    last_used INTEGER
) STRICT, WITHOUT ROWID;
"#;

/// An enrolled passkey.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasskeyRow {
    /// The credential id, lowercase hex.
    pub id: String,
    /// The credential as the WebAuthn library serialised it (JSON, opaque to the store).
    pub passkey: String,
    /// When it was enrolled.
    pub created: OffsetDateTime,
    /// When it last verified a step-up.
    pub last_used: Option<OffsetDateTime>,
}

fn check(id: &str, passkey: &str) -> Result<(), Error> {
    if id.len() < 2
        || id.len() > 2048
        || !id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return Err(Error::invalid(
            "passkey id",
            "expected 2 to 2048 lowercase hex digits",
        ));
    }
    if passkey.len() > 65536 || serde_json::from_str::<serde_json::Value>(passkey).is_err() {
        return Err(Error::invalid(
            "passkey",
            "expected a JSON document of at most 64 KiB",
        ));
    }
    Ok(())
}

fn add(conn: &mut Connection, id: &str, passkey: &str) -> Result<PasskeyRow, Error> {
    check(id, passkey)?;
    let now = to_ms(OffsetDateTime::now_utc());
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let inserted = tx
        .prepare_cached(
            "INSERT INTO passkeys (id, passkey, created, last_used) VALUES (?1, ?2, ?3, NULL)
             ON CONFLICT (id) DO NOTHING",
        )?
        .execute(params![id, passkey, now])?;
    if inserted == 0 {
        return Err(Error::AlreadyExists(format!("passkey {id}")));
    }
    tx.commit()?;
    Ok(PasskeyRow {
        id: id.to_owned(),
        passkey: passkey.to_owned(),
        created: from_ms(now)?,
        last_used: None,
    })
}

type RawPasskey = (String, String, i64, Option<i64>);

fn raw_passkey(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawPasskey> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
}

fn finish_passkey((id, passkey, created, last_used): RawPasskey) -> Result<PasskeyRow, Error> {
    Ok(PasskeyRow {
        id,
        passkey,
        created: from_ms(created)?,
        last_used: last_used.map(from_ms).transpose()?,
    })
}

fn all(conn: &mut Connection) -> Result<Vec<PasskeyRow>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT id, passkey, created, last_used FROM passkeys ORDER BY created, id",
    )?;
    let rows = st.query_map([], raw_passkey)?;
    rows.map(|r| finish_passkey(r?)).collect()
}

fn used(conn: &mut Connection, id: &str, passkey: Option<&str>) -> Result<(), Error> {
    if let Some(p) = passkey {
        check(id, p)?;
    }
    let now = to_ms(OffsetDateTime::now_utc());
    let n = conn
        .prepare_cached(
            "UPDATE passkeys SET last_used = ?2, passkey = coalesce(?3, passkey) WHERE id = ?1",
        )?
        .execute(params![id, now, passkey])?;
    if n == 0 {
        return Err(Error::NotFound(format!("passkey {id}")));
    }
    Ok(())
}

fn remove(conn: &mut Connection, id: &str) -> Result<bool, Error> {
    let n = conn
        .prepare_cached("DELETE FROM passkeys WHERE id = ?1")?
        .execute([id])?;
    Ok(n > 0)
}

fn get(conn: &mut Connection, id: &str) -> Result<Option<PasskeyRow>, Error> {
    conn.prepare_cached("SELECT id, passkey, created, last_used FROM passkeys WHERE id = ?1")?
        .query_row([id], raw_passkey)
        .optional()?
        .map(finish_passkey)
        .transpose()
}

impl Store {
    /// Stores a newly enrolled passkey under its credential id (lowercase hex).
    /// [`Error::AlreadyExists`] when the id is taken; [`Error::Invalid`] for an id that is not
    /// lowercase hex or a document that is not JSON (at most 64 KiB).
    pub async fn add_passkey(&self, id: &str, passkey: &str) -> Result<PasskeyRow, Error> {
        let (i, p) = (id.to_owned(), passkey.to_owned());
        self.call(move |c| add(c, &i, &p)).await
    }

    /// Every enrolled passkey, oldest first.
    pub async fn passkeys(&self) -> Result<Vec<PasskeyRow>, Error> {
        self.call(all).await
    }

    /// One passkey by id.
    pub async fn passkey(&self, id: &str) -> Result<Option<PasskeyRow>, Error> {
        let i = id.to_owned();
        self.call(move |c| get(c, &i)).await
    }

    /// Records that a passkey verified a step-up now, replacing its document when given (the
    /// authenticator's signature counter moved). [`Error::NotFound`] when there is no such id.
    pub async fn passkey_used(&self, id: &str, passkey: Option<&str>) -> Result<(), Error> {
        let (i, p) = (id.to_owned(), passkey.map(str::to_owned));
        self.call(move |c| used(c, &i, p.as_deref())).await
    }

    /// Forgets a passkey; `true` if it existed.
    pub async fn remove_passkey(&self, id: &str) -> Result<bool, Error> {
        let i = id.to_owned();
        self.call(move |c| remove(c, &i)).await
    }
}
