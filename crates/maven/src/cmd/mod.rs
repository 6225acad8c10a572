//! The bodies of the commands, one file per command or group: `cli` parses the command line
//! and calls them. What several of them share is here: loading the configuration, its name,
//! a runtime.

pub(crate) mod acts;
pub(crate) mod completions;
pub(crate) mod config_check;
pub(crate) mod config_edit;
pub(crate) mod doctor;
pub(crate) mod feeds_add;
pub(crate) mod feeds_edit;
pub(crate) mod feeds_opml;
pub(crate) mod feeds_parse;
pub(crate) mod fetch;
pub(crate) mod listen;
pub(crate) mod man;
pub(crate) mod mcp_edit;
pub(crate) mod mcp_import;
pub(crate) mod mcp_inspect;
pub(crate) mod mcp_login;
pub(crate) mod reload;
pub(crate) mod say;
pub(crate) mod sentences;
pub(crate) mod service;
pub(crate) mod show;
pub(crate) mod web;

use crate::exit::errln;
use std::path::Path;
use std::process::ExitCode;

use config::Config;

use crate::exit::EXIT_FAILED;

/// What to do about a door that refuses the URL of `block` (`the feed "x"`, `mcp_servers.y`):
/// the one wording of `maven doctor`, `maven feeds status` and `maven feeds add`.
pub(crate) fn door_fix(block: &str) -> String {
    format!(
        "change the URL of {block}, or widen its door (allow_private on the block, \
         fetch.allow_hosts / fetch.deny_hosts) if the address is yours"
    )
}

pub(crate) fn config_name(cfg: &Config) -> String {
    cfg.source
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the default configuration (no file)".to_string())
}

/// Loads the configuration for an offline command, printing the problems on failure.
pub(crate) fn load_config(path: Option<&Path>) -> Option<Config> {
    match Config::load(path) {
        Ok(c) => Some(c),
        Err(e) => {
            errln!("{}", shown::block(&e.to_string()));
            None
        }
    }
}

pub(crate) fn runtime<F: std::future::Future<Output = ExitCode>>(f: F) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => {
            errln!("maven: cannot start the async runtime: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
