//! The names every reader of a server's listing shares, and the one listing cap: the host's
//! rules kept here, below both the configuration and the allowlist, so that neither
//! needs the other (nor the store) to read a name.

/// Default `max_tools` of a server block: more tools than this without `allow_tools`, and the
/// server contributes nothing.
pub const DEFAULT_MAX_TOOLS: usize = 12;
/// Longest remote tool name Maven accepts.
pub const TOOL_NAME_MAX: usize = 128;

/// Whether every byte is `[A-Za-z0-9_.-]`.
pub fn name_bytes(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// a tool name Maven accepts: `[A-Za-z0-9_.-]{1,128}`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=TOOL_NAME_MAX).contains(&name.len()) && name_bytes(name)
}

/// One name flattened: lowercase ASCII letters and digits, anything else `_`.
pub fn flatten(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_flattened_and_checked_by_the_host_s_rules() {
        assert_eq!(flatten("My-Server.v2 ü"), "my_server_v2__");
        assert!(valid_tool_name("list_tasks.v2-b"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("a b"));
        assert!(!valid_tool_name(&"x".repeat(TOOL_NAME_MAX + 1)));
        assert!(valid_tool_name(&"x".repeat(TOOL_NAME_MAX)));
    }
}
