//! The local page's credentials: the owner's enrolled passkeys.
//!
//! The store keeps each passkey as an opaque JSON document (the WebAuthn library's own
//! serialisation) under its credential id; it knows nothing of WebAuthn. Sessions and
//! enrollment links are not persisted: a restart ends them by design.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use time::OffsetDateTime;

use crate::error::Error;
use crate::model::PasskeyRow;
use crate::ops::{from_ms, to_ms};

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

pub(crate) fn add(conn: &mut Connection, id: &str, passkey: &str) -> Result<PasskeyRow, Error> {
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

pub(crate) fn all(conn: &mut Connection) -> Result<Vec<PasskeyRow>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT id, passkey, created, last_used FROM passkeys ORDER BY created, id",
    )?;
    let rows = st.query_map([], raw_passkey)?;
    rows.map(|r| finish_passkey(r?)).collect()
}

pub(crate) fn used(conn: &mut Connection, id: &str, passkey: Option<&str>) -> Result<(), Error> {
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

pub(crate) fn remove(conn: &mut Connection, id: &str) -> Result<bool, Error> {
    let n = conn
        .prepare_cached("DELETE FROM passkeys WHERE id = ?1")?
        .execute([id])?;
    Ok(n > 0)
}

pub(crate) fn get(conn: &mut Connection, id: &str) -> Result<Option<PasskeyRow>, Error> {
    conn.prepare_cached("SELECT id, passkey, created, last_used FROM passkeys WHERE id = ?1")?
        .query_row([id], raw_passkey)
        .optional()?
        .map(finish_passkey)
        .transpose()
}
