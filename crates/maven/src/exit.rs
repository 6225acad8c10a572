//! The process exit codes of every command (I-4) and the daemon's log format: what the
//! command line, the daemon and the commands share. A leaf: it names nothing of the crate.

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
