//! Feed discovery: the feeds an HTML page names in its `<link rel="alternate">` elements, with
//! no IO.
//!
//! [`discover`] scans the page for `link` start tags (comments, `script` and `style` bodies
//! skipped), keeps those whose `rel` has the word `alternate` and whose `type` is RSS, Atom or
//! JSON Feed, and resolves each `href` against the page's `<base href>`, else its URL. Only
//! `http` and `https` results are kept, each once, at most [`MAX_LINKS`]; a tag's attributes are
//! read as an HTML parser reads them (quotes optional, character references decoded).

use crate::dom::Attrs;
use crate::entities::{self, DecodeFlags};
use url::Url;

/// The most feeds one page may name.
pub const MAX_LINKS: usize = 32;
/// The longest `href` considered, in bytes.
const MAX_HREF: usize = 8192;
/// The longest title kept, in characters.
const MAX_TITLE: usize = 200;

/// One feed a page names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedLink {
    /// The absolute URL of the feed.
    pub url: String,
    /// Its media type, lowercase: `application/rss+xml`, `application/atom+xml` or
    /// `application/feed+json`.
    pub mime: String,
    /// The link's `title`, when it has one.
    pub title: Option<String>,
}

/// The media types of feeds a page may link to.
const FEED_TYPES: &[&str] = &[
    "application/rss+xml",
    "application/atom+xml",
    "application/feed+json",
];

fn decoded(v: &str) -> String {
    let mut flags = DecodeFlags::default();
    entities::decode(v, &mut flags).trim().to_owned()
}

/// The position just past the `>` that ends a tag starting at `from`, quotes respected.
fn tag_end(s: &str, from: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, b) in s.as_bytes().iter().enumerate().skip(from) {
        match (quote, *b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(*b),
            (None, b'>') => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Whether `s` at `at` starts with the tag name `name` (ASCII case-insensitive), followed by
/// whitespace, `/` or `>`.
fn is_tag(s: &[u8], at: usize, name: &[u8]) -> bool {
    let end = at + name.len();
    s.get(at..end).is_some_and(|n| n.eq_ignore_ascii_case(name))
        && s.get(end)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'/' || *b == b'>')
}

/// Finds the closing tag `</name` from `from`, case-insensitively.
fn find_close(s: &str, from: usize, name: &[u8]) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = from;
    while let Some(off) = memchr::memchr(b'<', b.get(i..)?) {
        let at = i + off;
        if b.get(at + 1) == Some(&b'/') && is_tag(b, at + 2, name) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// The feeds `html` (a page fetched from `page_url`) names. See the module documentation.
pub fn discover(html: &str, page_url: &str) -> Vec<FeedLink> {
    let mut base = Url::parse(page_url.trim()).ok();
    let mut out: Vec<FeedLink> = Vec::new();
    let b = html.as_bytes();
    let mut i = 0;
    while let Some(off) = b.get(i..).and_then(|rest| memchr::memchr(b'<', rest)) {
        let at = i + off;
        if b.get(at + 1..at + 4) == Some(b"!--") {
            i = html
                .get(at + 4..)
                .and_then(|r| r.find("-->"))
                .map_or(b.len(), |e| at + 4 + e + 3);
            continue;
        }
        let Some(end) = tag_end(html, at + 1) else {
            break;
        };
        let raw = &html[at + 1..end - 1];
        i = end;
        for skip in [&b"script"[..], b"style"] {
            if is_tag(b, at + 1, skip) {
                i = find_close(html, end, skip).unwrap_or(b.len());
            }
        }
        if is_tag(b, at + 1, b"base") {
            let href = Attrs::new(&raw[4..]).find(|(k, _)| k.eq_ignore_ascii_case("href"));
            if let Some(h) = href.map(|(_, v)| decoded(v)) {
                if let Some(u) = base
                    .as_ref()
                    .and_then(|b| b.join(&h).ok())
                    .or_else(|| Url::parse(&h).ok())
                {
                    base = Some(u);
                }
            }
            continue;
        }
        if !is_tag(b, at + 1, b"link") {
            continue;
        }
        let (mut rel, mut mime, mut href, mut title) = (None, None, None, None);
        for (k, v) in Attrs::new(&raw[4..]) {
            if k.eq_ignore_ascii_case("rel") && rel.is_none() {
                rel = Some(decoded(v));
            } else if k.eq_ignore_ascii_case("type") && mime.is_none() {
                mime = Some(decoded(v));
            } else if k.eq_ignore_ascii_case("href") && href.is_none() && v.len() <= MAX_HREF {
                href = Some(decoded(v));
            } else if k.eq_ignore_ascii_case("title") && title.is_none() {
                title = Some(decoded(v));
            }
        }
        let alternate = rel.is_some_and(|r| {
            r.split_ascii_whitespace()
                .any(|w| w.eq_ignore_ascii_case("alternate"))
        });
        let Some(mime) = mime.map(|m| {
            m.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        }) else {
            continue;
        };
        if !alternate || !FEED_TYPES.contains(&mime.as_str()) {
            continue;
        }
        let Some(href) = href.filter(|h| !h.is_empty()) else {
            continue;
        };
        let resolved = match &base {
            Some(b) => b.join(&href).ok(),
            None => Url::parse(&href).ok(),
        };
        let Some(url) = resolved.filter(|u| matches!(u.scheme(), "http" | "https")) else {
            continue;
        };
        let url = String::from(url);
        if out.iter().any(|l| l.url == url) {
            continue;
        }
        out.push(FeedLink {
            url,
            mime,
            title: title
                .map(|t| {
                    crate::html::collapse(&t)
                        .chars()
                        .take(MAX_TITLE)
                        .collect::<String>()
                })
                .filter(|t| !t.is_empty()),
        });
        if out.len() >= MAX_LINKS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(v: &[FeedLink]) -> Vec<&str> {
        v.iter().map(|l| l.url.as_str()).collect()
    }

    #[test]
    fn several_links_in_document_order() {
        let page = r#"<!doctype html><html><head>
<link rel="stylesheet" href="/s.css">
<LINK REL="Alternate" TYPE="application/RSS+XML" TITLE="All posts" HREF="https://example.org/rss.xml">
<link rel=alternate type=application/atom+xml href=/atom.xml title='Atom &amp; more'>
<link rel="alternate feed" type="application/feed+json" href="feed.json"/>
<link rel="alternate" type="text/html" hreflang="fr" href="/fr/">
<link rel="alternate" type="application/rss+xml" href="https://example.org/rss.xml">
</head><body></body></html>"#;
        let got = discover(page, "https://example.org/blog/post.html");
        assert_eq!(
            urls(&got),
            [
                "https://example.org/rss.xml",
                "https://example.org/atom.xml",
                "https://example.org/blog/feed.json"
            ]
        );
        assert_eq!(got[0].mime, "application/rss+xml");
        assert_eq!(got[0].title.as_deref(), Some("All posts"));
        assert_eq!(got[1].title.as_deref(), Some("Atom & more"));
        assert_eq!(got[2].mime, "application/feed+json");
        assert_eq!(got[2].title, None);
    }

    #[test]
    fn relative_hrefs_resolve_against_base_href_else_the_page() {
        let page = r#"<head><base href="/sub/"><link rel="alternate" type="application/atom+xml" href="a.xml?x=1&amp;y=2"></head>"#;
        assert_eq!(
            urls(&discover(page, "http://127.0.0.1:8080/index.html")),
            ["http://127.0.0.1:8080/sub/a.xml?x=1&y=2"]
        );
        let page =
            r#"<link rel="alternate" type="application/rss+xml" href="//cdn.example.net/f.xml">"#;
        assert_eq!(
            urls(&discover(page, "https://example.org/")),
            ["https://cdn.example.net/f.xml"]
        );
    }

    #[test]
    fn a_page_without_feed_links_gives_none() {
        assert!(discover(
            "<html><head><title>x</title></head><body>hi</body></html>",
            "https://e.org/"
        )
        .is_empty());
        assert!(discover("", "https://e.org/").is_empty());
        assert!(discover(
            "<link rel=\"alternate\" type=\"application/rss+xml\">",
            "https://e.org/"
        )
        .is_empty());
    }

    #[test]
    fn hostile_attributes_and_hiding_places() {
        let page = r#"
<!-- <link rel="alternate" type="application/rss+xml" href="/commented.xml"> -->
<script>var s = '<link rel="alternate" type="application/rss+xml" href="/script.xml">';</script>
<style>/* <link rel="alternate" type="application/rss+xml" href="/style.xml"> */</style>
<link rel="alternate" type="application/rss+xml" href="javascript:alert(1)">
<link rel="alternate" type="application/rss+xml" href="data:text/xml,<rss/>">
<link rel="alternate" type="application/rss+xml" href="file:///etc/passwd">
<link rel="alternate" type="application/rss+xml" title="a > b" href="/ok.xml" >
<link rel="alternate" type="application/rss+xml" href="/first.xml" href="/second.xml">
<link rel="alternate" type="application/rss+xml" href="http://[bad">
<link rel="alternate" type="application/rss+xml" href='/unterminated.xml
"#;
        let got = discover(page, "https://example.org/");
        assert_eq!(
            urls(&got),
            [
                "https://example.org/ok.xml",
                "https://example.org/first.xml"
            ]
        );
        assert_eq!(got[0].title.as_deref(), Some("a > b"));
        let mut many = String::new();
        for i in 0..100 {
            many.push_str(&format!(
                "<link rel=alternate type=application/rss+xml href=/{i}.xml>"
            ));
        }
        assert_eq!(discover(&many, "https://example.org/").len(), MAX_LINKS);
        let long = format!(
            "<link rel=alternate type=application/rss+xml href=/{}>",
            "a".repeat(MAX_HREF + 1)
        );
        assert!(discover(&long, "https://example.org/").is_empty());
        // No panic on odd bytes anywhere.
        for s in [
            "<",
            "<link",
            "<link rel",
            "<!--",
            "<base href=",
            "<script",
            "<ж<link ж>",
        ] {
            let _ = discover(s, "https://example.org/");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_page_gives_only_absolute_http_links_never_a_panic(s in "(<link |<LINK |rel=|alternate |type=|application/rss\\+xml|href=|/a|'|\"|>|<!--|-->|<script>|</script>|<base href=/b/>|[a-z &;:]){0,40}") {
            for l in discover(&s, "https://example.org/p/") {
                proptest::prop_assert!(l.url.starts_with("https://") || l.url.starts_with("http://"));
            }
        }
    }
}
