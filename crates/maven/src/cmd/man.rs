//! `maven man`: the man page (roff, section 1) on stdout (clap_mangen).

use std::process::ExitCode;

use crate::exit::{errln, EXIT_FAILED};

/// Prints the man page of `cmd`.
pub(crate) fn run(cmd: clap::Command) -> ExitCode {
    let mut buf = Vec::new();
    if let Err(e) = clap_mangen::Man::new(cmd).render(&mut buf) {
        errln!("maven man: cannot render the page: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    crate::exit::stdout_bytes(&buf);
    ExitCode::SUCCESS
}
