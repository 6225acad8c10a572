//! The commands that print a view of the running daemon: `maven status`, `tools`, `notes`,
//! `feeds status` and `mcp status`, as the daemon's JSON with `--json`, else as text.

use crate::exit::{errln, outln};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use serde::Serialize;
use shown::line;

use super::runtime;
use crate::ipc::client as ipc;
use wire::methods::{Reply, Request};
use wire::views::{
    FeedView, NoteView, PageListening, RefreshView, ServerStatusView, StatusView, ToolView,
};

/// Runs one IPC request against the daemon and prints its reply, the view `T`: as JSON with
/// `--json`, else handed to `show`.
pub(crate) fn client<T: TryFrom<Reply, Error = Reply> + Serialize>(
    data_dir: &Path,
    req: Request,
    as_json: bool,
    show: impl FnOnce(&T),
) -> ExitCode {
    let method = req.method();
    let res = runtime(async {
        match ipc::ask::<T>(data_dir, &req).await {
            Ok(v) if as_json => {
                print_json(&v);
                ExitCode::SUCCESS
            }
            Ok(v) => {
                show(&v);
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("maven {method}: {}", shown::block(&e.to_string()));
                ExitCode::from(e.exit_code())
            }
        }
    });
    let _ = std::io::stdout().flush();
    res
}

pub(crate) fn print_json(v: &impl Serialize) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => outln!("{s}"),
        Err(e) => errln!("maven: cannot print JSON: {e}"),
    }
}

/// An optional text as the tables show it: a dash when absent, a one-line field (`shown::line`).
fn or_dash(v: &Option<String>) -> std::borrow::Cow<'_, str> {
    v.as_deref()
        .map_or(std::borrow::Cow::Borrowed("-"), shown::line)
}

/// Text that may span lines, shown under a field: newlines kept (each continuation indented by
/// `indent`, so no line of it can pass for a row of its own), every other hazard escaped.
fn indented_block(s: &str, indent: &str) -> String {
    shown::block(s).replace('\n', &format!("\n{indent}"))
}

// Every field below that a server, a feed or a child wrote (and, to be plain about it, every
// other string field too) is shown through `shown`: `line` for one-line fields, `block` for
// text that may span lines. The `--json` outputs print the daemon's answer as it is.

/// The page's line when it listens: its address and URL, then its counters.
fn print_page(w: &wire::views::WebStatusView) {
    outln!(
        "page: {} — {} — {}/{} connections, {} refused; passphrase: {} verified, {} refused{}",
        line(&w.listening.to_string()),
        line(&w.url),
        w.connections,
        w.max_connections,
        w.connections_refused,
        w.passphrase_verifications,
        w.passphrase_attempts_refused,
        w.passphrase_locked_for_s
            .map_or_else(String::new, |s| format!(", locked for {s} s"))
    );
    outln!(
        "page peers: uid check {}; {} connections of other users closed",
        line(&w.peer_uid_check),
        w.connections_refused_other_uid
    );
}

/// The router's line of `maven status`.
pub(crate) fn router_line(r: &wire::views::RouterView) -> String {
    use wire::views::RouterKindView;
    match r.kind {
        RouterKindView::Rules => "router: rules (sentences matched by name; no model)".to_owned(),
        RouterKindView::Llm => {
            let last = match (&r.last_error, &r.last_answer) {
                (Some(e), _) => format!(
                    "last request failed at {}: {}",
                    or_dash(&r.last_error_at),
                    line(e)
                ),
                (None, Some(at)) => format!("last answered at {}", line(at)),
                (None, None) => "not asked yet".to_owned(),
            };
            format!(
                "router: llm — {} (model {}) — {last}",
                or_dash(&r.endpoint),
                or_dash(&r.model)
            )
        }
    }
}

pub(crate) fn print_status(v: &StatusView) {
    outln!("maven {} — up {}s", line(&v.version), v.uptime_s);
    outln!("data: {}", line(&v.data_dir));
    let parts: Vec<String> = v
        .acts
        .pairs()
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    outln!("acts: {}", parts.join(", "));
    outln!("MCP servers: {}", v.mcp_servers.len());
    for srv in &v.mcp_servers {
        outln!(
            "  {:<20} {:<6} {}",
            line(&srv.name),
            srv.transport.as_str(),
            line(&srv.state.text())
        );
    }
    outln!("feeds: {}", v.feeds.len());
    for f in &v.feeds {
        outln!("  {:<20} {}", line(&f.name), line(&f.url));
    }
    if let Some(r) = &v.router {
        outln!("{}", router_line(r));
    }
    outln!("log lines dropped: {}", v.log_lines_dropped);
    match &v.web {
        Some(w) if matches!(w.listening, PageListening::Listening { .. }) => {
            print_page(w);
        }
        Some(w) => outln!(
            "page: {} — {}",
            line(&w.listening.to_string()),
            line(&w.url)
        ),
        None => outln!("page: not listening: this daemon did not say"),
    }
    if let Some(l) = &v.limits {
        outln!(
            "limits: {} descriptors ({} reserved); IPC {}/{} connections, {} refused",
            l.descriptors,
            l.descriptors_reserved,
            l.ipc_connections,
            l.ipc_max_connections,
            l.ipc_connections_refused
        );
    }
}

pub(crate) fn print_tools(rows: &Vec<ToolView>) {
    if rows.is_empty() {
        outln!("no tools yet: acts come from the config and from enabled MCP servers");
        return;
    }
    outln!(
        "{:<32} {:<9} {:<11} {:<16} {:<14} description",
        "name",
        "state",
        "destructive",
        "scope",
        "fingerprint"
    );
    for r in rows {
        let fp = r.fingerprint.as_deref().unwrap_or("-");
        let fp: String = fp
            .rsplit(':')
            .next()
            .unwrap_or(fp)
            .chars()
            .take(12)
            .collect();
        let desc: String = r.description.chars().take(60).collect();
        outln!(
            "{:<32} {:<9} {:<11} {:<16} {:<14} {}",
            line(&r.name),
            line(&r.state),
            if r.destructive { "yes" } else { "no" },
            line(&r.scope),
            line(&fp),
            line(&desc)
        );
        let prov = r.provenance.as_str();
        if prov != "-" && !prov.is_empty() {
            outln!("    {}", line(prov));
        }
    }
}

pub(crate) fn print_feeds(rows: &Vec<FeedView>) {
    if rows.is_empty() {
        outln!("no feeds configured");
        return;
    }
    for f in rows {
        let noted = f.items_noted.map_or("-".to_string(), |n| n.to_string());
        let live = f.live.as_ref();
        outln!(
            "{:<20} {:<12} noted {:<6} last ok {:<20} next {}",
            line(&f.name),
            live.map_or(std::borrow::Cow::Borrowed("-"), |l| line(&l.state)),
            noted,
            or_dash(&f.last_success),
            or_dash(&f.next_poll)
        );
        outln!("    {}", line(&f.url));
        if let Some(to) = live.and_then(|l| l.moved_to.as_deref()) {
            outln!(
                "    redirects to {} (the config is left as it is)",
                line(to)
            );
        }
        if let Some(e) = &f.last_error {
            outln!("    error: {}", line(e));
            if live.is_some_and(|l| l.refused) {
                let block = format!("the feed {:?}", line(&f.name));
                outln!("    fix: {}", super::door_fix(&block));
            }
        }
        if let Some(w) = live.and_then(|l| l.warning.as_deref()) {
            outln!("    warning: {}", line(w));
        }
    }
}

pub(crate) fn print_refresh(rows: &Vec<RefreshView>) {
    if rows.is_empty() {
        outln!("no enabled feed to poll");
        return;
    }
    for r in rows {
        let name = line(&r.name);
        match (&r.held_back, &r.error) {
            (Some(why), _) => outln!(
                "{name}: not polled: {}; it may be polled at {}",
                line(why),
                or_dash(&r.until)
            ),
            (None, Some(e)) => outln!("{name}: polled, and it failed: {}", line(e)),
            (None, None) => outln!("{name}: polled, {} new", r.noted.unwrap_or(0)),
        }
    }
}

pub(crate) fn print_notes(rows: &Vec<NoteView>) {
    if rows.is_empty() {
        outln!("no notes");
        return;
    }
    for n in rows {
        // A note is a feed item's title and summary: its lines are kept, indented under the row.
        // The item's own date when its feed gave one, else when it was noted.
        let when = match &n.published {
            Some(p) => format!("published {}", line(p)),
            None => format!("noted {}", or_dash(&n.created)),
        };
        outln!(
            "[{when}] {} — {}",
            line(&n.source),
            indented_block(&n.text, "    ")
        );
        if let Some(l) = &n.link {
            outln!("    {}", line(l));
        }
    }
}

/// The longest refused tool name `maven mcp status` shows whole.
const REFUSED_NAME_SHOWN: usize = 64;

/// The most refused tools named under one reason.
const REFUSED_NAMED: usize = 20;

/// A server's refused tools, one line per reason (a reason many tools share is said once, with
/// their count and names), and, over its cap, the command that fixes it.
fn refused_lines(r: &ServerStatusView) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in &r.tools_refused {
        match groups.iter_mut().find(|(why, _)| *why == t.reason) {
            Some((_, tools)) => tools.push(&t.tool),
            None => groups.push((&t.reason, vec![&t.tool])),
        }
    }
    let mut out = Vec::new();
    for (why, tools) in groups {
        if let [one] = tools.as_slice() {
            out.push(format!(
                "  refused:  {} — {}",
                shown::capped(one, REFUSED_NAME_SHOWN),
                line(why)
            ));
            continue;
        }
        let mut names: Vec<String> = tools
            .iter()
            .take(REFUSED_NAMED)
            .map(|t| shown::capped(t, REFUSED_NAME_SHOWN).into_owned())
            .collect();
        if tools.len() > REFUSED_NAMED {
            names.push(format!("and {} more", tools.len() - REFUSED_NAMED));
        }
        out.push(format!("  refused:  {} tools — {}", tools.len(), line(why)));
        out.push(format!("            {}", names.join(", ")));
    }
    if matches!(r.state, wire::views::ServerState::OverCap(_)) {
        let name = line(&r.name);
        out.push(format!(
            "  fix:      maven mcp allow {name} TOOL… names the tools it may offer (`maven mcp inspect {name}` says which claim to be read-only)"
        ));
    }
    out
}

pub(crate) fn print_mcp_servers(rows: &Vec<ServerStatusView>) {
    if rows.is_empty() {
        outln!("no MCP servers configured");
        return;
    }
    for r in rows {
        outln!(
            "{} ({}, {})",
            line(&r.name),
            r.transport.as_str(),
            line(&r.state.text())
        );
        outln!("  target:   {}", line(&r.target));
        outln!("  trust:    {}", line(&r.trust));
        if let Some(p) = &r.protocol_version {
            let (name, version) = r
                .server_info
                .as_ref()
                .map_or(("-", "-"), |i| (i.name.as_str(), i.version.as_str()));
            outln!(
                "  server:   {} {} (protocol {})",
                line(name),
                line(version),
                line(p)
            );
            if let (Some(era), Some(how)) = (&r.era, &r.era_chosen) {
                outln!("  era:      {} ({})", line(era), line(how));
            }
        }
        // No listing yet (not connected, or listing): said so, never as `null`.
        outln!(
            "  tools:    {}, {} proposed, {} enabled",
            r.tools_offered
                .map_or_else(|| "none listed yet".to_owned(), |n| format!("{n} offered")),
            r.tools_proposed,
            r.tools_enabled
        );
        for l in refused_lines(r) {
            outln!("{l}");
        }
        if let Some(n) = r.network.as_ref().filter(|n| n.refused > 0) {
            outln!(
                "  network:  {} connections through Maven, {} refused; the last:",
                n.connections,
                n.refused
            );
            for c in &n.last_refused {
                outln!(
                    "            {} {}:{} — {}",
                    or_dash(&c.at),
                    line(&c.host),
                    c.port,
                    line(&c.why)
                );
            }
        }
        if let Some(a) = &r.auth {
            outln!("  auth:     {}", line(&a.to_string()));
        }
        if let Some(e) = &r.last_error {
            outln!("  error:    {}", line(e));
        }
        if let Some(u) = &r.unstable {
            outln!("  warning:  {}", line(u));
        }
        if let Some(t) = r.stderr_tail.as_deref().filter(|t| !t.trim().is_empty()) {
            outln!(
                "  stderr:   {}",
                indented_block(t.trim_end(), "            ")
            );
        }
    }
}
