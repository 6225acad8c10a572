//! `maven say TEXT…`: one turn.
//!
//! A Ctrl-C (SIGINT) while the answer is awaited ends the command with exit 130, and says on
//! stderr what it does not stop: the daemon goes on with the turn, an act it runs finishes
//! there and is recorded with its result, which `maven acts` shows.

use crate::exit::{errln, outln};
use std::path::Path;
use std::process::ExitCode;

use super::runtime;
use super::show::print_json;
use crate::ipc::client as ipc;
use wire::methods::Request;
use wire::views::TurnView;

/// The exit code of a command ended by SIGINT (128 + 2), as shells report it.
const EXIT_INTERRUPTED: u8 = 130;

/// What an interrupted `maven say` says on stderr.
const INTERRUPTED: &str = "maven say: interrupted. The daemon goes on with the turn: \
an act it runs finishes there and is recorded; `maven acts` shows its result.";

pub(crate) fn run(data_dir: &Path, text: &str, as_json: bool, explain: bool) -> ExitCode {
    runtime(async {
        // Watched before the request is sent: a Ctrl-C from then on is this command's.
        let mut interrupt =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()) {
                Ok(s) => Some(s),
                Err(e) => {
                    errln!("maven say: cannot watch Ctrl-C ({e}); it ends the command at once");
                    None
                }
            };
        let interrupted = async {
            match interrupt.as_mut() {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        let req = Request::Turn {
            text: text.to_owned(),
            explain,
        };
        let answer = tokio::select! {
            a = ipc::ask::<TurnView>(data_dir, &req) => a,
            () = interrupted => {
                errln!("{INTERRUPTED}");
                return ExitCode::from(EXIT_INTERRUPTED);
            }
        };
        match answer {
            Ok(turn) => {
                if let (Some(e), false) = (&turn.explain, as_json) {
                    errln!("explain: {}", shown::line(e));
                }
                if as_json {
                    print_json(&turn);
                } else {
                    // The answer quotes tool results and feed items: shown, never obeyed.
                    outln!("{}", shown::block(&turn.turn.text()));
                }
                if turn.turn.ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(crate::exit::EXIT_FAILED)
                }
            }
            Err(e) => {
                errln!("maven say: {}", shown::block(&e.to_string()));
                ExitCode::from(e.exit_code())
            }
        }
    })
}
