//! `maven say TEXT…`: one turn.

use crate::exit::{errln, outln};
use std::path::Path;
use std::process::ExitCode;

use super::runtime;
use super::show::print_json;
use crate::ipc::client as ipc;
use crate::ipc::methods::Request;
use crate::views::TurnView;

pub(crate) fn run(data_dir: &Path, text: &str, as_json: bool) -> ExitCode {
    runtime(async {
        let req = Request::Turn {
            text: text.to_owned(),
        };
        match ipc::ask::<TurnView>(data_dir, &req).await {
            Ok(turn) => {
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
