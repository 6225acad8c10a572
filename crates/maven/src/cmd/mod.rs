//! Bodies of the offline commands, one file each.

pub(crate) mod completions;
pub(crate) mod doctor;
pub(crate) mod feeds_parse;
pub(crate) mod fetch;
pub(crate) mod man;
pub(crate) mod mcp_import;
pub(crate) mod mcp_inspect;
pub(crate) mod mcp_login;
pub(crate) mod service;
