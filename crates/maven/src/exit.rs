//! The process exit codes of every command (I-4) and the daemon's log format: what the
//! command line, the daemon and the commands share. A leaf: it names nothing of the crate.
//!
//! Also the only writers of the binary to stdout and stderr (`out!`, `outln!`, `errln!`):
//! `print!`, `println!`, `eprint!` and `eprintln!` panic when their stream is closed, and
//! clippy's `disallowed-macros` (clippy.toml) refuses them everywhere else.

use clap::ValueEnum;

/// Exit code: the command failed.
pub(crate) const EXIT_FAILED: u8 = 1;
/// Exit code: usage or configuration error, or no daemon running.
pub(crate) const EXIT_USAGE: u8 = 2;

/// The daemon's log format on stderr.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum LogFormat {
    Human,
    Json,
}

/// Writes to stdout, whole. A reader that went away (`maven notes | head -1`) ends the process
/// at once, quietly, with exit 0 (as ripgrep does): the output was not wanted any more. Any
/// other write error is said on stderr and exits 1.
pub(crate) fn stdout_bytes(bytes: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let r = out.write_all(bytes).and_then(|()| out.flush());
    if let Err(e) = r {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        errln!("maven: cannot write to stdout: {e}");
        std::process::exit(i32::from(EXIT_FAILED));
    }
}

/// Writes formatted text to stderr, whole. A stderr that cannot be written (closed, full) is
/// not an error of the command: the text is dropped and the command goes on, so no message can
/// panic (as `eprintln!` does).
pub(crate) fn stderr_fmt(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// [`stdout_bytes`] of formatted text.
pub(crate) fn stdout_fmt(args: std::fmt::Arguments<'_>) {
    match args.as_str() {
        Some(s) => stdout_bytes(s.as_bytes()),
        None => stdout_bytes(args.to_string().as_bytes()),
    }
}

/// `print!` through [`stdout_fmt`]: never panics on a closed pipe.
macro_rules! out {
    ($($t:tt)*) => { $crate::exit::stdout_fmt(format_args!($($t)*)) };
}

/// `println!` through [`stdout_fmt`]: never panics on a closed pipe.
macro_rules! outln {
    () => { $crate::exit::stdout_bytes(b"\n") };
    ($($t:tt)*) => { $crate::exit::stdout_fmt(format_args!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` through [`stderr_fmt`]: never panics on a closed stderr.
macro_rules! errln {
    () => { $crate::exit::stderr_fmt(format_args!("\n")) };
    ($($t:tt)*) => { $crate::exit::stderr_fmt(format_args!("{}\n", format_args!($($t)*))) };
}

pub(crate) use {errln, out, outln};
