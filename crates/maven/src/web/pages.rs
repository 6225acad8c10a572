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
use serde_json::Value;
use store::ToolState;

use super::api;
use super::app::{peer_of, App, Conn};
use super::error::AppError;
use crate::json;
use crate::views::{FeedView, ServerStatusView, SessionView, Transport};
use turns::Question;

const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

/// Escapes text for HTML element content and double-quoted attributes.
pub(super) fn esc(s: &str) -> String {
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
pub(super) fn text(s: &str) -> String {
    esc(&shown::line(s))
}

/// Outside text that may span lines (a `<pre>`): newlines kept, every other hazard shown as
/// its escape ([`shown::block`]), then escaped for HTML.
fn block(s: &str) -> String {
    esc(&shown::block(s))
}

/// A JSON value as page text: strings bare, null as a dash.
fn val(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".to_owned(),
        Some(Value::String(s)) => text(s),
        Some(other) => text(&other.to_string()),
    }
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
         built-in authenticator). The passkey then verifies you before any act is enabled or \
         disabled.</p>\
         <p><button type=\"button\" id=\"enroll-button\">Create a passkey</button></p>\
         <p id=\"enroll-status\" role=\"status\"></p></section></main></body></html>",
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

fn state_title(s: ToolState) -> &'static str {
    match s {
        ToolState::Proposed => "Proposed — waiting for you",
        ToolState::Enabled => "Enabled",
        ToolState::Disabled => "Disabled",
        ToolState::Withdrawn => "Withdrawn — no longer offered",
    }
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
    let rows = api::tool_views(&app).await?;
    let acts = app.web.store.acts_log(api::ACTS_LOG).await?;
    let mut h = head("Maven — tools", &s.csrf_token);
    let _ = write!(
        h,
        "<header><h1>Maven</h1><nav><a href=\"/tools\">Tools</a></nav></header><main>"
    );

    stepup_card(&mut h, &s);
    if let Some(q) = app.status.question() {
        question_card(&mut h, &q);
    }

    // Acts by state.
    h.push_str("<section class=\"card\" id=\"acts\"><h2>Acts</h2>");
    if rows.is_empty() {
        h.push_str("<p>No acts yet: they come from <code>acts</code> in the configuration and from enabled MCP servers.</p>");
    }
    for st in ToolState::ALL {
        let group: Vec<_> = rows.iter().filter(|(r, _)| r.state == st).collect();
        if group.is_empty() {
            continue;
        }
        let _ = write!(
            h,
            "<h3 class=\"state-{0}\">{1} ({2})</h3><div class=\"group\" data-state=\"{0}\">",
            st.as_str(),
            esc(state_title(st)),
            group.len()
        );
        for (r, hist) in group {
            act(&mut h, r, hist);
        }
        h.push_str("</div>");
    }
    h.push_str("</section>");

    servers_card(&mut h, &app.status.mcp_servers().await);
    feeds_card(&mut h, &app.status.feeds().await);

    // Recent acts.
    h.push_str("<section class=\"card\" id=\"acts-log\"><h2>Recent acts</h2>");
    if acts.is_empty() {
        h.push_str("<p>Nothing ran yet.</p>");
    } else {
        h.push_str("<table><thead><tr><th>when</th><th>act</th><th>said</th><th>confirmed by</th><th>outcome</th><th>ms</th></tr></thead><tbody>");
        for a in &acts {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                val(Some(&json::time(a.at))),
                text(&a.tool),
                text(&shown::cut(&a.utterance, 200)),
                text(a.confirmed_by.as_deref().unwrap_or("—")),
                match a.result() {
                    store::ActResult::Ok => "ok",
                    store::ActResult::Failed => "failed",
                    store::ActResult::Unknown => "unknown — may have run",
                },
                a.duration_ms
            );
        }
        h.push_str("</tbody></table>");
    }
    h.push_str("</section></main></body></html>");
    Ok(with_cookie(h, set))
}

fn act(h: &mut String, r: &store::ToolRow, hist: &[store::ToolEvent]) {
    let _ = write!(
        h,
        "<article class=\"act\" id=\"act-{0}\" data-name=\"{0}\" data-state=\"{1}\"><h4>{8} \
         <span class=\"badge state\">{1}</span>{2}</h4><dl>{9}\
         <dt>scope</dt><dd>{3}</dd><dt>runs</dt><dd><code>{4}</code></dd>\
         <dt>description</dt><dd>{5}</dd><dt>provenance</dt><dd>{6}</dd>\
         <dt>fingerprint</dt><dd><code>{7}</code></dd></dl>",
        esc(&r.name),
        r.state.as_str(),
        if r.destructive {
            " <span class=\"badge destructive\">may write: asks for confirmation every time</span>"
        } else {
            " <span class=\"badge readonly\">read-only</span>"
        },
        text(&r.scope),
        text(&r.cmd.join(" ")),
        text(&shown::cut(&r.description, api::DESCRIPTION_CAP)),
        text(&r.provenance),
        text(r.fingerprint.as_deref().unwrap_or("—")),
        text(&r.name),
        match r.shape.get("title").and_then(Value::as_str) {
            Some(t) => format!(
                "<dt>title</dt><dd>{}</dd>",
                text(&shown::cut(t, api::DESCRIPTION_CAP))
            ),
            None => String::new(),
        },
    );
    let changes = api::changes(r);
    if !changes.is_empty() {
        h.push_str(
            "<div class=\"changed\"><p><strong>The server changed this tool since you approved \
             it.</strong> Review every field before enabling it again.</p><table><thead><tr>\
             <th>field</th><th>approved</th><th>now</th></tr></thead><tbody>",
        );
        for c in &changes {
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
    let actions = api::actions(r.state);
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
    if !hist.is_empty() {
        h.push_str("<details><summary>History</summary><ol class=\"history\">");
        for e in hist {
            let _ = write!(
                h,
                "<li>{} — {} → {} by {}: {}</li>",
                val(Some(&json::time(e.at))),
                e.from.map(ToolState::as_str).unwrap_or("(new)"),
                e.to.as_str(),
                text(&e.actor),
                text(&e.reason)
            );
        }
        h.push_str("</ol></details>");
    }
    h.push_str("</article>");
}

/// Optional page text: shown as [`text`], or a dash when absent.
fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| text(&v.to_string()))
}

/// A refused tool's name is the server's and may be huge: its first characters and its length.
const REFUSED_NAME_CAP: usize = 80;
/// How many refused tools the card lists.
const REFUSED_LIST: usize = 50;

fn servers_card(h: &mut String, servers: &[ServerStatusView]) {
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
                (Some(v), Some(era), Some(how)) =>
                    format!("{} ({}: {})", text(v), text(era), text(how)),
                (v, _, _) => opt(v.as_deref()),
            },
            info,
            opt(s.tools_offered),
            s.tools_proposed,
            s.tools_enabled,
            opt(s.last_error.as_deref()),
            opt(s.next_retry.as_deref()),
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
                    text(&shown::cut(&t.reason, api::DESCRIPTION_CAP))
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
            if matches!(s.auth, Some(crate::views::ServerAuth::Authorized { .. })) {
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

fn feeds_card(h: &mut String, feeds: &[FeedView]) {
    h.push_str("<section class=\"card\" id=\"feeds\"><h2>Feeds</h2>");
    if feeds.is_empty() {
        h.push_str("<p>No feed is configured (<code>feeds</code>).</p></section>");
        return;
    }
    h.push_str("<table><thead><tr><th>feed</th><th>url</th><th>enabled</th><th>last poll</th><th>next poll</th><th>last error</th><th>items noted</th></tr></thead><tbody>");
    for f in feeds {
        let _ = write!(
            h,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(&f.name),
            text(&f.url),
            f.enabled,
            opt(f.last_success.as_deref()),
            opt(f.next_poll.as_deref()),
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
            state: crate::views::ServerState::Ready,
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
        servers_card(&mut http, &[server(Transport::Http)]);
        assert!(http.contains("<span class=\"badge\">http</span>"), "{http}");
        assert!(
            http.contains("data-oauth=\"connect\" data-name=\"notes\""),
            "{http}"
        );
        let mut stdio = String::new();
        servers_card(&mut stdio, &[server(Transport::Stdio)]);
        assert!(
            stdio.contains("<span class=\"badge\">stdio</span>"),
            "{stdio}"
        );
        assert!(!stdio.contains("data-oauth"), "{stdio}");
        assert!(stdio.contains("<dt>state</dt><dd>ready</dd>"), "{stdio}");
    }

    #[test]
    fn escapes() {
        assert_eq!(
            esc("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }
}
