//! `maven completions bash|zsh|fish`: the shell completion script on stdout (clap_complete).

use std::process::ExitCode;

use clap::ValueEnum;

/// The shells a completion script is written for.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Prints the completion script of `cmd` for `shell`.
pub(crate) fn run(mut cmd: clap::Command, shell: Shell) -> ExitCode {
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let name = cmd.get_name().to_owned();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut buf);
    crate::exit::stdout_bytes(&buf);
    ExitCode::SUCCESS
}
