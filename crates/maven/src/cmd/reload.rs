//! `maven reload`: asks the running daemon to read its configuration file again and apply the
//! difference (as SIGHUP does), and says what changed. The daemon reads the file it was started
//! with: this command's `--config` is not sent.

use std::path::Path;
use std::process::ExitCode;

use crate::exit::{errln, outln, EXIT_FAILED};
use crate::ipc::client::{self as ipc, IpcError};
use wire::methods::Request;
use wire::views::ReloadView;

/// Runs the command: exit 0 when the daemon applied the file, 1 when it refused it (the file
/// does not validate, or another reload is under way: the configuration in force stays), 2
/// when no daemon runs.
pub(crate) fn run(data_dir: &Path, json: bool) -> ExitCode {
    super::runtime(async {
        match ask(data_dir).await {
            Ok(v) if json => {
                super::show::print_json(&v);
                ExitCode::SUCCESS
            }
            Ok(v) => {
                for l in lines(&v) {
                    outln!("{l}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("maven reload: {}", shown::block(&e.to_string()));
                ExitCode::from(exit_code(&e))
            }
        }
    })
}

/// Asks the daemon of `data_dir` to reload.
pub(crate) async fn ask(data_dir: &Path) -> Result<ReloadView, IpcError> {
    ipc::ask::<ReloadView>(data_dir, &Request::Reload).await
}

/// A refusal of the file is the command's failure (1), as `maven config check` says of it; no
/// daemon is 2.
pub(crate) fn exit_code(e: &IpcError) -> u8 {
    match e {
        IpcError::Remote { .. } => EXIT_FAILED,
        e => e.exit_code(),
    }
}

/// What a reload did, a line each, as the owner reads it.
pub(crate) fn lines(v: &ReloadView) -> Vec<String> {
    let mut out = vec![format!(
        "reloaded {}",
        v.config
            .as_deref()
            .map_or("the defaults (no configuration file)".into(), shown::line)
    )];
    let names = |n: &[String]| {
        n.iter()
            .map(|s| shown::line(s).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (what, list) in [
        ("started", &v.added),
        ("stopped", &v.removed),
        ("restarted", &v.restarted),
    ] {
        if !list.is_empty() {
            out.push(format!("servers {what}: {}", names(list)));
        }
    }
    if !v.retried.is_empty() {
        out.push(format!(
            "servers that were failing, dialled again now: {}",
            names(&v.retried)
        ));
    }
    for (name, why) in &v.not_started {
        out.push(format!(
            "server not started: {}: {}",
            shown::line(name),
            shown::line(why)
        ));
    }
    if !v.not_enabled.is_empty() {
        out.push(format!(
            "servers known, not enabled (never dialled): {}",
            names(&v.not_enabled)
        ));
    }
    if !v.kept.is_empty() {
        out.push(format!(
            "servers unchanged (connections kept): {}",
            names(&v.kept)
        ));
    }
    if v.feeds_restarted {
        out.push("feeds: the poller follows the new list".into());
    }
    if v.router_changed {
        out.push("router: made afresh".into());
    }
    if v.acts_changed {
        out.push("acts: changed (new ones are proposed on the page)".into());
    }
    for (row, why) in &v.withdrawn {
        out.push(format!(
            "withdrawn {}: {}",
            shown::line(row),
            shown::line(why)
        ));
    }
    if v.page_restarted {
        out.push("page: served afresh on the new settings (sign in again)".into());
    }
    if v.voice_restarted {
        out.push("voice: the listener follows the new settings".into());
    }
    out
}
