//! Maven's configuration file (C-1..C-6): the model, its validation and the webfetch doors
//! built from it.
//!
//! The file is parsed into a `serde_json::Value` first and then walked by hand, so that every
//! error names the file, the JSON path, the value found and what was expected, and so that all
//! errors of a file are reported at once. Every block is shape-checked, including blocks that are
//! written with `"enabled": false`: a typo must not wait for the day the block is switched on.

#![warn(clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

mod convert;
mod error;
pub mod file;
mod model;
mod read;
mod validate;

pub use convert::{Door, DoorError};
pub use error::{Error, Problem, ProblemKind};
pub use model::{
    ActConfig, Config, FeedConfig, FetchConfig, McpDoor, McpOAuthConfig, McpServerConfig,
    McpTarget, McpTiming, RouterConfig, RouterKind, RouterTools, Secret, VoiceConfig, WebConfig,
    DEFAULT_SESSION_HOURS, MAX_SESSION_HOURS,
};

pub use read::parse_duration;
use read::{describe, Validator};

/// Where the configuration is read from when `--config` is not given.
pub fn default_config_path() -> PathBuf {
    xdg_dir("XDG_CONFIG_HOME", ".config").join("maven/config.json")
}

/// Where the data directory is when `--data` is not given.
pub fn default_data_dir() -> PathBuf {
    xdg_dir("XDG_DATA_HOME", ".local/share").join("maven")
}

fn xdg_dir(var: &str, fallback: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => {
            let home = std::env::var_os("HOME").unwrap_or_else(|| ".".into());
            PathBuf::from(home).join(fallback)
        }
    }
}

impl Config {
    /// What the file configures, as `maven config check` and `maven doctor` say it:
    /// `2 feeds, 1 MCP servers, 0 acts`.
    pub fn counts(&self) -> String {
        format!(
            "{} feeds, {} MCP servers, {} acts",
            self.feeds.len(),
            self.mcp_servers.len(),
            self.acts.len()
        )
    }

    /// Loads the configuration. `explicit` is the `--config` argument: an explicitly named file
    /// must exist; the default file may be missing, which means every default.
    pub fn load(explicit: Option<&Path>) -> Result<Config, Error> {
        Config::load_with_file(explicit).map(|(c, _)| c)
    }

    /// [`Config::load`], with the file as JSON beside it (an empty object when no file exists):
    /// what a reload compares block by block with the file it loaded before.
    pub fn load_with_file(explicit: Option<&Path>) -> Result<(Config, Value), Error> {
        let path = explicit
            .map(Path::to_path_buf)
            .unwrap_or_else(default_config_path);
        let file = path.display().to_string();
        match std::fs::read(&path) {
            Ok(bytes) => {
                let mut c = Config::parse(&file, &bytes, &|k| std::env::var(k).ok())?;
                c.source = Some(path);
                // It parsed as JSON just now: the same bytes give the same value.
                let raw = serde_json::from_slice(&bytes).unwrap_or_default();
                Ok((c, raw))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && explicit.is_none() => {
                Ok((Config::defaults(), Value::Object(Map::new())))
            }
            Err(source) => Err(Error::Read { file, source }),
        }
    }

    /// Every default: nothing external configured.
    pub fn defaults() -> Config {
        let mut errors = Vec::new();
        let env = |_: &str| None;
        let mut v = Validator {
            problems: &mut errors,
            env: &env,
        };
        let empty = Map::new();
        let cfg = v.config(&empty);
        debug_assert!(errors.is_empty(), "defaults must validate: {errors:?}");
        cfg
    }

    /// Parses and validates the bytes of a config file. `env` looks up `${NAME}` references.
    pub fn parse(
        file: &str,
        bytes: &[u8],
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, Error> {
        let text = std::str::from_utf8(bytes).map_err(|e| Error::Encoding {
            file: file.to_string(),
            offset: e.valid_up_to(),
        })?;
        let value: Value = serde_json::from_str(text).map_err(|e| Error::Syntax {
            file: file.to_string(),
            line: e.line(),
            column: e.column(),
            message: strip_position(&e.to_string()).to_string(),
        })?;
        let Value::Object(root) = &value else {
            return Err(Error::Invalid {
                file: file.to_string(),
                problems: vec![Problem {
                    path: String::new(),
                    kind: ProblemKind::WrongType {
                        expected: "a JSON object at the top level",
                        found: describe(&value),
                    },
                }],
            });
        };
        let mut problems = Vec::new();
        let mut v = Validator {
            problems: &mut problems,
            env,
        };
        let cfg = v.config(root);
        if problems.is_empty() {
            Ok(cfg)
        } else {
            Err(Error::Invalid {
                file: file.to_string(),
                problems,
            })
        }
    }
}

/// serde_json appends " at line L column C"; we print the position ourselves.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

/// Lowercase, every non-alphanumeric character turned into `_`: the host's
/// flattening of one name.
pub fn flatten_name(s: &str) -> String {
    mcp::names::flatten(s)
}

#[cfg(test)]
mod tests;
