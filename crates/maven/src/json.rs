//! The JSON shapes of the stable machine-readable interface (I-3). Times are RFC 3339 UTC;
//! absent values are null.

use serde_json::{json, Value};
use time::OffsetDateTime;

use config::{FeedConfig, McpServerConfig, McpTarget};

/// RFC 3339 in UTC, e.g. `2026-11-30T05:08:27Z`.
pub(crate) fn time(t: OffsetDateTime) -> Value {
    match store::rfc3339(t) {
        s if s.is_empty() => Value::Null,
        s => Value::String(s),
    }
}

/// One row of `maven tools --json`.
pub(crate) fn tool(r: &store::ToolRow) -> Value {
    json!({
        "name": r.name,
        "state": r.state.as_str(),
        "destructive": r.destructive,
        "scope": r.scope,
        "cmd": r.cmd,
        "fingerprint": r.fingerprint,
        "description": r.description,
        "provenance": r.provenance,
        "updated": time(r.updated),
    })
}

/// One row of `maven notes --json`.
pub(crate) fn note(n: &store::Note) -> Value {
    json!({
        "id": n.id,
        "source": n.source,
        "key": n.key,
        "text": n.text,
        "link": n.link,
        "created": time(n.created),
    })
}

/// The trust level of a server, spelled out.
pub(crate) fn trust(t: &McpTarget) -> &'static str {
    match t {
        McpTarget::Stdio { .. } => "local process: runs as you, with your files and your network",
        McpTarget::Http {
            allow_private: true,
            ..
        } => "LAN endpoint (allow_private)",
        McpTarget::Http { .. } => "remote endpoint",
    }
}

/// Where a server is, with anything secret masked: the URL's user info and query are never
/// shown, nor the values of a child's environment.
pub(crate) fn target(t: &McpTarget) -> String {
    match t {
        McpTarget::Stdio { command, args, .. } => {
            let mut s = command.clone();
            for a in args {
                s.push(' ');
                s.push_str(a);
            }
            s
        }
        McpTarget::Http { url, .. } => mask_url(url),
    }
}

pub(crate) fn mask_url(u: &str) -> String {
    match url::Url::parse(u) {
        Ok(mut p) => {
            if !p.username().is_empty() || p.password().is_some() {
                let _ = p.set_username("••••");
                let _ = p.set_password(None);
            }
            if p.query().is_some() {
                p.set_query(Some("••••"));
            }
            p.to_string()
        }
        Err(_) => "••••".to_string(),
    }
}

/// One server's status (A-12, I-3): its configuration, the manager's live view (`None` while
/// no manager runs), and what the allowlist made of its last listing.
pub(crate) fn server_status(
    s: &McpServerConfig,
    live: Option<&mcp::ServerStatus>,
    note: Option<&crate::daemon::DiscoveryNote>,
    proposed: usize,
    enabled: usize,
) -> Value {
    let system = |t: std::time::SystemTime| time(OffsetDateTime::from(t));
    let (state, next_retry) = match live.map(|l| &l.state) {
        None | Some(mcp::ServerState::Dark) if !s.enabled => ("dark".to_string(), Value::Null),
        None => ("not connected".to_string(), Value::Null),
        Some(mcp::ServerState::BackingOff { until }) => {
            let t = system(*until);
            (
                format!("backing off until {}", t.as_str().unwrap_or("?")),
                t,
            )
        }
        Some(st) => match note.and_then(|n| n.over_cap.as_ref()) {
            Some(over) if *st == mcp::ServerState::Ready => (over.clone(), Value::Null),
            _ => (st.as_str().to_string(), Value::Null),
        },
    };
    let last_error = live
        .and_then(|l| l.last_error.clone())
        .or_else(|| note.and_then(|n| n.error.clone()));
    json!({
        "name": s.name,
        "transport": match s.target { McpTarget::Stdio { .. } => "stdio", McpTarget::Http { .. } => "http" },
        "target": target(&s.target),
        "enabled": s.enabled,
        "state": state,
        "trust": trust(&s.target),
        "protocol_version": live.and_then(|l| l.protocol_version.clone()),
        "server_info": live.and_then(|l| l.server_info.as_ref()).map(|(n, v)| json!({"name": n, "version": v})),
        "tools_offered": live.and_then(|l| l.tools_offered),
        "tools_proposed": proposed,
        "tools_enabled": enabled,
        "tools_refused": note.map(|n| n.refused.iter().map(|(t, r)| json!({"tool": t, "reason": r})).collect::<Vec<_>>()).unwrap_or_default(),
        "last_error": last_error,
        "next_retry": next_retry,
        "stderr_tail": live.and_then(|l| l.stderr_tail.clone()),
        "violations": live.map(|l| l.violations).unwrap_or(0),
        "dials": live.map(|l| l.dials).unwrap_or(0),
    })
}

/// A configured feed as status shows it before any poll.
pub(crate) fn configured_feed(f: &FeedConfig) -> Value {
    json!({
        "name": f.name,
        "url": mask_url(&f.url),
        "enabled": f.enabled,
        "last_success": null,
        "last_error": null,
        "next_poll": null,
        "items_noted": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_masked() {
        assert_eq!(
            mask_url("https://user:pw@a.example/mcp?token=x"),
            "https://%E2%80%A2%E2%80%A2%E2%80%A2%E2%80%A2@a.example/mcp?%E2%80%A2%E2%80%A2%E2%80%A2%E2%80%A2"
        );
        assert_eq!(mask_url("https://a.example/mcp"), "https://a.example/mcp");
        assert_eq!(mask_url("::"), "••••");
    }

    #[test]
    fn times_are_rfc3339_utc() {
        let t = OffsetDateTime::from_unix_timestamp(1_764_479_307).unwrap();
        assert_eq!(time(t), json!("2025-11-30T05:08:27Z"));
    }
}
