//! `maven web enroll` and `maven web passphrase`.

use crate::exit::{errln, outln};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use crate::exit::{EXIT_FAILED, EXIT_USAGE};
use wire::views::EnrollLink;

/// Shortest passphrase accepted.
const MIN_PASSPHRASE: usize = 8;

/// Asks the running daemon for a one-time enrollment link and prints it.
pub(crate) fn enroll(data_dir: &Path) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            errln!("maven web enroll: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    match rt.block_on(crate::ipc::client::ask::<EnrollLink>(
        data_dir,
        &wire::methods::Request::WebEnroll,
    )) {
        Ok(link) => {
            let (url, mins) = (link.url, link.valid_s / 60);
            outln!("{url}");
            errln!(
                "Open this link in a browser on this machine within {mins} minutes to enroll a passkey; it works once."
            );
            let _ = std::io::stdout().flush();
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("maven web enroll: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Reads a passphrase (twice, without echo, on a terminal; one line from standard input
/// otherwise) and prints its argon2id hash line; with `write`, sets it as `web.passphrase_hash`
/// in the configuration file instead (through the one config writer) and reloads a running
/// daemon. The file: `config` (`--config`), else the one the running daemon reads, else the
/// default path.
pub(crate) fn passphrase(config: Option<&Path>, data_dir: &Path, write: bool) -> ExitCode {
    let read = if std::io::stdin().is_terminal() {
        match (
            rpassword::prompt_password("New passphrase: "),
            rpassword::prompt_password("Again: "),
        ) {
            (Ok(a), Ok(b)) if a == b => Ok(a),
            (Ok(_), Ok(_)) => Err("the two passphrases differ".to_owned()),
            (Err(e), _) | (_, Err(e)) => Err(format!("cannot read the passphrase: {e}")),
        }
    } else {
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(_) => Ok(line.trim_end_matches(['\n', '\r']).to_owned()),
            Err(e) => Err(format!(
                "cannot read the passphrase from standard input: {e}"
            )),
        }
    };
    let pass = match read {
        Ok(p) => p,
        Err(e) => {
            errln!("maven web passphrase: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if pass.chars().count() < MIN_PASSPHRASE {
        errln!("maven web passphrase: the passphrase needs at least {MIN_PASSPHRASE} characters");
        return ExitCode::from(EXIT_USAGE);
    }
    match stepup::hash_passphrase(&pass) {
        Ok(h) if write => super::runtime(write_hash(config, data_dir, h)),
        Ok(h) => {
            outln!("{h}");
            errln!("Put this line in the configuration as \"web\": {{\"passphrase_hash\": \"...\"}} and run `maven reload` (a restart is not needed); `maven web passphrase --write` does both.");
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("maven web passphrase: cannot hash: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// Sets `web.passphrase_hash` in the file the daemon reads and reloads it.
async fn write_hash(config: Option<&Path>, data_dir: &Path, hash: String) -> ExitCode {
    let path = match config {
        Some(p) => p.to_path_buf(),
        None => match crate::ipc::client::ask::<wire::views::StatusView>(
            data_dir,
            &wire::methods::Request::Status,
        )
        .await
        {
            Ok(wire::views::StatusView {
                config: Some(reads),
                ..
            }) => reads.into(),
            _ => super::config_edit::target(None),
        },
    };
    let res = super::config_edit::edit(&path, |file| {
        let web = file
            .rest
            .entry("web")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        let Some(web) = web.as_object_mut() else {
            return Err(format!(
                "{}: \"web\" is not an object; fix it first (maven config check)",
                path.display()
            ));
        };
        web.insert("passphrase_hash".into(), serde_json::Value::String(hash));
        Ok(())
    });
    match res {
        Ok(w) => {
            outln!("web.passphrase_hash: set");
            if super::config_edit::written_then_reload(&w, data_dir).await {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_FAILED)
            }
        }
        Err(e) => {
            errln!("maven web passphrase: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
