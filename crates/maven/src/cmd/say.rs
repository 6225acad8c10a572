//! `maven say TEXT…`: one turn.

use crate::exit::{errln, outln};
use std::path::Path;
use std::process::ExitCode;

use super::runtime;
use super::show::{print_json, OTHER_SHAPE};
use crate::exit::EXIT_FAILED;
use crate::ipc::client as ipc;
use crate::ipc::methods::Request;
use crate::views::TurnView;

pub(crate) fn run(data_dir: &Path, text: &str, as_json: bool) -> ExitCode {
    runtime(async {
        let req = Request::Turn {
            text: text.to_owned(),
        };
        match ipc::send(data_dir, &req).await {
            Ok(v) => {
                let turn = match serde_json::from_value::<TurnView>(v.clone()) {
                    Ok(t) => t,
                    Err(e) => {
                        errln!("maven say: {OTHER_SHAPE}: {}", shown::line(&e.to_string()));
                        return ExitCode::from(EXIT_FAILED);
                    }
                };
                if as_json {
                    print_json(&v);
                } else {
                    // The answer quotes tool results and feed items: shown, never obeyed.
                    outln!("{}", shown::block(&turn.answer));
                }
                if turn.ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_FAILED)
                }
            }
            Err(e) => {
                errln!("maven say: {}", shown::block(&e.to_string()));
                ExitCode::from(e.exit_code())
            }
        }
    })
}
