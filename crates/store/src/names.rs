//! How the stored spellings of states and kinds are read back.

use std::str::FromStr;

use crate::error::Error;
use crate::model::{ToolKind, ToolState};

impl FromStr for ToolState {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolState::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| Error::invalid("tool state", format!("unknown state {s:?}")))
    }
}

impl FromStr for ToolKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "mcp" => Ok(ToolKind::Mcp),
            "local" => Ok(ToolKind::Local),
            other => Err(Error::invalid(
                "tool kind",
                format!("{other:?} is neither \"mcp\" nor \"local\""),
            )),
        }
    }
}
