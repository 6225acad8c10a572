//! `maven feeds add URL [--name NAME] [--allow-private]`: a feed, or the feed a site's page
//! names in its `<link rel="alternate">`, fetched and parsed through the door the poller would
//! use before its block is written (`feeds_edit`), then a running daemon reloaded.
//!
//! Exit codes: 0 added; 1 not added (no feed there, a duplicate, the file); 2 usage; 3 the door
//! refused the address.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use webfetch::{header, HeaderValue, Request};

use super::feeds_edit;
use crate::exit::{errln, outln, EXIT_FAILED, EXIT_USAGE};

/// Exit code: refused by policy (as `maven fetch` says it).
const EXIT_REFUSED: u8 = 3;

/// What a feed fetch asks for (as the poller does).
const ACCEPT: &str = "application/rss+xml, application/atom+xml, application/feed+json, \
                      application/json;q=0.9, application/xml;q=0.9, text/xml;q=0.9, \
                      text/html;q=0.5, */*;q=0.1";

/// The longest name made for a feed.
const NAME_MAX: usize = 48;

/// Why a feed was not added, and the exit code that says it.
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) code: u8,
}

fn fail(code: u8, message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        code,
    }
}

/// Whether `name` is a valid feed name (letters, digits, `-`, `_`, `.`; at most 64).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A valid name made of `text` (a title, a host): its letters in any script spelled in ASCII
/// («Новости науки» is `novosti-nauki`, «Ελληνικά» `ellenika`), lowercase letters and digits,
/// runs of anything else one `-`; empty when nothing is left.
pub(crate) fn slug(text: &str) -> String {
    let mut out = String::new();
    // Only letters and digits are spelled out: a symbol (an emoji, a quote) separates.
    let spelled = text.chars().flat_map(|c| {
        let s = if c.is_alphanumeric() {
            deunicode::deunicode_char(c).unwrap_or("-")
        } else {
            "-"
        };
        s.chars()
    });
    for c in spelled {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= NAME_MAX {
            break;
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// `base`, or `base-2`, `base-3`, … : the first that no name in `taken` is.
pub(crate) fn unique(base: &str, taken: &[String]) -> String {
    let base = if base.is_empty() { "feed" } else { base };
    if !taken.iter().any(|t| t == base) {
        return base.to_owned();
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|c| !taken.iter().any(|t| t == c))
        .unwrap_or_else(|| base.to_owned())
}

/// A name for a feed titled `title` at `url`.
pub(crate) fn derive_name(title: Option<&str>, url: &str, taken: &[String]) -> String {
    let from_title = title.map(slug).unwrap_or_default();
    let base = if from_title.is_empty() {
        url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(|h| slug(h.trim_start_matches("www."))))
            .unwrap_or_default()
    } else {
        from_title
    };
    unique(&base, taken)
}

/// The words of a refusal: the URL, the door's reason, and the fix.
fn refused(url: &str, e: &webfetch::Error) -> Failure {
    fail(
        EXIT_REFUSED,
        format!(
            "{} was refused: {}. If the address is yours, add it with --allow-private (recorded as \"allow_private\": true in its block); else {}",
            shown::line(url),
            shown::line(&e.to_string()),
            super::door_fix("the feed")
        ),
    )
}

/// One GET through the door: the final URL, the content type and the body.
async fn get(
    fetcher: &webfetch::Fetcher,
    url: &str,
) -> Result<(String, Option<String>, Vec<u8>), Failure> {
    let req = Request::get(url.to_owned()).header(header::ACCEPT, HeaderValue::from_static(ACCEPT));
    let resp = match fetcher.send(req).await {
        Ok(r) => r,
        Err(e) if e.is_refused() => return Err(refused(url, &e)),
        Err(e) => {
            return Err(fail(
                EXIT_FAILED,
                format!("{}: {}", shown::line(url), shown::line(&e.to_string())),
            ))
        }
    };
    let status = resp.status();
    if !status.is_success() {
        return Err(fail(
            EXIT_FAILED,
            format!("{} answered http status {status}", shown::line(url)),
        ));
    }
    let final_url = resp.url().to_owned();
    let ct = resp.header_str(header::CONTENT_TYPE).map(str::to_owned);
    let body = resp.bytes().await.map_err(|e| {
        fail(
            EXIT_FAILED,
            format!("{}: {}", shown::line(url), shown::line(&e.to_string())),
        )
    })?;
    Ok((final_url, ct, body.to_vec()))
}

fn parse(url: &str, ct: Option<&str>, body: &[u8]) -> Result<feeds::Feed, feeds::NotAFeed> {
    feeds::parse(
        body,
        &feeds::Hints {
            url: Some(url),
            content_type: ct,
            content_location: None,
        },
    )
}

fn is_html(ct: Option<&str>, e: &feeds::NotAFeed) -> bool {
    e.is_html()
        || ct.is_some_and(|c| {
            let c = c.trim().to_ascii_lowercase();
            c.starts_with("text/html") || c.starts_with("application/xhtml")
        })
}

/// A feed found at a URL: its own URL, its parse, and the other feeds its page named.
pub(crate) struct Found {
    pub(crate) url: String,
    pub(crate) feed: feeds::Feed,
    pub(crate) others: Vec<String>,
}

/// The feed at `url`, or the first feed the page at `url` names.
pub(crate) async fn find_feed(fetcher: &webfetch::Fetcher, url: &str) -> Result<Found, Failure> {
    let (final_url, ct, body) = get(fetcher, url).await?;
    let e = match parse(&final_url, ct.as_deref(), &body) {
        Ok(feed) => {
            return Ok(Found {
                url: url.to_owned(),
                feed,
                others: Vec::new(),
            })
        }
        Err(e) => e,
    };
    if !is_html(ct.as_deref(), &e) {
        return Err(fail(
            EXIT_FAILED,
            format!("{} is not a feed: {e}", shown::line(url)),
        ));
    }
    let page = String::from_utf8_lossy(&body);
    let links = feeds::discover::discover(&page, &final_url);
    let Some(link) = links.first() else {
        return Err(fail(
            EXIT_FAILED,
            format!(
                "{} is an HTML page with no <link rel=\"alternate\"> to a feed",
                shown::line(url)
            ),
        ));
    };
    let (feed_final, ct, body) = get(fetcher, &link.url).await?;
    match parse(&feed_final, ct.as_deref(), &body) {
        Ok(feed) => Ok(Found {
            url: link.url.clone(),
            feed,
            others: links.iter().skip(1).map(|l| l.url.clone()).collect(),
        }),
        Err(e) if is_html(ct.as_deref(), &e) => Err(fail(
            EXIT_FAILED,
            format!(
                "{} (the feed {} names) answers an HTML page, not a feed",
                shown::line(&link.url),
                shown::line(url)
            ),
        )),
        Err(e) => Err(fail(
            EXIT_FAILED,
            format!(
                "{} (the feed {} names) is not a feed: {e}",
                shown::line(&link.url),
                shown::line(url)
            ),
        )),
    }
}

/// The door a new feed is fetched through: the `fetch` block's, as the poller builds a feed's,
/// on a private address only with `allow_private`.
pub(crate) fn door(
    config: &config::Config,
    allow_private: bool,
) -> Result<webfetch::DoorConfig, String> {
    let mut d = config
        .door(&config::Door::Fetch)
        .map_err(|e| e.to_string())?;
    d.allow_private = allow_private;
    Ok(d)
}

/// The validated configuration of the file to edit: a missing file is every default.
pub(crate) fn current_config(path: &Path) -> Result<config::Config, String> {
    if !path.exists() {
        return Ok(config::Config::defaults());
    }
    config::Config::load(Some(path)).map_err(|e| e.to_string())
}

async fn add(
    path: &Path,
    url: &str,
    name: Option<&str>,
    allow_private: bool,
) -> Result<String, Failure> {
    let usage = |m: String| fail(EXIT_USAGE, m);
    if let Some(n) = name.filter(|n| !valid_name(n)) {
        return Err(usage(format!(
            "--name {}: letters, digits, '-', '_' or '.', at most 64",
            shown::line(n)
        )));
    }
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        _ => {
            return Err(usage(format!(
                "{}: not an http or https URL",
                shown::line(url)
            )))
        }
    }
    let cfg = current_config(path).map_err(|e| fail(EXIT_USAGE, e))?;
    let file = feeds_edit::read_file(path).map_err(|e| fail(EXIT_FAILED, e))?;
    let existing = feeds_edit::configured_feeds(&file);
    let taken: Vec<String> = existing.iter().map(|(n, _)| n.clone()).collect();
    let duplicate_url = |u: &str| {
        existing.iter().find(|(_, x)| x == u).map(|(n, _)| {
            fail(
                EXIT_FAILED,
                format!(
                    "{} is already configured as the feed {:?} in {}",
                    shown::line(u),
                    shown::line(n),
                    path.display()
                ),
            )
        })
    };
    if let Some(d) = duplicate_url(url) {
        return Err(d);
    }
    if let Some(n) = name.filter(|n| taken.iter().any(|t| t == n)) {
        return Err(fail(
            EXIT_FAILED,
            format!("a feed named {n:?} is already in {}", path.display()),
        ));
    }
    let door = door(&cfg, allow_private).map_err(|e| fail(EXIT_USAGE, e))?;
    let fetcher = webfetch::Fetcher::new(door);
    let Found {
        url: feed_url,
        feed,
        others,
    } = find_feed(&fetcher, url).await?;
    if let Some(d) = duplicate_url(&feed_url) {
        return Err(d);
    }
    let name = match name {
        Some(n) => n.to_owned(),
        None => derive_name(feed.title.as_deref(), &feed_url, &taken),
    };
    let block = if allow_private {
        json!({"name": name, "url": feed_url, "allow_private": true})
    } else {
        json!({"name": name, "url": feed_url})
    };
    feeds_edit::append_feeds(path, vec![block]).map_err(|e| fail(EXIT_FAILED, e))?;
    let title = feed
        .title
        .as_deref()
        .filter(|t| !t.is_empty())
        .map(|t| format!(" ({})", shown::line(t)))
        .unwrap_or_default();
    let mut said = format!(
        "added the feed {name}: {}{title} to {}",
        shown::line(&feed_url),
        path.display()
    );
    if !others.is_empty() {
        let others: Vec<String> = others.iter().map(|o| shown::line(o).into_owned()).collect();
        said.push_str(&format!(
            "\nthe page names other feeds too (add each with `maven feeds add URL`): {}",
            others.join(", ")
        ));
    }
    Ok(said)
}

/// `maven feeds add`.
pub(crate) async fn run(
    config: Option<&Path>,
    data_dir: &Path,
    url: &str,
    name: Option<&str>,
    allow_private: bool,
) -> ExitCode {
    let path = super::config_edit::target(config);
    match add(&path, url.trim(), name, allow_private).await {
        Ok(said) => {
            outln!("{said}");
            outln!("{}", feeds_edit::reload(data_dir, &path).await);
            ExitCode::SUCCESS
        }
        Err(f) => {
            errln!("maven feeds add: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_valid_and_unique() {
        let taken = vec!["lwn-net".to_owned(), "feed".to_owned()];
        assert_eq!(
            derive_name(Some("LWN.net"), "https://lwn.net/rss", &taken),
            "lwn-net-2"
        );
        assert_eq!(
            derive_name(Some("«Новости науки»"), "http://127.0.0.1:9/", &taken),
            "novosti-nauki"
        );
        assert_eq!(
            derive_name(Some("Ελληνικά νέα"), "https://www.example.org/x", &taken),
            "ellenika-nea"
        );
        assert_eq!(derive_name(Some("Café Crème"), "x", &taken), "cafe-creme");
        assert_eq!(
            derive_name(Some("中文新闻"), "x", &taken),
            "zhong-wen-xin-wen"
        );
        assert_eq!(
            derive_name(Some("🙂🙂"), "https://www.example.org/x", &taken),
            "example-org"
        );
        assert_eq!(
            derive_name(None, "http://127.0.0.1:9/", &taken),
            "127-0-0-1"
        );
        assert_eq!(derive_name(Some("!!!"), "not a url", &taken), "feed-2");
        let long = derive_name(Some(&"a b ".repeat(100)), "https://e.org/", &[]);
        assert!(long.len() <= NAME_MAX && valid_name(&long), "{long}");
        assert!(valid_name("a.b_c-1") && !valid_name("a b") && !valid_name(""));
    }
}
