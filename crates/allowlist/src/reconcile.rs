//! Discovery into the allowlist (A-5..A-9): what a complete listing does to the rows.
//!
//! Discovery only ever **proposes**. A new tool becomes a proposed row named by
//! [`crate::local_name`], `cmd = ["mcp", server, tool]`, `scope = mcp:<server>`. A known tool
//! whose fingerprint changed drops back to proposed, with the changed fields in its provenance,
//! and destructive raised if it stopped claiming read-only (never lowered). A row that predates
//! fingerprints adopts its fingerprint silently. A tool that a connected server no longer
//! offers — judged only on a complete listing — is withdrawn; a withdrawn tool offered again
//! comes back as proposed. [`plan`] decides all of that from the rows as they are; the store
//! applies the plan in the same transaction that read them, each change with its
//! `tool_events` row.

use std::collections::{BTreeSet, HashSet};

use mcp::Tool;
use serde_json::Value;
use store::{NewTool, Redefinition, Store, ToolChange, ToolKind, ToolRow, ToolState};

use crate::catalogue::{cap_description, verdicts, Verdict, DESCRIPTION_CAP};
use crate::naming::local_name;

/// What the allowlist needs to know of one server block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerPolicy {
    /// The block's name (`mcp_servers.<name>`).
    pub name: String,
    /// `allow_tools`: when not empty, only these tools are considered, whatever their number.
    pub allow_tools: Vec<String>,
    /// `max_tools`: more tools than this without `allow_tools`, and the server contributes
    /// nothing.
    pub max_tools: usize,
}

/// What one listing did, for logs and status.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reconciled {
    /// New rows.
    pub proposed: Vec<String>,
    /// Rows whose shape changed: back to proposed.
    pub redefined: Vec<String>,
    /// Rows that predate fingerprints and adopted one.
    pub adopted: Vec<String>,
    /// Withdrawn rows offered again: proposed.
    pub reoffered: Vec<String>,
    /// Rows the server no longer offers.
    pub withdrawn: Vec<String>,
    /// Tools not proposed, with the reason.
    pub refused: Vec<(String, String)>,
}

impl Reconciled {
    /// A one-line summary for status when the whole server was refused (over cap).
    pub fn over_cap(&self, offered: usize) -> Option<String> {
        if offered > 0 && self.refused.len() == offered {
            let reason = &self.refused[0].1;
            if reason.contains("max_tools") {
                return Some(format!("over cap: {reason}"));
            }
        }
        None
    }
}

/// Applies one complete listing of `server` to the allowlist, in one store transaction.
pub async fn reconcile(
    store: &Store,
    server: &ServerPolicy,
    tools: &[Tool],
) -> Result<Reconciled, store::Error> {
    let (server_owned, tools_owned) = (server.clone(), tools.to_vec());
    let when = now_text();
    let (_, out) = store
        .apply_listing(move |rows| plan(&server_owned, &tools_owned, rows, &when))
        .await?;
    let name = &server.name;
    for row in &out.proposed {
        tracing::info!(server = %name, %row, "tool proposed");
    }
    for row in &out.redefined {
        tracing::warn!(server = %name, %row, "tool redefined by its server: back to proposed");
    }
    for row in &out.withdrawn {
        tracing::info!(server = %name, %row, "tool withdrawn");
    }
    Ok(out)
}

/// The changes one complete listing of `server` makes to `rows` (all rows of the allowlist),
/// with what they mean; `when` is the listing's time as written in provenance.
pub fn plan(
    server: &ServerPolicy,
    tools: &[Tool],
    rows: &[ToolRow],
    when: &str,
) -> (Vec<ToolChange>, Reconciled) {
    let name = &server.name;
    let verdicts = verdicts(tools, &server.allow_tools, server.max_tools);
    let mut taken: HashSet<String> = rows.iter().map(|r| r.name.clone()).collect();
    let mut changes = Vec::new();
    let mut out = Reconciled::default();

    for (tool, verdict) in tools.iter().zip(&verdicts) {
        if let Verdict::Refuse(reason) = verdict {
            out.refused.push((tool.name.clone(), reason.clone()));
            // A row the configuration no longer allows is withdrawn, enabled or not: what
            // is refused is never offered, listed nor run.
            if let Some(row) = rows.iter().find(|r| {
                r.kind == ToolKind::Mcp
                    && r.server == *name
                    && r.tool == tool.name
                    && r.state != ToolState::Withdrawn
            }) {
                changes.push(ToolChange::Withdraw {
                    name: row.name.clone(),
                    reason: format!("withdrawn: {reason} (mcp:{name}, listing at {when})"),
                });
                out.withdrawn.push(row.name.clone());
            }
            continue;
        }
        let fp = tool.fingerprint();
        let description =
            cap_description(tool.description().unwrap_or(""), DESCRIPTION_CAP).into_owned();
        let existing = rows
            .iter()
            .find(|r| r.kind == ToolKind::Mcp && r.server == *name && r.tool == tool.name);
        let Some(row) = existing else {
            let local = local_name(name, &tool.name, &taken);
            taken.insert(local.clone());
            changes.push(ToolChange::Propose(NewTool {
                name: local.clone(),
                kind: ToolKind::Mcp,
                server: name.clone(),
                tool: tool.name.clone(),
                cmd: vec!["mcp".into(), name.clone(), tool.name.clone()],
                scope: format!("mcp:{name}"),
                destructive: tool.destructive(),
                fingerprint: Some(fp),
                description,
                shape: Value::Object(tool.raw.clone()),
                provenance: format!("discovered on mcp:{name} at {when}"),
            }));
            out.proposed.push(local);
            continue;
        };
        if row.state == ToolState::Withdrawn {
            changes.push(ToolChange::Reoffer {
                name: row.name.clone(),
                reason: format!("offered again by mcp:{name} at {when}"),
            });
            out.reoffered.push(row.name.clone());
        }
        match &row.fingerprint {
            None => {
                changes.push(ToolChange::Adopt {
                    name: row.name.clone(),
                    fingerprint: fp,
                });
                out.adopted.push(row.name.clone());
            }
            Some(old) if *old != fp => {
                let changed = changed_fields(&row.shape, &tool.raw);
                let raise = tool.destructive() && !row.destructive;
                let mut provenance = format!(
                    "redefined by mcp:{name} at {when}: {} changed",
                    changed.join(", ")
                );
                if raise {
                    provenance.push_str("; it no longer claims to be read-only");
                }
                changes.push(ToolChange::Redefine {
                    name: row.name.clone(),
                    redefinition: Redefinition {
                        fingerprint: fp,
                        description,
                        shape: Value::Object(tool.raw.clone()),
                        cmd: None,
                        raise_destructive: raise,
                        provenance,
                    },
                });
                out.redefined.push(row.name.clone());
            }
            Some(_) => {}
        }
    }

    let offered: HashSet<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for row in rows.iter().filter(|r| {
        r.kind == ToolKind::Mcp
            && r.server == *name
            && r.state != ToolState::Withdrawn
            && !offered.contains(r.tool.as_str())
    }) {
        changes.push(ToolChange::Withdraw {
            name: row.name.clone(),
            reason: format!(
                "withdrawn: mcp:{name} no longer offers it (complete listing at {when})"
            ),
        });
        out.withdrawn.push(row.name.clone());
    }
    (changes, out)
}

/// Withdraws at once, without a listing, every row of `server` that its policy no longer
/// allows: with `allow_tools`, each tool it does not name; without, every row when there are
/// more than `max_tools` of them (the server contributes nothing, as a listing would find).
/// Run at start and at each reload, so a narrowed `allow_tools` takes effect before the server
/// is listed again. Returns each withdrawn row with why.
pub async fn narrow(
    store: &Store,
    server: &ServerPolicy,
) -> Result<Vec<(String, String)>, store::Error> {
    let server = server.clone();
    let when = now_text();
    let (_, out) = store
        .apply_listing(move |rows| narrowing(&server, rows, &when))
        .await?;
    for (row, why) in &out {
        tracing::info!(%row, "{why}");
    }
    Ok(out)
}

/// The withdrawals of [`narrow`], decided from the rows as they are.
pub fn narrowing(
    server: &ServerPolicy,
    rows: &[ToolRow],
    when: &str,
) -> (Vec<ToolChange>, Vec<(String, String)>) {
    let name = &server.name;
    let live: Vec<&ToolRow> = rows
        .iter()
        .filter(|r| r.kind == ToolKind::Mcp && r.server == *name && r.state != ToolState::Withdrawn)
        .collect();
    let why = |r: &ToolRow| -> Option<String> {
        if !server.allow_tools.is_empty() {
            return (!server.allow_tools.contains(&r.tool)).then(|| {
                format!(
                    "withdrawn: not named in allow_tools of mcp:{name} (configuration at {when})"
                )
            });
        }
        (live.len() > server.max_tools).then(|| {
            format!(
                "withdrawn: mcp:{name} has {} tools, more than max_tools ({}), and allow_tools is not set (configuration at {when})",
                live.len(),
                server.max_tools
            )
        })
    };
    let mut changes = Vec::new();
    let mut out = Vec::new();
    for r in &live {
        if let Some(reason) = why(r) {
            changes.push(ToolChange::Withdraw {
                name: r.name.clone(),
                reason: reason.clone(),
            });
            out.push((r.name.clone(), reason));
        }
    }
    (changes, out)
}

/// Now, to the second, as RFC 3339 (UTC).
pub fn now_text() -> String {
    store::rfc3339(time::OffsetDateTime::now_utc())
}

/// The top-level fields (and `annotations.*` hints) that differ between two declared shapes.
pub fn changed_fields(old: &Value, new: &serde_json::Map<String, Value>) -> Vec<String> {
    let empty = serde_json::Map::new();
    let old = old.as_object().unwrap_or(&empty);
    let keys: BTreeSet<&String> = old
        .keys()
        .chain(new.keys())
        .filter(|k| k.as_str() != "_meta")
        .collect();
    let mut out = Vec::new();
    for k in keys {
        let (a, b) = (old.get(k.as_str()), new.get(k.as_str()));
        if a == b {
            continue;
        }
        if k == "annotations" {
            let ea = serde_json::Map::new();
            let ma = a.and_then(Value::as_object).unwrap_or(&ea);
            let mb = b.and_then(Value::as_object).unwrap_or(&ea);
            let sub: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
            for s in sub {
                if ma.get(s.as_str()) != mb.get(s.as_str()) {
                    out.push(format!("annotations.{s}"));
                }
            }
            if ma.is_empty() && mb.is_empty() {
                out.push(k.clone());
            }
        } else {
            out.push(k.clone());
        }
    }
    if out.is_empty() {
        out.push("the declared shape".into());
    }
    out
}

/// Local acts from the configuration that have no row yet become proposed rows; the
/// owner enables them on the page. `source` is the configuration file, named in provenance.
pub async fn propose_local_acts(
    store: &Store,
    acts: &[crate::LocalAct],
    source: Option<&std::path::Path>,
) -> Result<(), store::Error> {
    for act in acts {
        if store.tool(&act.name).await?.is_some() {
            continue;
        }
        let shape =
            serde_json::json!({"name": act.name, "cmd": act.cmd, "read_only": act.read_only});
        store
            .propose_tool(NewTool {
                name: act.name.clone(),
                kind: ToolKind::Local,
                server: String::new(),
                tool: act.name.clone(),
                cmd: act.cmd.clone(),
                scope: "local".into(),
                destructive: !act.read_only,
                fingerprint: None,
                description: format!("runs {}", act.cmd.join(" ")),
                shape,
                provenance: match source {
                    Some(p) => format!("proposed from acts in {}", p.display()),
                    None => "proposed from the configuration".into(),
                },
            })
            .await?;
        tracing::info!(act = %act.name, "act proposed from the configuration");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changed_fields_names_what_the_server_changed() {
        let old = json!({"name": "t", "description": "a", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object"}});
        let new = json!({"name": "t", "description": "b", "annotations": {}, "inputSchema": {"type": "object"}, "_meta": {"x": 1}});
        let new = new.as_object().unwrap().clone();
        assert_eq!(
            changed_fields(&old, &new),
            ["annotations.readOnlyHint", "description"]
        );
    }

    fn server(allow: &[&str], max_tools: usize) -> ServerPolicy {
        ServerPolicy {
            name: "kit".into(),
            allow_tools: allow.iter().map(|s| s.to_string()).collect(),
            max_tools,
        }
    }

    fn tool(name: &str, desc: &str, read_only: Option<bool>) -> Tool {
        let mut v = json!({"name": name, "description": desc, "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}});
        if let Some(ro) = read_only {
            v["annotations"] = json!({"readOnlyHint": ro});
        }
        Tool::from_value(v).unwrap()
    }

    #[expect(clippy::disallowed_methods, reason = "a test's own database")]
    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("m.db")).await.unwrap();
        (dir, s)
    }

    async fn row(s: &Store, name: &str) -> ToolRow {
        s.tool(name).await.unwrap().unwrap()
    }

    #[tokio::test]
    async fn discovery_proposes_and_never_enables() {
        let (_d, s) = store().await;
        let srv = server(&[], 12);
        let r = reconcile(
            &s,
            &srv,
            &[
                tool("list", "lists", Some(true)),
                tool("del", "deletes", None),
            ],
        )
        .await
        .unwrap();
        assert_eq!(r.proposed, ["kit_list", "kit_del"]);
        let list = row(&s, "kit_list").await;
        assert_eq!(list.state, ToolState::Proposed);
        assert!(!list.destructive);
        assert_eq!(list.cmd, ["mcp", "kit", "list"]);
        assert_eq!(list.scope, "mcp:kit");
        assert!(list.provenance.starts_with("discovered on mcp:kit at "));
        assert!(
            row(&s, "kit_del").await.destructive,
            "no hint: assume it writes"
        );
        // The same listing again changes nothing.
        let again = reconcile(
            &s,
            &srv,
            &[
                tool("list", "lists", Some(true)),
                tool("del", "deletes", None),
            ],
        )
        .await
        .unwrap();
        assert_eq!(again, Reconciled::default());
    }

    #[tokio::test]
    async fn a_redefined_tool_is_demoted_and_destructive_is_only_raised() {
        let (_d, s) = store().await;
        let srv = server(&[], 12);
        reconcile(&s, &srv, &[tool("list", "lists", Some(true))])
            .await
            .unwrap();
        crate::testing::owner_sets(&s, "kit_list", ToolState::Enabled)
            .await
            .unwrap();

        // Description edited: back to proposed, the change named, the approved shape kept.
        let r = reconcile(&s, &srv, &[tool("list", "lists everything", Some(true))])
            .await
            .unwrap();
        assert_eq!(r.redefined, ["kit_list"]);
        let row1 = row(&s, "kit_list").await;
        assert_eq!(row1.state, ToolState::Proposed);
        assert!(
            row1.provenance.contains(": description changed"),
            "{}",
            row1.provenance
        );
        assert_eq!(row1.approved_shape.unwrap()["description"], "lists");
        assert!(!row1.destructive);

        // The read-only claim removed: destructive raised.
        crate::testing::owner_sets(&s, "kit_list", ToolState::Enabled)
            .await
            .unwrap();
        reconcile(&s, &srv, &[tool("list", "lists everything", None)])
            .await
            .unwrap();
        let row2 = row(&s, "kit_list").await;
        assert!(row2.destructive);
        assert_eq!(row2.state, ToolState::Proposed);
        assert!(
            row2.provenance.contains("no longer claims to be read-only"),
            "{}",
            row2.provenance
        );

        // The claim comes back: destructive stays raised.
        reconcile(&s, &srv, &[tool("list", "lists everything", Some(true))])
            .await
            .unwrap();
        assert!(
            row(&s, "kit_list").await.destructive,
            "destructive is never lowered"
        );
        let events = s.tool_events(Some("kit_list"), 100).await.unwrap();
        assert!(
            events.len() >= 5,
            "every change is in the audit trail: {events:?}"
        );
    }

    #[tokio::test]
    async fn a_tool_no_longer_offered_is_withdrawn_and_comes_back_proposed() {
        let (_d, s) = store().await;
        let srv = server(&[], 12);
        reconcile(
            &s,
            &srv,
            &[tool("a", "a", Some(true)), tool("b", "b", Some(true))],
        )
        .await
        .unwrap();
        crate::testing::owner_sets(&s, "kit_b", ToolState::Enabled)
            .await
            .unwrap();
        let r = reconcile(&s, &srv, &[tool("a", "a", Some(true))])
            .await
            .unwrap();
        assert_eq!(r.withdrawn, ["kit_b"]);
        let b = row(&s, "kit_b").await;
        assert_eq!(b.state, ToolState::Withdrawn);
        assert!(
            b.provenance
                .starts_with("withdrawn: mcp:kit no longer offers it (complete listing at "),
            "{}",
            b.provenance
        );
        let r = reconcile(
            &s,
            &srv,
            &[tool("a", "a", Some(true)), tool("b", "b", Some(true))],
        )
        .await
        .unwrap();
        assert_eq!(r.reoffered, ["kit_b"]);
        assert_eq!(
            row(&s, "kit_b").await.state,
            ToolState::Proposed,
            "never straight back to enabled"
        );
    }

    #[tokio::test]
    async fn over_the_cap_without_allow_tools_contributes_nothing() {
        let (_d, s) = store().await;
        let tools: Vec<Tool> = (0..13)
            .map(|i| tool(&format!("t{i}"), "x", Some(true)))
            .collect();
        let r = reconcile(&s, &server(&[], 12), &tools).await.unwrap();
        assert!(r.proposed.is_empty());
        assert_eq!(r.refused.len(), 13);
        assert_eq!(
            r.over_cap(13).unwrap(),
            "over cap: the server offers 13 tools, more than max_tools (12), and allow_tools is not set"
        );
        assert!(s.tools().await.unwrap().is_empty());
        // With allow_tools, only the named ones are considered.
        let r = reconcile(&s, &server(&["t3", "t7"], 12), &tools)
            .await
            .unwrap();
        assert_eq!(r.proposed, ["kit_t3", "kit_t7"]);
        assert_eq!(r.over_cap(13), None);
    }

    #[tokio::test]
    async fn a_narrowed_policy_withdraws_enabled_rows_with_or_without_a_listing() {
        let (_d, s) = store().await;
        let tools = [
            tool("a", "x", Some(true)),
            tool("b", "y", None),
            tool("c", "z", None),
        ];
        reconcile(&s, &server(&[], 12), &tools).await.unwrap();
        for n in ["kit_a", "kit_b"] {
            s.owner_sets_tool_state(n, ToolState::Enabled, &stepup::testing::step_up(), "t")
                .await
                .unwrap();
        }
        // Without a listing: what allow_tools does not name goes, enabled or not.
        let gone = narrow(&s, &server(&["a"], 12)).await.unwrap();
        let names: Vec<&str> = gone.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["kit_b", "kit_c"]);
        assert!(gone[0]
            .1
            .starts_with("withdrawn: not named in allow_tools of mcp:kit (configuration at "));
        assert_eq!(row(&s, "kit_a").await.state, ToolState::Enabled);
        assert_eq!(row(&s, "kit_b").await.state, ToolState::Withdrawn);
        assert!(row(&s, "kit_b")
            .await
            .provenance
            .starts_with("withdrawn: not named in allow_tools"));
        // Nothing more to do the second time.
        assert!(narrow(&s, &server(&["a"], 12)).await.unwrap().is_empty());
        // A withdrawn row cannot be enabled.
        let e = s
            .owner_sets_tool_state(
                "kit_b",
                ToolState::Enabled,
                &stepup::testing::step_up(),
                "t",
            )
            .await
            .unwrap_err();
        assert!(matches!(e, store::Error::BadTransition { .. }), "{e}");
        // Widened again: the next listing offers them again, proposed.
        let r = reconcile(&s, &server(&[], 12), &tools).await.unwrap();
        assert_eq!(r.reoffered, ["kit_b", "kit_c"]);
        // A listing under a narrower policy withdraws the refused tool's row itself.
        let r = reconcile(&s, &server(&["b", "c"], 12), &tools)
            .await
            .unwrap();
        assert_eq!(r.withdrawn, ["kit_a"]);
        assert_eq!(
            r.refused,
            [("a".to_owned(), "not named in allow_tools".to_owned())]
        );
        assert_eq!(row(&s, "kit_a").await.state, ToolState::Withdrawn);
        // max_tools lowered below the rows there are: the server contributes nothing.
        let gone = narrow(&s, &server(&[], 1)).await.unwrap();
        assert_eq!(gone.len(), 2, "{gone:?}");
        assert!(gone[0].1.contains("more than max_tools (1)"), "{gone:?}");
    }

    #[tokio::test]
    async fn identities_that_flatten_alike_never_share_a_row() {
        let (_d, s) = store().await;
        let srv = server(&[], 12);
        reconcile(
            &s,
            &srv,
            &[
                tool("a-b", "dash", Some(true)),
                tool("a_b", "underscore", Some(true)),
            ],
        )
        .await
        .unwrap();
        let rows = s.tools().await.unwrap();
        assert_eq!(rows.len(), 2);
        let dash = rows.iter().find(|r| r.tool == "a-b").unwrap();
        let under = rows.iter().find(|r| r.tool == "a_b").unwrap();
        assert_eq!(dash.name, "kit_a_b");
        assert_ne!(dash.name, under.name);
        assert_eq!(under.description, "underscore");
        // Stable: the next listing maps each identity to its own row again.
        let again = reconcile(
            &s,
            &srv,
            &[
                tool("a-b", "dash", Some(true)),
                tool("a_b", "underscore", Some(true)),
            ],
        )
        .await
        .unwrap();
        assert_eq!(again, Reconciled::default());
    }

    #[tokio::test]
    async fn a_row_that_predates_fingerprints_adopts_one_silently() {
        let (_d, s) = store().await;
        let t = tool("list", "lists", Some(true));
        s.propose_tool(store::NewTool {
            name: "kit_list".into(),
            kind: ToolKind::Mcp,
            server: "kit".into(),
            tool: "list".into(),
            cmd: vec!["mcp".into(), "kit".into(), "list".into()],
            scope: "mcp:kit".into(),
            destructive: false,
            fingerprint: None,
            description: "lists".into(),
            shape: Value::Object(t.raw.clone()),
            provenance: "older version".into(),
        })
        .await
        .unwrap();
        crate::testing::owner_sets(&s, "kit_list", ToolState::Enabled)
            .await
            .unwrap();
        let before = s.tool_events(Some("kit_list"), 100).await.unwrap().len();
        let r = reconcile(&s, &server(&[], 12), std::slice::from_ref(&t))
            .await
            .unwrap();
        assert_eq!(r.adopted, ["kit_list"]);
        let row = row(&s, "kit_list").await;
        assert_eq!(
            row.state,
            ToolState::Enabled,
            "an upgrade is not a redefinition"
        );
        assert_eq!(row.fingerprint.as_deref(), Some(t.fingerprint().as_str()));
        assert_eq!(
            s.tool_events(Some("kit_list"), 100).await.unwrap().len(),
            before
        );
    }
}
