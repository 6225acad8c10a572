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
    fn flush_gap(&mut self) {
        if !self.out.is_empty() {
            match self.gap {
                Gap::None => {}
                Gap::Space => self.out.push(' '),
                Gap::Line => self.out.push('\n'),
                Gap::Para => self.out.push_str("\n\n"),
            }
        }
        self.gap = Gap::None;
    }

    /// Appends a run of visible characters.
    fn push_run(&mut self, run: &str) {
        if !run.is_empty() {
            self.flush_gap();
            self.out.push_str(run);
        }
    }

    /// Appends text, turning every run of ASCII whitespace into a gap. Other characters stay
    /// what they are: a no-break space, en/em/thin spaces and a soft hyphen are content (an
    /// author's `&nbsp;` keeps two words together), as feedparser keeps them.
    fn push_text(&mut self, s: &str) {
        let b = s.as_bytes();
        let mut run = 0;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\x0b') {
                // A single space between visible ASCII characters stays inside the run.
                if c == b' ' && i > run && b.get(i + 1).is_some_and(|n| (0x21..0x7f).contains(n)) {
                    i += 2;
                    continue;
                }
                // `run..i` ends before an ASCII byte, so both are char boundaries.
                self.push_run(s.get(run..i).unwrap_or(""));
                self.gap = self.gap.max(Gap::Space);
                run = i + 1;
            }
            i += 1;
        }
        self.push_run(s.get(run..).unwrap_or(""));
    }
}

/// Trims Unicode whitespace (a no-break space, say) off both ends, as Python's `strip` does in
/// feedparser; inside the text it stays.
fn trim_unicode_ends(mut s: String) -> String {
    let last_wide = s.as_bytes().last().is_some_and(|b| *b >= 0x80);
    if last_wide {
        let keep = s.trim_end_matches(char::is_whitespace).len();
        s.truncate(keep);
    }
    if s.as_bytes().first().is_some_and(|b| *b >= 0x80) {
        let skip = s.len() - s.trim_start_matches(char::is_whitespace).len();
        s.drain(..skip);
    }
    s
}

/// `name` in ASCII lower case when it is short enough to be an HTML element name we know.
fn lower_name(name: &str, buf: &mut [u8; 12]) -> Option<usize> {
    let b = name.as_bytes();
    if b.len() > buf.len() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(b) {
        *d = s.to_ascii_lowercase();
    }
    Some(b.len())
}

fn block_gap(name: &[u8]) -> Gap {
    match name {
        b"p" | b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" | b"blockquote" | b"pre" | b"ul"
        | b"ol" | b"dl" | b"table" | b"hr" | b"figure" | b"section" | b"article" | b"header"
        | b"footer" | b"aside" | b"nav" | b"form" | b"fieldset" | b"address" | b"main" => Gap::Para,
        b"div" | b"li" | b"tr" | b"dt" | b"dd" | b"figcaption" | b"caption" | b"tbody"
        | b"thead" => Gap::Line,
        b"td" | b"th" | b"img" => Gap::Space,
        _ => Gap::None,
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

/// Elements whose content is not text.
const RAW_TEXT: [&str; 5] = ["script", "style", "head", "template", "title"];

/// Renders HTML as plain text: character references decoded, tags removed, block elements
/// turned into line breaks, runs of whitespace collapsed, the result trimmed.
pub fn to_text(html: &str) -> String {
    let mut t = TextOut {
        out: String::with_capacity(html.len() / 2),
        gap: Gap::None,
    };
    let mut flags = DecodeFlags::default();
    let mut rest = html;
    let mut unclosed = [false; RAW_TEXT.len()];
    while let Some(lt) = memchr::memchr(b'<', rest.as_bytes()) {
        entities::decode_into(&rest[..lt], &mut flags, |p| t.push_text(p));
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
            rest = memchr::memchr(b'<', after.as_bytes()).map_or("", |i| &after[i..]);
            continue;
        };
        rest = &tail[end + 1..];
        let mut buf = [0u8; 12];
        let lname: &[u8] = match lower_name(name, &mut buf) {
            Some(n) => &buf[..n],
            None => b"",
        };
        if lname == b"br" {
            t.gap = match t.gap {
                Gap::Line | Gap::Para => Gap::Para,
                _ => Gap::Line,
            };
            continue;
        }
        let raw_text = RAW_TEXT.iter().position(|s| s.as_bytes() == lname);
        if let Some(k) =
            raw_text.filter(|&k| !closing && !unclosed[k] && !tail[..end].ends_with('/'))
        {
            // Skip raw-text element content up to its end tag.
            let lower_close = format!("</{}", name.to_ascii_lowercase());
            let mut found = None;
            let mut search = 0;
            while let Some(i) = rest.get(search..).and_then(|r| r.find("</")) {
                let at = search + i;
                let candidate = rest.get(at..at + lower_close.len()).unwrap_or("");
                if candidate.eq_ignore_ascii_case(&lower_close) {
                    found = Some(at);
                    break;
                }
                search = at + 2;
            }
            match found {
                Some(at) => rest = &rest[at..],
                // Without an end tag only the tag is dropped, and no later search can succeed.
                None => unclosed[k] = true,
            }
            continue;
        }
        let gap = block_gap(lname);
        if gap != Gap::None {
            t.gap = t.gap.max(gap);
        }
    }
    entities::decode_into(rest, &mut flags, |p| t.push_text(p));
    trim_unicode_ends(t.out)
}

/// Collapses whitespace in plain text (no HTML interpretation) and trims it.
pub(crate) fn collapse(text: &str) -> String {
    let mut t = TextOut {
        out: String::with_capacity(text.len()),
        gap: Gap::None,
    };
    t.push_text(text);
    trim_unicode_ends(t.out)
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

/// [`resolve`], the result kept as an IRI when `iri` (the base was one) or when `href` itself
/// is not ASCII: the url crate percent-encodes non-ASCII characters and writes hosts in
/// punycode, which [`to_iri`] undoes.
pub(crate) fn resolve_iri(href: &str, base: Option<&Url>, iri: bool) -> String {
    let s = resolve(href, base);
    if iri || !href.is_ascii() {
        to_iri(&s)
    } else {
        s
    }
}

/// Turns a URI back into the IRI it was written as: percent-escapes that spell non-ASCII UTF-8
/// are decoded (ASCII escapes such as `%20` stay) and `xn--` host labels are decoded from
/// punycode.
pub(crate) fn to_iri(uri: &str) -> String {
    let (host_start, host_end) = match uri.find("://") {
        Some(i) => {
            let start = i + 3;
            let end = uri[start..]
                .find(['/', '?', '#'])
                .map_or(uri.len(), |e| start + e);
            (start, end)
        }
        None => (0, 0),
    };
    let mut out = String::with_capacity(uri.len());
    out.push_str(&uri[..host_start]);
    let authority = &uri[host_start..host_end];
    if authority.contains("xn--") {
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(at) => authority.split_at(at + 1),
            None => ("", authority),
        };
        out.push_str(userinfo);
        let (host, port) = match hostport.rfind(':').filter(|_| !hostport.starts_with('[')) {
            Some(c) => hostport.split_at(c),
            None => (hostport, ""),
        };
        for (k, label) in host.split('.').enumerate() {
            if k > 0 {
                out.push('.');
            }
            match label
                .get(..4)
                .filter(|p| p.eq_ignore_ascii_case("xn--"))
                .and_then(|_| punycode_decode(&label[4..]))
            {
                Some(u) => out.push_str(&u),
                None => out.push_str(label),
            }
        }
        out.push_str(port);
    } else {
        out.push_str(authority);
    }
    let rest = &uri[host_end..];
    let b = rest.as_bytes();
    let hex = |c: u8| char::from(c).to_digit(16);
    let mut i = 0;
    let mut copied = 0;
    while let Some(off) = memchr::memchr(b'%', b.get(i..).unwrap_or(&[])) {
        let start = i + off;
        // A run of escapes of bytes >= 0x80.
        let mut bytes = Vec::new();
        let mut j = start;
        while b.get(j) == Some(&b'%') {
            let (Some(h), Some(l)) = (
                b.get(j + 1).and_then(|&c| hex(c)),
                b.get(j + 2).and_then(|&c| hex(c)),
            ) else {
                break;
            };
            let v = h * 16 + l;
            if v < 0x80 {
                break;
            }
            bytes.push(u8::try_from(v).unwrap_or(0));
            j += 3;
        }
        if let Ok(text) = std::str::from_utf8(&bytes) {
            if !text.is_empty() {
                out.push_str(&rest[copied..start]);
                out.push_str(text);
                copied = j;
            }
        }
        i = j.max(start + 1);
    }
    out.push_str(&rest[copied..]);
    out
}

/// Decodes the part of a punycode label after `xn--` (RFC 3492).
fn punycode_decode(input: &str) -> Option<String> {
    const BASE: u32 = 36;
    const TMIN: u32 = 1;
    const TMAX: u32 = 26;
    fn adapt(delta: u32, points: u32, first: bool) -> u32 {
        let mut delta = if first { delta / 700 } else { delta / 2 };
        delta += delta / points;
        let mut k = 0;
        while delta > ((BASE - TMIN) * TMAX) / 2 {
            delta /= BASE - TMIN;
            k += BASE;
        }
        k + (BASE - TMIN + 1) * delta / (delta + 38)
    }
    if !input.is_ascii() || input.len() > 256 {
        return None;
    }
    let (basic, ext) = match input.rfind('-') {
        Some(d) => (&input[..d], &input[d + 1..]),
        None => ("", input),
    };
    let mut out: Vec<char> = basic.chars().collect();
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut digits = ext.bytes().peekable();
    while digits.peek().is_some() {
        let old_i = i;
        let mut w = 1u32;
        let mut k = BASE;
        loop {
            let digit = match digits.next()? {
                c @ b'a'..=b'z' => u32::from(c - b'a'),
                c @ b'A'..=b'Z' => u32::from(c - b'A'),
                c @ b'0'..=b'9' => u32::from(c - b'0') + 26,
                _ => return None,
            };
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = if k <= bias {
                TMIN
            } else if k >= bias + TMAX {
                TMAX
            } else {
                k - bias
            };
            if digit < t {
                break;
            }
            w = w.checked_mul(BASE - t)?;
            k += BASE;
        }
        let len = u32::try_from(out.len()).ok()? + 1;
        bias = adapt(i - old_i, len, old_i == 0);
        n = n.checked_add(i / len)?;
        i %= len;
        out.insert(usize::try_from(i).ok()?, char::from_u32(n)?);
        i += 1;
    }
    // A label that decodes to ASCII only was not an IDN label at all.
    let s: String = out.into_iter().collect();
    (!s.is_ascii()).then_some(s)
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
    resolve_in_html_iri(html, base, false)
}

/// [`resolve_in_html`], resolved URIs kept as IRIs as in [`resolve_iri`].
pub(crate) fn resolve_in_html_iri<'a>(
    html: &'a str,
    base: Option<&Url>,
    iri: bool,
) -> Cow<'a, str> {
    let Some(base) = base else {
        return Cow::Borrowed(html);
    };
    if !html.contains('=') {
        return Cow::Borrowed(html);
    }
    let mut out = String::new();
    let mut copied = 0;
    let mut pos = 0;
    while let Some(lt) = html
        .get(pos..)
        .and_then(|s| memchr::memchr(b'<', s.as_bytes()))
    {
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
            let abs = if iri || !value.is_ascii() {
                to_iri(abs.as_str())
            } else {
                abs.as_str().to_owned()
            };
            let abs = abs.replace('&', "&amp;").replace('"', "%22");
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
                "Hello\u{a0}world\n\nTwo",
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
    fn uris_back_to_iris() {
        let cases = [
            (
                "http://xn--bcher-kva.example/%C3%B6/a%20b",
                "http://bücher.example/ö/a%20b",
            ),
            (
                "http://u@xn--mnchen-3ya.de:8080/?q=%E2%82%AC#%C3%A9",
                "http://u@münchen.de:8080/?q=€#é",
            ),
            (
                "http://example.org/%FF%41/%C3",
                "http://example.org/%FF%41/%C3",
            ),
            ("http://xn--zz-invalid-/x", "http://xn--zz-invalid-/x"),
            ("urn:x:%C3%A9", "urn:x:é"),
        ];
        for (uri, iri) in cases {
            assert_eq!(to_iri(uri), iri, "{uri}");
        }
        assert_eq!(punycode_decode("bcher-kva").as_deref(), Some("bücher"));
        assert_eq!(punycode_decode("-> $1.00 <-").as_deref(), None);
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
