//! The OAuth credentials of MCP servers, one row per (server, issuer): the registration, the
//! tokens and the DPoP key of that authorization server, as one opaque JSON document (the mcp
//! crate's own serialisation; the store knows nothing of OAuth). A save replaces the row of
//! its pair in one transaction: a crash leaves the old document or the new one, never
//! neither and never two. Nothing here is logged.

use rusqlite::{params, Connection, TransactionBehavior};
use time::OffsetDateTime;

use crate::error::Error;
use crate::ops::to_ms;
use crate::Store;

/// Largest credentials document kept.
const MAX_DOC: usize = 256 * 1024;

fn check(server: &str, issuer: &str, doc: &str) -> Result<(), Error> {
    if server.is_empty() || server.len() > 256 {
        return Err(Error::invalid("oauth server", "expected 1 to 256 bytes"));
    }
    if issuer.is_empty() || issuer.len() > 2048 {
        return Err(Error::invalid("oauth issuer", "expected 1 to 2048 bytes"));
    }
    if doc.len() > MAX_DOC || serde_json::from_str::<serde_json::Value>(doc).is_err() {
        return Err(Error::invalid(
            "oauth credentials",
            "expected a JSON document of at most 256 KiB",
        ));
    }
    Ok(())
}

fn save(conn: &mut Connection, server: &str, issuer: &str, doc: &str) -> Result<(), Error> {
    check(server, issuer, doc)?;
    let now = to_ms(OffsetDateTime::now_utc());
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.prepare_cached(
        "INSERT INTO mcp_oauth (server, issuer, credentials, updated) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (server, issuer) DO UPDATE SET credentials = excluded.credentials,
                                                   updated = excluded.updated",
    )?
    .execute(params![server, issuer, doc, now])?;
    tx.commit()?;
    Ok(())
}

fn load(conn: &mut Connection, server: &str) -> Result<Vec<(String, String)>, Error> {
    let mut st = conn.prepare_cached(
        "SELECT issuer, credentials FROM mcp_oauth WHERE server = ?1 ORDER BY issuer",
    )?;
    let rows = st.query_map(params![server], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

fn forget(conn: &mut Connection, server: &str) -> Result<u64, Error> {
    let n = conn
        .prepare_cached("DELETE FROM mcp_oauth WHERE server = ?1")?
        .execute(params![server])?;
    Ok(n as u64)
}

fn servers(conn: &mut Connection) -> Result<Vec<String>, Error> {
    let mut st = conn.prepare_cached("SELECT DISTINCT server FROM mcp_oauth ORDER BY server")?;
    let rows = st.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

impl Store {
    /// Keep the OAuth credentials document of (server, issuer), replacing what was there.
    pub async fn save_oauth_credentials(
        &self,
        server: &str,
        issuer: &str,
        doc: &str,
    ) -> Result<(), Error> {
        let (server, issuer, doc) = (server.to_owned(), issuer.to_owned(), doc.to_owned());
        self.call(move |c| save(c, &server, &issuer, &doc)).await
    }

    /// Every (issuer, document) kept for a server.
    pub async fn oauth_credentials(&self, server: &str) -> Result<Vec<(String, String)>, Error> {
        let server = server.to_owned();
        self.call(move |c| load(c, &server)).await
    }

    /// Forget every OAuth credential of a server; how many rows went.
    pub async fn forget_oauth_credentials(&self, server: &str) -> Result<u64, Error> {
        let server = server.to_owned();
        self.call(move |c| forget(c, &server)).await
    }

    /// The servers with OAuth credentials kept.
    pub async fn oauth_servers(&self) -> Result<Vec<String>, Error> {
        self.call(servers).await
    }
}
