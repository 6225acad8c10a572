//! The server-rendered pages. Every value that came from outside is inserted as text, never as
//! HTML: [`text`] renders it as `shown::line` does (control characters and bidirectional
//! overrides as visible escapes such as `\e` and `\u{202e}`), then escapes it for HTML. No
//! inline script or style (the CSP forbids them): behaviour lives in `page.js`, looks in
//! `page.css`. The JSON API keeps the exact strings; neutralising is done where they are shown.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Extension;
use time::OffsetDateTime;

use super::api;
use super::app::{peer_of, App, Conn};
use super::error::AppError;
use turns::Question;
use wire::views::{ActState, FeedView, PageTool, ServerStatusView, SessionView, Transport};

const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

/// Escapes text for HTML element content and double-quoted attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Outside text as one line of page text: every control character and bidirectional override
/// shown as its escape ([`shown::line`]), then escaped for HTML.
pub fn text(s: &str) -> String {
    esc(&shown::line(s))
}

/// Outside text that may span lines (a `<pre>`): newlines kept, every other hazard shown as
/// its escape ([`shown::block`]), then escaped for HTML.
fn block(s: &str) -> String {
    esc(&shown::block(s))
}

fn head(title: &str, csrf: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"csrf-token\" content=\"{}\">\
         <title>{}</title><link rel=\"stylesheet\" href=\"/static/page.css\">\
         <script src=\"/static/page.js\" defer></script></head><body>",
        esc(csrf),
        esc(title)
    )
}

fn with_cookie(html: String, set: Option<HeaderValue>) -> Response {
    let mut r = Html(html).into_response();
    if let Some(set) = set {
        r.headers_mut().insert(header::SET_COOKIE, set);
    }
    r
}

/// `GET /`: the page lives at `/tools`.
pub(super) async fn root() -> Redirect {
    Redirect::to("/tools")
}

/// `GET /static/page.js`.
pub(super) async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

/// `GET /static/page.css`.
pub(super) async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

/// `GET /enroll`: the page the one-time link opens. The token travels in the URL's fragment,
/// which the browser never sends to the server; the script posts it.
pub(super) async fn enroll(
    State(app): State<App>,
    conn: Option<Extension<Conn>>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let (cookie, set) = app.web.ensure_session(&headers, peer_of(conn))?;
    let s = api::session_view(&app, &cookie).await?;
    let mut h = head("Maven — enroll a passkey", &s.csrf_token);
    h.push_str(
        "<header><h1>Maven</h1><nav><a href=\"/tools\">Tools</a></nav></header><main>\
         <section class=\"card\" id=\"enroll\"><h2>Enroll a passkey</h2>\
         <p>This one-time link lets you register a passkey (a security key, or this device's \
         built-in authenticator). Enrolling signs this browser in; the passkey then verifies \
         you before any act is enabled or disabled.</p>\
         <p><button type=\"button\" id=\"enroll-button\">Create a passkey</button></p>\
         <p id=\"enroll-status\" role=\"status\"></p>\
         <p id=\"enroll-continue\" hidden><a href=\"/tools\">Open Tools</a></p></section></main></body></html>",
    );
    Ok(with_cookie(h, set))
}

/// The step-up card: its state, the passkey button, the passphrase form, the status line.
fn stepup_card(h: &mut String, s: &SessionView) {
    h.push_str("<section class=\"card\" id=\"stepup\"><h2>Step-up</h2>");
    let _ = write!(
        h,
        "<p id=\"stepup-state\" data-passkeys=\"{}\" data-passphrase=\"{}\">",
        s.passkeys, s.passphrase
    );
    match (s.signed_in_for_s, &s.step_up) {
        (Some(_), Some(st)) => {
            let _ = write!(
                h,
                "Verified with {} — fresh for {} more seconds.",
                text(&st.method),
                st.fresh_for_s
            );
        }
        (Some(left), None) => {
            let _ = write!(
                h,
                "Signed in for {} more hours; enabling or disabling an act asks for your passkey again.",
                left.div_ceil(3600)
            );
        }
        (None, _) => h.push_str(
            "Not verified: sign in with your passkey (or passphrase) to see your acts, MCP servers and feeds.",
        ),
    }
    h.push_str("</p>");
    if s.passkeys > 0 {
        h.push_str("<button type=\"button\" id=\"stepup-passkey\">Verify with passkey</button> ");
    } else {
        h.push_str(
            "<p>No passkey is enrolled yet. Run <code>maven web enroll</code> on this machine and \
             open the link it prints.</p>",
        );
    }
    if s.passphrase {
        h.push_str(
            "<form id=\"stepup-passphrase\"><label>Passphrase <input type=\"password\" \
             name=\"passphrase\" autocomplete=\"current-password\" required></label> \
             <button type=\"submit\">Verify</button></form>",
        );
    }
    h.push_str("<p id=\"status\" role=\"status\"></p></section>");
}

/// `GET /oauth/login`: the page a `maven mcp login` link opens. The link's token travels in the
/// fragment (never sent to the server in a URL); the script posts it after the step-up.
pub(super) async fn oauth_login(
    State(app): State<App>,
    conn: Option<Extension<Conn>>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let (cookie, set) = app.web.ensure_session(&headers, peer_of(conn))?;
    let s = api::session_view(&app, &cookie).await?;
    let mut h = head("Maven — authorize an MCP server", &s.csrf_token);
    h.push_str(
        "<header><h1>Maven</h1><nav><a href=\"/tools\">Tools</a></nav></header><main>\
         <section class=\"card\" id=\"oauth-login\"><h2>Authorize an MCP server</h2>\
         <p>This one-time link (from <code>maven mcp login</code>) lets the MCP server's \
         authorization server grant Maven access. Verify with your passkey (or passphrase) \
         below, then continue: you are sent to the authorization server, which sends you back \
         here.</p>\
         <p><button type=\"button\" id=\"oauth-login-button\">Continue to the authorization server</button></p>\
         </section>",
    );
    stepup_card(&mut h, &s);
    h.push_str("</main></body></html>");
    Ok(with_cookie(h, set))
}

/// A server's question waiting for the owner's next turn: its words in a box labelled with
/// the server (every line as text, controls shown as escapes), Maven's own line outside it.
fn question_card(h: &mut String, q: &Question) {
    let _ = write!(
        h,
        "<section class=\"card\" id=\"question\"><h2>A question from the MCP server {0}</h2>\
         <figure class=\"server-words\" data-server=\"{1}\"><figcaption>{0} asks, for {2} \
         (its words, not Maven's):</figcaption><blockquote><pre>{3}</pre></blockquote></figure>\
         <p>{4} Answer with your next turn (<code>maven say …</code>).</p></section>",
        text(&q.server),
        esc(&q.server),
        text(&q.act),
        block(&q.words),
        esc(&q.how),
    );
}

/// `GET /tools`: acts by state, the MCP servers card, the feeds card, recent acts — for a
/// signed-in session. Without a sign-in, the step-up card and nothing else.
pub(super) async fn tools(
    State(app): State<App>,
    conn: Option<Extension<Conn>>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let (cookie, set) = app.web.ensure_session(&headers, peer_of(conn))?;
    let s = api::session_view(&app, &cookie).await?;
    if s.signed_in_for_s.is_none() {
        let mut h = head("Maven — sign in", &s.csrf_token);
        h.push_str("<header><h1>Maven</h1></header><main>");
        stepup_card(&mut h, &s);
        h.push_str("</main></body></html>");
        return Ok(with_cookie(h, set));
    }
    let rows = app.host.tools(api::HISTORY).await?;
    let acts = app.host.acts_log(api::ACTS_LOG).await?;
    let mut h = head("Maven — tools", &s.csrf_token);
    let _ = write!(
        h,
        "<header><h1>Maven</h1><nav><a href=\"/tools\">Tools</a></nav></header><main>"
    );

    stepup_card(&mut h, &s);
    if let Some(q) = app.host.question() {
        question_card(&mut h, &q);
    }

    // Acts by server: a section each (the configuration's own acts first), folded when the
    // page lists many, under one filter.
    let now = time::OffsetDateTime::now_utc();
    h.push_str("<section class=\"card\" id=\"acts\"><h2>Acts</h2>");
    if rows.is_empty() {
        h.push_str("<p>No acts yet: they come from <code>acts</code> in the configuration and from enabled MCP servers.</p>");
    } else {
        acts_card(&mut h, &rows, now);
    }
    h.push_str("</section>");

    servers_card(&mut h, &app.host.mcp_servers().await, now);
    feeds_card(&mut h, &app.host.feeds().await, now);

    // Recent acts.
    h.push_str("<section class=\"card\" id=\"acts-log\"><h2>Recent acts</h2>");
    if acts.is_empty() {
        h.push_str("<p>Nothing ran yet.</p>");
    } else {
        h.push_str("<table class=\"acts-log\"><thead><tr><th>when</th><th>act</th><th>said</th><th>confirmed by</th><th>outcome</th><th>ms</th></tr></thead><tbody>");
        for a in &acts {
            let _ = write!(
                h,
                "<tr><td class=\"when\">{}</td><td class=\"token\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                when(a.at.as_deref(), now),
                text(&a.tool),
                text(&shown::cut(&a.utterance, 200)),
                text(a.confirmed_by.as_deref().unwrap_or("—")),
                match a.outcome {
                    "unknown" => "unknown — may have run",
                    outcome => outcome,
                },
                a.duration_ms
            );
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section></main></body></html>");
    Ok(with_cookie(h, set))
}

/// With more acts than this the server sections start folded (the filter opens them).
const OPEN_UP_TO: usize = 12;

/// The acts, a folding section per server: its counts, its "Enable all read-only", its acts
/// (waiting ones first).
fn acts_card(h: &mut String, rows: &[PageTool], now: OffsetDateTime) {
    h.push_str(
        "<p class=\"filter\"><label for=\"filter\">Filter</label> <input type=\"search\" \
         id=\"filter\" placeholder=\"name, description or server\" autocomplete=\"off\"> \
         <span id=\"filter-count\" role=\"status\"></span></p>",
    );
    let mut servers: Vec<&str> = rows.iter().map(|r| r.server.as_str()).collect();
    servers.sort_unstable();
    servers.dedup();
    let fold = rows.len() > OPEN_UP_TO;
    for server in servers {
        let mut group: Vec<_> = rows.iter().filter(|r| r.server == server).collect();
        group.sort_by_key(|r| ActState::ALL.iter().position(|s| *s == r.state));
        let counts: Vec<String> = ActState::ALL
            .iter()
            .filter_map(|st| {
                let n = group.iter().filter(|r| r.state == *st).count();
                (n > 0).then(|| format!("{n} {}", st.as_str()))
            })
            .collect();
        let _ = write!(
            h,
            "<details class=\"group\" data-server=\"{}\"{}><summary><span class=\"group-name\">{}</span> \
             <span class=\"counts\">{}</span></summary>",
            esc(server),
            if fold { "" } else { " open" },
            if server.is_empty() {
                "The configuration's acts".to_owned()
            } else {
                format!("MCP server {}", text(server))
            },
            counts.join(" · "),
        );
        let read_only = group
            .iter()
            .filter(|r| api::bulk_verdict(r, server) == api::Bulk::Enables)
            .count();
        if read_only > 0 {
            let _ = write!(
                h,
                "<p class=\"group-actions\"><button type=\"button\" class=\"act-enable\" \
                 data-bulk=\"enable_read_only\" data-server=\"{}\">Enable all read-only ({})</button> \
                 <span class=\"muted\">one step-up for this server's tools that only read; a tool \
                 that may write is enabled on its own</span></p>",
                esc(server),
                read_only
            );
        }
        for r in group {
            act(h, r, now);
        }
        h.push_str("</details>");
    }
}

/// A fingerprint as the page shows it: its algorithm and the first 12 hex digits (the whole
/// one on demand, in the title).
fn short_fingerprint(fp: &str) -> String {
    let (algo, hex) = fp.rsplit_once(':').unwrap_or(("", fp));
    let short: String = hex.chars().take(12).collect();
    let more = if hex.chars().count() > 12 { "…" } else { "" };
    let algo = if algo.is_empty() {
        String::new()
    } else {
        format!("{algo}:")
    };
    format!(
        "<code class=\"fingerprint\" title=\"{}\">{}{}{more}</code>",
        text(fp),
        text(&algo),
        text(&short)
    )
}

/// One act's card; its description and title come capped from the host.
fn act(h: &mut String, t: &PageTool, now: OffsetDateTime) {
    let r = &t.row;
    let _ = write!(
        h,
        "<article class=\"act\" id=\"act-{0}\" data-name=\"{0}\" data-state=\"{1}\" data-server=\"{3}\"><h4>{2} \
         <span class=\"badge state\">{1}</span>{4}</h4><dl>{5}<dt>description</dt><dd class=\"desc\">{6}</dd></dl>",
        esc(&r.name),
        t.state.as_str(),
        text(&r.name),
        esc(&t.server),
        if r.destructive {
            " <span class=\"badge destructive\">may write: asks for confirmation every time</span>"
        } else {
            " <span class=\"badge readonly\">read-only</span>"
        },
        match &t.title {
            Some(title) => format!("<dt>title</dt><dd>{}</dd>", text(title)),
            None => String::new(),
        },
        text(&r.description),
    );
    let changes = &t.changed;
    if !changes.is_empty() {
        h.push_str(
            "<div class=\"changed\"><p><strong>The server changed this tool since you approved \
             it.</strong> Review every field before enabling it again.</p><table><thead><tr>\
             <th>field</th><th>approved</th><th>now</th></tr></thead><tbody>",
        );
        for c in changes {
            let _ = write!(
                h,
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td></tr>",
                text(&c.field),
                text(c.approved.as_deref().unwrap_or("(absent)")),
                text(c.now.as_deref().unwrap_or("(absent)"))
            );
        }
        h.push_str("</tbody></table></div>");
    }
    let actions = api::actions(t.state);
    if !actions.is_empty() {
        h.push_str("<p class=\"actions\">");
        for a in actions {
            let _ = write!(
                h,
                "<button type=\"button\" class=\"act-{0}\" data-action=\"{0}\" data-name=\"{1}\">{2}</button> ",
                a.as_str(),
                esc(&r.name),
                a.label()
            );
        }
        h.push_str("</p>");
    }
    let _ = write!(
        h,
        "<details class=\"more\"><summary>Details</summary><dl>\
         <dt>scope</dt><dd>{}</dd><dt>runs</dt><dd><code>{}</code></dd>\
         <dt>provenance</dt><dd>{}</dd><dt>fingerprint</dt><dd>{}</dd></dl>",
        text(&r.scope),
        text(&r.cmd.join(" ")),
        text(&r.provenance),
        r.fingerprint
            .as_deref()
            .map_or_else(|| "—".to_owned(), short_fingerprint),
    );
    if !t.history.is_empty() {
        h.push_str("<p class=\"history-title\">History</p><ol class=\"history\">");
        for e in &t.history {
            let _ = write!(
                h,
                "<li>{} — {} → {} by {}: {}</li>",
                when(e.at.as_deref(), now),
                e.from.unwrap_or("(new)"),
                e.to,
                text(&e.actor),
                text(&e.reason)
            );
        }
        h.push_str("</ol>");
    }
    h.push_str("</details></article>");
}

/// How long ago (or how far ahead) `then` is from `now`, in words: "just now", "3 minutes
/// ago", "in 2 hours", "5 days ago"; a date beyond a month.
pub(super) fn ago(then: OffsetDateTime, now: OffsetDateTime) -> String {
    let secs = (now - then).whole_seconds();
    let (n, past) = (secs.unsigned_abs(), secs >= 0);
    let unit = |n: u64, one: &str| {
        let words = if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        };
        if past {
            format!("{words} ago")
        } else {
            format!("in {words}")
        }
    };
    match n {
        0..45 => if past { "just now" } else { "in a few seconds" }.to_owned(),
        45..5_400 => unit(n.div_ceil(60).max(1), "minute"),
        5_400..84_600 => unit((n + 1_800) / 3_600, "hour"),
        84_600..2_592_000 => unit(((n + 43_200) / 86_400).max(1), "day"),
        _ => {
            let d = then.date();
            format!("{}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
        }
    }
}

/// A time for the page from a view's RFC 3339: in words, the exact time in `datetime` and on
/// hover; a dash when absent, and the text as it is when it is not such a time.
fn when(t: Option<&str>, now: OffsetDateTime) -> String {
    use time::format_description::well_known::Rfc3339;
    match t {
        None => "—".to_owned(),
        Some(s) => match OffsetDateTime::parse(s, &Rfc3339) {
            Ok(at) => format!(
                "<time datetime=\"{0}\" title=\"{0}\">{1}</time>",
                text(s),
                esc(&ago(at, now))
            ),
            Err(_) => text(s),
        },
    }
}

/// Optional page text: shown as [`text`], or a dash when absent.
fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| text(&v.to_string()))
}

/// A refused tool's name is the server's and may be huge: its first characters and its length.
const REFUSED_NAME_CAP: usize = 80;
/// A refused tool's reason is capped as the allowlist caps a description.
const REFUSED_REASON_CAP: usize = 300;
/// How many refused tools the card lists.
const REFUSED_LIST: usize = 50;

fn servers_card(h: &mut String, servers: &[ServerStatusView], now: OffsetDateTime) {
    h.push_str("<section class=\"card\" id=\"mcp-servers\"><h2>MCP servers</h2>");
    if servers.is_empty() {
        h.push_str("<p>No MCP server is configured (<code>mcp_servers</code>).</p></section>");
        return;
    }
    for s in servers {
        let info = match &s.server_info {
            Some(i) => format!("{} {}", text(&i.name), text(&i.version)),
            None => "—".to_owned(),
        };
        let _ = write!(
            h,
            "<article class=\"server\" data-name=\"{0}\"><h4>{13} <span class=\"badge\">{1}</span></h4><dl>\
             <dt>target</dt><dd><code>{2}</code></dd><dt>trust</dt><dd>{3}</dd>\
             <dt>enabled</dt><dd>{4}</dd><dt>state</dt><dd>{5}</dd>\
             <dt>protocol</dt><dd>{6}</dd><dt>server</dt><dd>{7}</dd>\
             <dt>tools</dt><dd>{8} offered, {9} proposed, {10} enabled</dd>\
             <dt>last error</dt><dd>{11}</dd><dt>next retry</dt><dd>{12}</dd></dl>",
            esc(&s.name),
            s.transport.as_str(),
            text(&s.target),
            text(&s.trust),
            s.enabled,
            text(&s.state.text()),
            match (&s.protocol_version, &s.era, &s.era_chosen) {
                // How the era was chosen is the protocol's business: folded away.
                (Some(v), Some(era), Some(how)) => format!(
                    "{} <details class=\"era\"><summary>{}</summary>{}</details>",
                    text(v),
                    text(era),
                    text(how)
                ),
                (v, _, _) => opt(v.as_deref()),
            },
            info,
            opt(s.tools_offered),
            s.tools_proposed,
            s.tools_enabled,
            opt(s.last_error.as_deref()),
            when(s.next_retry.as_deref(), now),
            text(&s.name),
        );
        if !s.tools_refused.is_empty() {
            let _ = write!(
                h,
                "<details class=\"refused\"><summary>refused tools ({})</summary><ul>",
                s.tools_refused.len()
            );
            for t in s.tools_refused.iter().take(REFUSED_LIST) {
                let _ = write!(
                    h,
                    "<li><code>{}</code>: {}</li>",
                    esc(&shown::capped(&t.tool, REFUSED_NAME_CAP)),
                    text(&shown::cut(&t.reason, REFUSED_REASON_CAP))
                );
            }
            if s.tools_refused.len() > REFUSED_LIST {
                let _ = write!(
                    h,
                    "<li>… and {} more</li>",
                    s.tools_refused.len() - REFUSED_LIST
                );
            }
            h.push_str("</ul></details>");
        }
        if s.transport == Transport::Http {
            let auth = s.auth.as_ref().map(ToString::to_string);
            let _ = write!(
                h,
                "<p class=\"auth\">authorization: <span class=\"auth-state\">{}</span> \
                 <button type=\"button\" data-oauth=\"connect\" data-name=\"{1}\">Connect</button>",
                opt(auth.as_deref()),
                esc(&s.name),
            );
            if matches!(s.auth, Some(wire::views::ServerAuth::Authorized { .. })) {
                let _ = write!(
                    h,
                    " <button type=\"button\" data-oauth=\"disconnect\" data-name=\"{}\">Disconnect</button>",
                    esc(&s.name)
                );
            }
            h.push_str("</p>");
        }
        let tail = s.stderr_tail.as_deref().unwrap_or("");
        if !tail.is_empty() {
            let _ = write!(
                h,
                "<details><summary>stderr (last lines)</summary><pre>{}</pre></details>",
                block(&shown::cut(tail, 4000))
            );
        }
        h.push_str("</article>");
    }
    h.push_str("</section>");
}

fn feeds_card(h: &mut String, feeds: &[FeedView], now: OffsetDateTime) {
    h.push_str("<section class=\"card\" id=\"feeds\"><h2>Feeds</h2>");
    if feeds.is_empty() {
        h.push_str("<p>No feed is configured (<code>feeds</code>).</p></section>");
        return;
    }
    h.push_str("<table class=\"feeds\"><thead><tr><th>feed</th><th>url</th><th>enabled</th><th>last poll</th><th>next poll</th><th>last error</th><th>items noted</th></tr></thead><tbody>");
    for f in feeds {
        let _ = write!(
            h,
            "<tr><td class=\"token\">{}</td><td class=\"url\"><code>{}</code></td><td>{}</td><td class=\"when\">{}</td><td class=\"when\">{}</td><td>{}</td><td>{}</td></tr>",
            text(&f.name),
            text(&f.url),
            if f.enabled { "yes" } else { "no" },
            when(f.last_success.as_deref(), now),
            when(f.next_poll.as_deref(), now),
            opt(f.last_error.as_deref()),
            opt(f.items_noted),
        );
    }
    h.push_str("</tbody></table></section>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(passkeys: usize, passphrase: bool) -> SessionView {
        SessionView {
            csrf_token: "t".into(),
            signed_in_for_s: None,
            step_up: None,
            passkeys,
            passphrase,
        }
    }

    #[test]
    fn the_step_up_card_carries_what_the_script_reads() {
        // The script decides on the passkey button by `dataset.passkeys === "0"`.
        assert!(SCRIPT.contains("state.dataset.passkeys === \"0\""));
        assert!(SCRIPT.contains("getElementById(\"stepup-state\")"));
        let mut none = String::new();
        stepup_card(&mut none, &session(0, false));
        assert!(
            none.contains("<p id=\"stepup-state\" data-passkeys=\"0\" data-passphrase=\"false\">"),
            "{none}"
        );
        assert!(!none.contains("stepup-passkey") && !none.contains("stepup-passphrase"));
        let mut both = String::new();
        stepup_card(&mut both, &session(2, true));
        assert!(both.contains("data-passkeys=\"2\" data-passphrase=\"true\""));
        assert!(
            both.contains("id=\"stepup-passkey\"") && both.contains("id=\"stepup-passphrase\"")
        );
    }

    #[test]
    fn the_authorization_line_is_decided_by_the_transport() {
        let server = |transport: Transport| ServerStatusView {
            name: "notes".into(),
            transport,
            target: "x".into(),
            enabled: true,
            state: wire::views::ServerState::Ready,
            trust: "t".into(),
            protocol_version: None,
            era: None,
            era_chosen: None,
            server_info: None,
            tools_offered: None,
            tools_proposed: 0,
            tools_enabled: 0,
            tools_refused: Vec::new(),
            last_error: None,
            next_retry: None,
            stderr_tail: None,
            violations: 0,
            dials: 0,
            unstable: None,
            auth: None,
            network: None,
        };
        let mut http = String::new();
        servers_card(
            &mut http,
            &[server(Transport::Http)],
            OffsetDateTime::UNIX_EPOCH,
        );
        assert!(http.contains("<span class=\"badge\">http</span>"), "{http}");
        assert!(
            http.contains("data-oauth=\"connect\" data-name=\"notes\""),
            "{http}"
        );
        let mut stdio = String::new();
        servers_card(
            &mut stdio,
            &[server(Transport::Stdio)],
            OffsetDateTime::UNIX_EPOCH,
        );
        assert!(
            stdio.contains("<span class=\"badge\">stdio</span>"),
            "{stdio}"
        );
        assert!(!stdio.contains("data-oauth"), "{stdio}");
        assert!(stdio.contains("<dt>state</dt><dd>ready</dd>"), "{stdio}");
    }

    #[test]
    fn times_are_said_in_words_with_the_exact_time_on_hover() {
        use time::macros::datetime;
        let now = datetime!(2026-12-03 12:00:00 UTC);
        for (then, words) in [
            (datetime!(2026-12-03 12:00:00 UTC), "just now"),
            (datetime!(2026-12-03 11:59:20 UTC), "just now"),
            (datetime!(2026-12-03 11:59:00 UTC), "1 minute ago"),
            (datetime!(2026-12-03 11:57:00 UTC), "3 minutes ago"),
            (datetime!(2026-12-03 12:05:00 UTC), "in 5 minutes"),
            (datetime!(2026-12-03 10:00:00 UTC), "2 hours ago"),
            (datetime!(2026-12-04 13:00:00 UTC), "in 1 day"),
            (datetime!(2026-11-28 12:00:00 UTC), "5 days ago"),
            (datetime!(2026-09-01 08:00:00 UTC), "2026-09-01"),
        ] {
            assert_eq!(ago(then, now), words, "{then}");
        }
        assert_eq!(
            when(Some("2026-12-03T11:57:00Z"), now),
            "<time datetime=\"2026-12-03T11:57:00Z\" title=\"2026-12-03T11:57:00Z\">3 minutes ago</time>"
        );
        assert_eq!(when(None, now), "—");
        // Not a time: shown as text, never as markup.
        assert_eq!(when(Some("<b>soon</b>"), now), "&lt;b&gt;soon&lt;/b&gt;");
        assert_eq!(
            when(Some("2026-12-03T10:00:00Z"), now),
            "<time datetime=\"2026-12-03T10:00:00Z\" title=\"2026-12-03T10:00:00Z\">2 hours ago</time>"
        );
    }

    #[test]
    fn a_fingerprint_is_shown_short_with_the_whole_one_on_hover() {
        let full = format!("sha256:{}", "0123456789abcdef".repeat(4));
        assert_eq!(
            short_fingerprint(&full),
            format!("<code class=\"fingerprint\" title=\"{full}\">sha256:0123456789ab…</code>")
        );
        assert_eq!(
            short_fingerprint("sha256:abcd"),
            "<code class=\"fingerprint\" title=\"sha256:abcd\">sha256:abcd</code>"
        );
    }

    #[test]
    fn the_script_words_every_refusal_code_of_the_server() {
        for code in crate::error::Code::ALL {
            let name = serde_json::to_value(code).unwrap();
            let name = name.as_str().unwrap();
            assert!(
                SCRIPT.contains(&format!("\n    {name}:")),
                "page.js has no words for the code {name}"
            );
        }
        for name in [
            "NotAllowedError",
            "InvalidStateError",
            "AbortError",
            "SecurityError",
        ] {
            assert!(SCRIPT.contains(&format!("\n    {name}:")), "{name}");
        }
        // Text reaches the page only through textContent.
        assert!(!SCRIPT.contains("innerHTML") && !SCRIPT.contains("insertAdjacentHTML"));
        assert!(!SCRIPT.contains("document.write"));
    }

    #[test]
    fn escapes() {
        assert_eq!(
            esc("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }
}
