//! HTML helpers: plain-text rendering, escaping, and resolving relative URIs in markup.

use crate::entities::{self, DecodeFlags};
use std::borrow::Cow;
use url::Url;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Gap {
    None,
    Space,
    Line,
    Para,
}

struct TextOut {
    out: String,
    gap: Gap,
}

impl TextOut {
    fn push_text(&mut self, s: &str) {
        for c in s.chars() {
            if c.is_whitespace() || c == '\u{a0}' {
                self.gap = self.gap.max(Gap::Space);
            } else if c == '\u{ad}' || c == '\u{200b}' {
                // soft hyphen, zero-width space: invisible
            } else {
                if !self.out.is_empty() {
                    match self.gap {
                        Gap::None => {}
                        Gap::Space => self.out.push(' '),
                        Gap::Line => self.out.push('\n'),
                        Gap::Para => self.out.push_str("\n\n"),
                    }
                }
                self.gap = Gap::None;
                self.out.push(c);
            }
        }
    }
}

fn block_gap(name: &str) -> Gap {
    const PARA: &[&str] = &[
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "dl",
        "table",
        "hr",
        "figure",
        "section",
        "article",
        "header",
        "footer",
        "aside",
        "nav",
        "form",
        "fieldset",
        "address",
        "main",
    ];
    const LINE: &[&str] = &[
        "div",
        "li",
        "tr",
        "dt",
        "dd",
        "figcaption",
        "caption",
        "tbody",
        "thead",
    ];
    const SPACE: &[&str] = &["td", "th", "img"];
    if PARA.iter().any(|b| b.eq_ignore_ascii_case(name)) {
        Gap::Para
    } else if LINE.iter().any(|b| b.eq_ignore_ascii_case(name)) {
        Gap::Line
    } else if SPACE.iter().any(|b| b.eq_ignore_ascii_case(name)) {
        Gap::Space
    } else {
        Gap::None
    }
}

fn tag_name(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':' || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Finds the `>` that ends a tag starting at `s`, honouring quoted attribute values.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, b) in s.bytes().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => return Some(i),
            None if b == b'<' && i > 0 => return None,
            None => {}
        }
    }
    None
}

/// Renders HTML as plain text: character references decoded, tags removed, block elements
/// turned into line breaks, runs of whitespace collapsed, the result trimmed.
pub fn to_text(html: &str) -> String {
    let mut t = TextOut {
        out: String::with_capacity(html.len() / 2),
        gap: Gap::None,
    };
    let mut flags = DecodeFlags::default();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        t.push_text(&entities::decode(&rest[..lt], &mut flags));
        let tail = &rest[lt..];
        let after = &tail[1..];
        if let Some(c) = after.strip_prefix("!--") {
            rest = c.find("-->").map_or("", |e| &c[e + 3..]);
            continue;
        }
        if let Some(c) = after.strip_prefix("![CDATA[") {
            let end = c.find("]]>").unwrap_or(c.len());
            t.push_text(&c[..end]);
            rest = c.get(end + 3..).unwrap_or("");
            continue;
        }
        let closing = after.starts_with('/');
        let name = tag_name(if closing { &after[1..] } else { after });
        let markup = !name.is_empty() && name.starts_with(|c: char| c.is_ascii_alphabetic())
            || after.starts_with('!')
            || after.starts_with('?');
        if !markup {
            t.push_text("<");
            rest = after;
            continue;
        }
        let Some(end) = tag_end(tail) else {
            // An unclosed tag: drop up to the next '<' (or the end).
            rest = after.find('<').map_or("", |i| &after[i..]);
            continue;
        };
        rest = &tail[end + 1..];
        if name.eq_ignore_ascii_case("br") {
            t.gap = match t.gap {
                Gap::Line | Gap::Para => Gap::Para,
                _ => Gap::Line,
            };
            continue;
        }
        if !closing
            && ["script", "style", "head", "template", "title"]
                .iter()
                .any(|s| s.eq_ignore_ascii_case(name))
            && !tail[..end].ends_with('/')
        {
            // Skip raw-text element content up to its end tag.
            let lower_close = format!("</{}", name.to_ascii_lowercase());
            // Without an end tag nothing is skipped: the tag alone is dropped.
            let mut skip_to = 0;
            let mut search = 0;
            while let Some(i) = rest.get(search..).and_then(|r| r.find("</")) {
                let at = search + i;
                let candidate = rest.get(at..at + lower_close.len()).unwrap_or("");
                if candidate.eq_ignore_ascii_case(&lower_close) {
                    skip_to = at;
                    break;
                }
                search = at + 2;
            }
            rest = &rest[skip_to..];
            continue;
        }
        let gap = block_gap(name);
        if gap != Gap::None {
            t.gap = t.gap.max(gap);
        }
    }
    t.push_text(&entities::decode(rest, &mut flags));
    t.out
}

/// Collapses whitespace in plain text (no HTML interpretation) and trims it.
pub(crate) fn collapse(text: &str) -> String {
    let mut t = TextOut {
        out: String::with_capacity(text.len()),
        gap: Gap::None,
    };
    t.push_text(text);
    t.out
}

/// Escapes text for inclusion in HTML.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// Whether `href` is relative (has no scheme).
pub(crate) fn is_relative(href: &str) -> bool {
    let Some(colon) = href.find(':') else {
        return true;
    };
    let scheme = &href[..colon];
    !(scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
}

/// Resolves `href` against `base` when it is relative; otherwise returns it unchanged.
pub(crate) fn resolve(href: &str, base: Option<&Url>) -> String {
    let href = href.trim();
    match base {
        Some(b) if is_relative(href) => b.join(href).map_or_else(|_| href.to_owned(), String::from),
        _ => href.to_owned(),
    }
}

const URI_ATTRS: &[&str] = &[
    "href",
    "src",
    "poster",
    "cite",
    "background",
    "longdesc",
    "action",
];

/// Rewrites relative `href`/`src`/… attribute values in HTML against `base`.
pub(crate) fn resolve_in_html<'a>(html: &'a str, base: Option<&Url>) -> Cow<'a, str> {
    let Some(base) = base else {
        return Cow::Borrowed(html);
    };
    if !html.contains('=') {
        return Cow::Borrowed(html);
    }
    let mut out = String::new();
    let mut copied = 0;
    let mut pos = 0;
    while let Some(lt) = html.get(pos..).and_then(|s| s.find('<')) {
        let start = pos + lt;
        let tail = &html[start..];
        let Some(end) = tag_end(tail) else {
            pos = start + 1;
            continue;
        };
        let tag = &tail[..end];
        pos = start + end + 1;
        if !tag[1..].starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        // Walk the attributes, remembering the byte range of each value.
        let name_len = tag_name(&tag[1..]).len();
        let mut i = 1 + name_len;
        let b = tag.as_bytes();
        while i < b.len() {
            while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
                i += 1;
            }
            let ns = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'/' {
                i += 1;
            }
            let aname = tag.get(ns..i).unwrap_or("");
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if b.get(i) != Some(&b'=') {
                if i == ns {
                    i += 1;
                }
                continue;
            }
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let (vs, ve) = match b.get(i) {
                Some(&q @ (b'"' | b'\'')) => {
                    let vs = i + 1;
                    let ve = tag
                        .get(vs..)
                        .and_then(|s| s.find(q as char))
                        .map_or(b.len(), |e| vs + e);
                    i = ve + 1;
                    (vs, ve)
                }
                _ => {
                    let vs = i;
                    while i < b.len() && !b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    (vs, i)
                }
            };
            if !URI_ATTRS.iter().any(|a| a.eq_ignore_ascii_case(aname)) {
                continue;
            }
            let Some(raw) = tag.get(vs..ve) else { continue };
            let mut f = DecodeFlags::default();
            let value = entities::decode(raw.trim(), &mut f);
            if value.is_empty() || !is_relative(&value) {
                continue;
            }
            let Ok(abs) = base.join(&value) else { continue };
            let abs = abs.as_str().replace('&', "&amp;").replace('"', "%22");
            out.push_str(&html[copied..start + vs]);
            out.push_str(&abs);
            copied = start + ve;
        }
    }
    if copied == 0 && out.is_empty() {
        return Cow::Borrowed(html);
    }
    out.push_str(&html[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_text_table() {
        let cases = [
            (
                "<p>Hello&nbsp;<b>world</b></p><p>Two</p>",
                "Hello world\n\nTwo",
            ),
            ("a<br>b<br/><br>c", "a\nb\n\nc"),
            ("  lots   of \n\t space  ", "lots of space"),
            ("x <script>alert(1)</script>y", "x y"),
            ("1 < 2 &amp;&amp; 3 > 2", "1 < 2 && 3 > 2"),
            ("<ul><li>one</li><li>two</li></ul>", "one\ntwo"),
            ("unclosed <b bold", "unclosed"),
            ("<!-- c -->t&hellip;", "t…"),
            ("<div><p>nested</p></div>", "nested"),
        ];
        for (html, want) in cases {
            assert_eq!(to_text(html), want, "{html}");
        }
    }

    #[test]
    fn resolves_relative_uris() {
        let base = Url::parse("http://example.com/test/").unwrap();
        let got = resolve_in_html(
            r#"Example <a href="test.html">test</a> <img src='/i.png'> <a href="http://x/">x</a>"#,
            Some(&base),
        );
        assert_eq!(
            got,
            r#"Example <a href="http://example.com/test/test.html">test</a> <img src='http://example.com/i.png'> <a href="http://x/">x</a>"#
        );
    }
}
