//! `maven acts [--limit N] [--json]`: the acts log, newest first: when each act ran, which,
//! who confirmed it, what became of it, how long it took and the first line of what it
//! returned. Asked of the running daemon (the `acts` method); with no daemon, read from the
//! data directory's store under its lock, as the other offline commands do (so no daemon can
//! start meanwhile). A result is a server's text: shown through `shown`, never obeyed.

use crate::exit::{errln, outln};
use std::path::Path;
use std::process::ExitCode;

use super::runtime;
use super::show::print_json;
use crate::exit::EXIT_FAILED;
use crate::ipc::client::{self as ipc, IpcError};
use wire::methods::Request;
use wire::views::ActRecordView;

pub(crate) fn run(data_dir: &Path, limit: u32, as_json: bool) -> ExitCode {
    runtime(async {
        let rows = match ipc::ask::<Vec<ActRecordView>>(data_dir, &Request::Acts { limit }).await {
            Ok(rows) => rows,
            // No daemon, and a database to read: read it under the data directory's lock.
            Err(IpcError::NoDaemon { .. }) if data_dir.join(crate::datadir::DB_NAME).is_file() => {
                match offline(data_dir, limit).await {
                    Ok(rows) => rows,
                    Err(e) => {
                        errln!("maven acts: {}", shown::block(&format!("{e:#}")));
                        return ExitCode::from(EXIT_FAILED);
                    }
                }
            }
            Err(e) => {
                errln!("maven acts: {}", shown::block(&e.to_string()));
                return ExitCode::from(e.exit_code());
            }
        };
        if as_json {
            print_json(&rows);
        } else {
            print(&rows);
        }
        ExitCode::SUCCESS
    })
}

/// The newest `limit` acts from the store of a data directory no daemon holds.
async fn offline(data_dir: &Path, limit: u32) -> anyhow::Result<Vec<ActRecordView>> {
    let lock = crate::datadir::DataLock::acquire(data_dir)?;
    let store = lock.open_store().await?;
    let rows = store.acts_log(limit).await;
    let _ = store.close().await;
    Ok(rows?.iter().map(crate::json::act_record).collect())
}

/// Two lines an act: `AT  ACT  OUTCOME  DURATION  CONFIRMED`, then its result's first line,
/// indented (none when it returned nothing).
pub(crate) fn print(rows: &[ActRecordView]) {
    if rows.is_empty() {
        outln!("no acts recorded yet");
        return;
    }
    for a in rows {
        let confirmed = match &a.confirmed_by {
            Some(by) => format!("confirmed by {}", shown::line(by)),
            None => "no confirmation asked".to_owned(),
        };
        outln!(
            "{}  {}  {}  {} ms  {}",
            a.at.as_deref().unwrap_or("-"),
            shown::line(&a.act),
            shown::line(&a.outcome),
            a.duration_ms,
            confirmed
        );
        if !a.result.is_empty() {
            outln!("    {}", shown::line(&a.result));
        }
    }
}
