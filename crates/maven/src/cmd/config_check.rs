//! `maven config check [PATH]`.

use crate::exit::{errln, outln};
use std::path::Path;
use std::process::ExitCode;

use config::Config;

use crate::exit::EXIT_FAILED;

pub(crate) fn run(path: Option<&Path>) -> ExitCode {
    let shown = path
        .map(Path::to_path_buf)
        .unwrap_or_else(config::default_config_path);
    match Config::load(path) {
        Ok(c) => {
            match &c.source {
                Some(p) => outln!("{}: ok ({})", p.display(), c.counts()),
                None => outln!(
                    "{}: no such file; every default applies (nothing external)",
                    shown.display()
                ),
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            errln!("{}", shown::block(&e.to_string()));
            ExitCode::from(EXIT_FAILED)
        }
    }
}
