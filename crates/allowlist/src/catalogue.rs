//! What Maven does with a tool a server offers, and the limits shared by every reader.

use mcp::Tool;
use serde_json::Value;

/// Cap of a description where it reaches the router prompt, the page or `maven tools`, in
/// characters.
pub const DESCRIPTION_CAP: usize = 300;
pub use mcp::names::{valid_tool_name, DEFAULT_MAX_TOOLS, TOOL_NAME_MAX};
/// Longest local (row) name: a flattened server and tool name plus a suffix.
pub const ROW_NAME_MAX: usize = store::limits::TOOL_NAME;

use mcp::names::name_bytes;

/// A local (row) name as the store keeps it: `[A-Za-z0-9_.-]{1,160}`.
pub fn valid_row_name(name: &str) -> bool {
    (1..=ROW_NAME_MAX).contains(&name.len()) && name_bytes(name)
}

/// Cap a description at `cap` characters: a longer one is cut after its last whole word that
/// fits (mid-word only when one word alone is that long) and marked with `…`.
pub fn cap_description(s: &str, cap: usize) -> std::borrow::Cow<'_, str> {
    if s.chars().count() <= cap {
        return std::borrow::Cow::Borrowed(s);
    }
    let room = shown::prefix_chars(s, cap.saturating_sub(1));
    // The cut falls inside a word unless the next character is a space.
    let next_is_space = s[room.len()..].starts_with(char::is_whitespace);
    let words = if next_is_space {
        room
    } else {
        room.rfind(char::is_whitespace).map_or(room, |i| &room[..i])
    };
    let words = words.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':'));
    let kept = if words.is_empty() { room } else { words };
    std::borrow::Cow::Owned(format!("{kept}…"))
}

/// Why a tool's `inputSchema` is malformed, or `None` when it is usable: an object with `type:
/// "object"`, `properties` (if any) an object of objects, `required` (if any) an array of
/// strings.
pub fn schema_problem(tool: &Tool) -> Option<String> {
    let Some(schema) = tool.raw.get("inputSchema") else {
        return Some("no inputSchema".to_owned());
    };
    let Value::Object(schema) = schema else {
        return Some("inputSchema is not an object".to_owned());
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Some("inputSchema type is not \"object\"".to_owned());
    }
    match schema.get("properties") {
        None => {}
        Some(Value::Object(props)) if props.values().any(|p| !p.is_object() && !p.is_boolean()) => {
            return Some("a property schema is not an object".to_owned());
        }
        Some(Value::Object(_)) => {}
        Some(_) => return Some("properties is not an object".to_owned()),
    }
    match schema.get("required") {
        None => {}
        Some(Value::Array(r)) if r.iter().all(Value::is_string) => {}
        Some(_) => return Some("required is not an array of strings".to_owned()),
    }
    None
}

/// What Maven would do with a discovered tool.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// It would be proposed (never enabled by discovery).
    Propose,
    /// It would not be proposed, for this reason.
    Refuse(String),
}

impl Verdict {
    /// "propose" or "refuse".
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Propose => "propose",
            Verdict::Refuse(_) => "refuse",
        }
    }

    /// The reason of a refusal.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Propose => None,
            Verdict::Refuse(r) => Some(r),
        }
    }
}

/// A-9 verdicts for one complete listing, one per tool, in order. Over `max_tools` without
/// `allow_tools`, the server contributes nothing; with `allow_tools`, only named tools are
/// considered; a bad name or a malformed schema is refused.
pub fn verdicts(tools: &[Tool], allow_tools: &[String], max_tools: usize) -> Vec<Verdict> {
    let over_cap = allow_tools.is_empty() && tools.len() > max_tools;
    tools
        .iter()
        .map(|t| {
            if over_cap {
                return Verdict::Refuse(format!(
                    "the server offers {} tools, more than max_tools ({max_tools}), and \
                     allow_tools is not set",
                    tools.len()
                ));
            }
            if !allow_tools.is_empty() && !allow_tools.iter().any(|a| a == &t.name) {
                return Verdict::Refuse("not named in allow_tools".to_owned());
            }
            if !valid_tool_name(&t.name) {
                return Verdict::Refuse("the name is not [A-Za-z0-9_.-]{1,128}".to_owned());
            }
            if let Some(p) = schema_problem(t) {
                return Verdict::Refuse(format!("malformed schema: {p}"));
            }
            Verdict::Propose
        })
        .collect()
}

#[cfg(test)]
mod cap_tests {
    use super::cap_description;

    #[test]
    fn a_long_description_is_cut_after_a_whole_word_and_marked() {
        for (s, cap, want) in [
            ("short", 10, "short"),
            ("exactly ten", 11, "exactly ten"),
            (
                "Reads a file from disk, returning its text",
                20,
                "Reads a file from…",
            ),
            ("Reads a file, returning", 15, "Reads a file…"),
            ("word boundary here", 14, "word boundary…"),
            ("Supercalifragilistic", 10, "Supercali…"),
            ("Читает файл с диска целиком", 15, "Читает файл с…"),
        ] {
            let got = cap_description(s, cap);
            assert_eq!(got, want, "{s:?} at {cap}");
            assert!(got.chars().count() <= cap);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: Value) -> Tool {
        Tool::from_value(v).unwrap()
    }

    #[test]
    fn names() {
        let cases = [
            ("echo", true),
            ("a.b-c_D9", true),
            ("", false),
            ("has space", false),
            ("slash/y", false),
            ("é", false),
            (&*"x".repeat(128), true),
            (&*"x".repeat(129), false),
        ];
        for (n, ok) in cases {
            assert_eq!(valid_tool_name(n), ok, "{n}");
        }
    }

    #[test]
    fn verdict_table() {
        let ok = |n: &str| tool(json!({"name": n, "inputSchema": {"type": "object"}}));
        let bad_schema = tool(json!({"name":"b","inputSchema":{"type":"string"}}));
        let no_schema = tool(json!({"name":"c"}));
        let bad_req = tool(json!({"name":"d","inputSchema":{"type":"object","required":[1]}}));
        let bad_name = ok("bad name");
        let list = vec![ok("a"), bad_schema, no_schema, bad_req, bad_name];
        let v = verdicts(&list, &[], 12);
        assert_eq!(
            v.iter().map(Verdict::as_str).collect::<Vec<_>>(),
            ["propose", "refuse", "refuse", "refuse", "refuse"]
        );
        assert!(v[1].reason().unwrap().contains("malformed schema"));
        assert!(v[4].reason().unwrap().contains("name"));
        // Over the cap without allow_tools: nothing.
        let many: Vec<Tool> = (0..13).map(|i| ok(&format!("t{i}"))).collect();
        assert!(verdicts(&many, &[], 12)
            .iter()
            .all(|v| v.reason().is_some_and(|r| r.contains("max_tools"))));
        // With allow_tools: only the named ones, whatever the count.
        let v = verdicts(&many, &["t3".to_owned()], 12);
        assert_eq!(v.iter().filter(|v| **v == Verdict::Propose).count(), 1);
        assert_eq!(v[3], Verdict::Propose);
    }

    #[test]
    fn row_names() {
        assert!(valid_row_name("demo_list-tasks.v2"));
        assert!(valid_row_name(&"x".repeat(160)));
        assert!(!valid_row_name(&"x".repeat(161)));
        assert!(!valid_row_name(""));
        assert!(!valid_row_name("a/b"));
    }
}
