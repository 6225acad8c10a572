//! What Maven would do with each tool of a listing, as `inspect` reports it.

use allowlist::catalogue::{self as tools, Verdict};
use mcp::Tool;
use serde::Serialize;
use serde_json::Value;
use shown::line;

use wire::views::{ServerInfo, Transport};

/// The longest tool name the text report shows whole: every name the allowlist accepts
/// (`[A-Za-z0-9_.-]{1,128}`); a longer one is cut, with its length.
const NAME_SHOWN: usize = 128;

/// One tool's line of the report.
#[derive(Debug, Serialize)]
struct ToolRow {
    name: String,
    local_name: String,
    fingerprint: String,
    read_only_claim: bool,
    destructive: bool,
    description: String,
    /// "propose" or "refuse".
    #[serde(serialize_with = "verdict_word")]
    verdict: Verdict,
    /// Why it is refused; null when it would be proposed.
    reason: Option<String>,
}

fn verdict_word<S: serde::Serializer>(v: &Verdict, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v.as_str())
}

/// A tool the client left out of the listing, and why.
#[derive(Debug, Serialize)]
struct LeftOut {
    name: String,
    reason: String,
}

/// Everything `inspect` prints; its fields in the order of `--json`.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    server: String,
    transport: Transport,
    protocol_version: String,
    era: &'static str,
    era_chosen: String,
    server_info: ServerInfo,
    violations: u64,
    tools: Vec<ToolRow>,
    /// Tools the client left out of the listing (invalid `x-mcp-header` declarations).
    left_out: Vec<LeftOut>,
    warnings: Vec<String>,
    /// Over `max_tools` without `allow_tools`: the tools that claim read-only and would be
    /// proposed once named, for a ready `"allow_tools"` line.
    suggested_allow_tools: Option<Vec<String>>,
}

impl Report {
    pub(super) fn new(
        server: &str,
        transport: Transport,
        info: &mcp::ServerInfo,
        violations: u64,
        listing: &mcp::ToolList,
        allow_tools: &[String],
        max_tools: usize,
    ) -> Report {
        let list: &[Tool] = &listing.tools;
        let verdicts = tools::verdicts(list, allow_tools, max_tools);
        let names = allowlist::local_names(server, list, &Default::default());
        let mut warnings = Vec::new();
        if listing.skipped > 0 {
            warnings.push(format!(
                "{} entries of the listing are not tools (no string name) and were skipped",
                listing.skipped
            ));
        }
        let over_cap = allow_tools.is_empty() && list.len() > max_tools;
        let suggested_allow_tools = over_cap.then(|| suggest_allow_tools(list, max_tools));
        if over_cap {
            warnings.push(format!(
                "the server offers {} tools, more than max_tools ({max_tools}); without \
                 allow_tools it contributes none",
                list.len()
            ));
        }
        for wanted in allow_tools {
            if !list.iter().any(|t| &t.name == wanted) {
                warnings.push(format!(
                    "allow_tools names {wanted:?}, which the server does not offer"
                ));
            }
        }
        if violations > 0 {
            warnings.push(format!("the server broke the protocol {violations} times"));
        }
        let rows = list
            .iter()
            .zip(verdicts)
            .zip(names)
            .map(|((t, verdict), local_name)| {
                let full = t.description().unwrap_or("");
                let description = tools::cap_description(full, tools::DESCRIPTION_CAP);
                if matches!(description, std::borrow::Cow::Owned(_)) {
                    warnings.push(format!(
                        "the description of {:?} is longer than {} characters and was cut",
                        t.name,
                        tools::DESCRIPTION_CAP
                    ));
                }
                ToolRow {
                    name: t.name.clone(),
                    local_name,
                    fingerprint: t.fingerprint(),
                    read_only_claim: t.read_only_claim(),
                    destructive: t.destructive(),
                    description: description.into_owned(),
                    reason: verdict.reason().map(str::to_owned),
                    verdict,
                }
            })
            .collect();
        Report {
            server: server.to_owned(),
            transport,
            protocol_version: info.protocol_version.clone(),
            era: info.era.as_str(),
            era_chosen: info.chosen.clone(),
            server_info: ServerInfo {
                name: info.name.clone(),
                version: info.version.clone(),
            },
            violations,
            tools: rows,
            left_out: listing
                .rejected
                .iter()
                .map(|(name, reason)| LeftOut {
                    name: name.clone(),
                    reason: reason.clone(),
                })
                .collect(),
            warnings,
            suggested_allow_tools,
        }
    }

    /// The line to paste into the server's block, when there is one to suggest.
    fn paste_line(&self) -> Option<String> {
        let names = self.suggested_allow_tools.as_ref()?;
        let quoted: Vec<String> = names
            .iter()
            .map(|n| Value::from(n.as_str()).to_string())
            .collect();
        Some(format!("\"allow_tools\": [{}]", quoted.join(", ")))
    }

    /// The report as `--json` shows it (without the sandbox and the authorization).
    #[cfg(test)]
    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    pub(super) fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(s, "server:    {} ({})", line(&self.server), self.transport);
        let _ = writeln!(s, "protocol:  {}", line(&self.protocol_version));
        let _ = writeln!(s, "era:       {} ({})", self.era, line(&self.era_chosen));
        let _ = writeln!(
            s,
            "offers:    {} {}",
            line(&self.server_info.name),
            line(&self.server_info.version)
        );
        let _ = writeln!(s, "violations: {}", self.violations);
        let _ = writeln!(s, "tools ({}):", self.tools.len());
        for t in &self.tools {
            let _ = writeln!(
                s,
                "  {} -> {}",
                shown::capped(&t.name, NAME_SHOWN),
                shown::capped(&t.local_name, NAME_SHOWN)
            );
            let _ = writeln!(s, "    fingerprint: {}", line(&t.fingerprint));
            let _ = writeln!(
                s,
                "    read-only claim: {}, destructive: {}",
                yes_no(t.read_only_claim),
                yes_no(t.destructive)
            );
            match t.verdict.reason() {
                None => {
                    let _ = writeln!(s, "    verdict: propose");
                }
                Some(r) => {
                    let _ = writeln!(s, "    verdict: refuse ({})", line(r));
                }
            }
            if !t.description.is_empty() {
                let _ = writeln!(s, "    description: {}", line(&t.description));
            }
        }
        for LeftOut { name, reason } in &self.left_out {
            let _ = writeln!(
                s,
                "left out: {} — {}",
                shown::capped(name, NAME_SHOWN),
                line(reason)
            );
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {}", line(w));
        }
        if let (Some(names), Some(paste)) = (&self.suggested_allow_tools, self.paste_line()) {
            if names.is_empty() {
                let _ = writeln!(
                    s,
                    "none of its tools claims read-only: name the tools you want in \
                     mcp_servers.{}:",
                    line(&self.server)
                );
            } else {
                let _ = writeln!(
                    s,
                    "to allow the {} tools that claim read-only, paste into mcp_servers.{}:",
                    names.len(),
                    line(&self.server)
                );
            }
            let _ = writeln!(s, "{}", line(&paste));
            if !names.is_empty() {
                let _ = writeln!(
                    s,
                    "or run: maven mcp allow {} {}",
                    line(&self.server),
                    names
                        .iter()
                        .map(|n| line(n).into_owned())
                        .collect::<Vec<_>>()
                        .join(" ")
                );
            }
        }
        s
    }
}

/// The tools of an over-cap listing that claim read-only (`readOnlyHint`) and would be
/// proposed once named in `allow_tools` (a bad name or schema stays refused), in order.
fn suggest_allow_tools(list: &[Tool], max_tools: usize) -> Vec<String> {
    let read_only: Vec<String> = list
        .iter()
        .filter(|t| t.read_only_claim())
        .map(|t| t.name.clone())
        .collect();
    tools::verdicts(list, &read_only, max_tools)
        .into_iter()
        .zip(list)
        .filter(|(v, _)| v.reason().is_none())
        .map(|(_, t)| t.name.clone())
        .collect()
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn listing(tools: Vec<Value>) -> mcp::ToolList {
        // ToolList is non-exhaustive; build it the way the client does, from a tools/list page.
        let tools: Vec<Tool> = tools.into_iter().filter_map(Tool::from_value).collect();
        mcp::ToolList::from_tools(tools)
    }

    fn info() -> mcp::ServerInfo {
        mcp::ServerInfo::new("2025-11-25", "kit", "1.0")
    }

    #[test]
    fn json_shape() {
        let l = listing(vec![
            json!({"name":"echo","description":"Echo.","inputSchema":{"type":"object"},
                   "annotations":{"readOnlyHint":true}}),
            json!({"name":"bad name","inputSchema":{"type":"object"}}),
        ]);
        let r = Report::new("Kit", Transport::Stdio, &info(), 2, &l, &[], 12).to_json();
        assert_eq!(r["server"], "Kit");
        assert_eq!(r["transport"], "stdio");
        assert_eq!(r["protocol_version"], "2025-11-25");
        assert_eq!(r["era"], "legacy");
        assert_eq!(r["left_out"], json!([]));
        assert_eq!(r["server_info"], json!({"name":"kit","version":"1.0"}));
        assert_eq!(r["violations"], 2);
        let t = &r["tools"][0];
        assert_eq!(t["name"], "echo");
        assert_eq!(t["local_name"], "kit_echo");
        assert!(t["fingerprint"].as_str().unwrap().starts_with("sha256:v1:"));
        assert_eq!(t["read_only_claim"], true);
        assert_eq!(t["destructive"], false);
        assert_eq!(t["verdict"], "propose");
        assert_eq!(t["reason"], Value::Null);
        let bad = &r["tools"][1];
        assert_eq!(bad["verdict"], "refuse");
        assert_eq!(bad["destructive"], true);
        assert!(bad["reason"].as_str().unwrap().contains("name"));
        assert_eq!(r["warnings"][0], "the server broke the protocol 2 times");
    }

    #[test]
    fn over_cap_and_allow_tools_warnings() {
        let many: Vec<Value> = (0..13)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        let r = Report::new(
            "s",
            Transport::Http,
            &info(),
            0,
            &listing(many.clone()),
            &[],
            12,
        )
        .to_json();
        assert!(r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["verdict"] == "refuse"));
        assert!(r["warnings"][0].as_str().unwrap().contains("max_tools"));
        let allow = vec!["t1".to_owned(), "gone".to_owned()];
        let r = Report::new("s", Transport::Http, &info(), 0, &listing(many), &allow, 12).to_json();
        let proposed: Vec<_> = r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["verdict"] == "propose")
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(proposed, [json!("t1")]);
        assert!(r["warnings"][0].as_str().unwrap().contains("\"gone\""));
    }

    #[test]
    fn over_cap_suggests_a_ready_allow_tools_line_of_the_read_only_tools() {
        // 14 tools as the filesystem server offers them: some claim read-only, one of those
        // has a name the allowlist refuses.
        let mut many: Vec<Value> = (0..11)
            .map(|i| json!({"name": format!("write_{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        for name in ["read_file", "list_directory", "bad name"] {
            many.push(json!({"name": name, "inputSchema": {"type": "object"},
                             "annotations": {"readOnlyHint": true}}));
        }
        let r = Report::new(
            "files",
            Transport::Stdio,
            &info(),
            0,
            &listing(many.clone()),
            &[],
            12,
        );
        assert_eq!(
            r.paste_line().as_deref(),
            Some(r#""allow_tools": ["read_file", "list_directory"]"#)
        );
        let text = r.to_text();
        assert!(
            text.ends_with(
                "to allow the 2 tools that claim read-only, paste into mcp_servers.files:\n\
                 \"allow_tools\": [\"read_file\", \"list_directory\"]\n\
                 or run: maven mcp allow files read_file list_directory\n"
            ),
            "{text}"
        );
        assert_eq!(
            r.to_json()["suggested_allow_tools"],
            json!(["read_file", "list_directory"])
        );
        // The suggestion, pasted, proposes exactly those tools.
        let allow = r.suggested_allow_tools.clone().unwrap();
        let pasted = Report::new(
            "files",
            Transport::Stdio,
            &info(),
            0,
            &listing(many),
            &allow,
            12,
        );
        let proposed: Vec<&str> = pasted
            .tools
            .iter()
            .filter(|t| t.verdict.reason().is_none())
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(proposed, ["read_file", "list_directory"]);
        assert_eq!(
            pasted.paste_line(),
            None,
            "nothing to suggest with allow_tools set"
        );
        assert_eq!(pasted.to_json()["suggested_allow_tools"], Value::Null);
    }

    #[test]
    fn over_cap_without_read_only_tools_suggests_an_empty_line_to_fill() {
        let many: Vec<Value> = (0..13)
            .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
            .collect();
        let text = Report::new("s", Transport::Http, &info(), 0, &listing(many), &[], 12).to_text();
        assert!(
            text.ends_with(
                "none of its tools claims read-only: name the tools you want in \
                 mcp_servers.s:\n\"allow_tools\": []\n"
            ),
            "{text}"
        );
        let few = listing(vec![
            json!({"name": "a", "inputSchema": {"type": "object"}}),
        ]);
        let r = Report::new("s", Transport::Http, &info(), 0, &few, &[], 12);
        assert!(
            !r.to_text().contains("allow_tools"),
            "under the cap: no hint"
        );
    }

    #[test]
    fn text_escapes_server_written_control_characters() {
        let l = listing(vec![
            json!({"name":"echo","description":"a\u{1b}[31mred\nline",
                                    "inputSchema":{"type":"object"}}),
        ]);
        let hostile = mcp::ServerInfo::new("2025-11-25", "esc\u{1b}]0;pwned\u{7}", "1.0\u{9b}2J");
        let text = Report::new("s", Transport::Stdio, &hostile, 0, &l, &[], 12).to_text();
        assert!(
            text.contains("offers:    esc\\e]0;pwned\\u{7} 1.0\\u{9b}2J"),
            "{text}"
        );
        assert!(
            !text.chars().any(|c| shown::is_hazard(c) && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("description: a\\e[31mred⏎line"), "{text}");
    }
}
