//! OPML 1.0 and 2.0 subscription lists, read and written, with no IO.
//!
//! [`read`] takes the bytes of a file and gives every `outline` element that carries an
//! `xmlUrl`, at any depth (an outline without one is a folder: its `text` is kept as the
//! feed's folder path). Unlike the feed parser it is strict: a document that is not
//! well-formed is an error that names the line and column, because an import must not guess
//! which subscriptions a broken file meant. The bytes are bounded ([`MAX_OPML`]), so are the
//! outlines ([`MAX_OUTLINES`]) and the nesting ([`MAX_DEPTH`]); a DTD is skipped and never
//! read, so entities it declares are not expanded (a reference to one stays as written).
//!
//! [`write`] makes an OPML 2.0 document of a list of feeds, every attribute escaped.

use crate::entities::{self, DecodeFlags};
use quick_xml::events::{BytesStart, Event};

/// The largest OPML file read.
pub const MAX_OPML: usize = 4 << 20;
/// The most feeds one file may list.
pub const MAX_OUTLINES: usize = 10_000;
/// The deepest nesting of elements read.
pub const MAX_DEPTH: usize = 64;
/// The longest attribute value kept, in bytes (a longer `xmlUrl` is refused with the file).
const MAX_VALUE: usize = 8192;

/// One subscription of a list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subscription {
    /// The outline's `text` (else its `title`), as written, entities decoded.
    pub title: Option<String>,
    /// The feed's address (`xmlUrl`), trimmed.
    pub xml_url: String,
    /// The site's address (`htmlUrl`), when given.
    pub html_url: Option<String>,
    /// The folders it sits in, outermost first.
    pub folders: Vec<String>,
}

/// A subscription list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opml {
    /// `head/title`.
    pub title: Option<String>,
    /// Every outline with an `xmlUrl`, in document order.
    pub subscriptions: Vec<Subscription>,
}

/// Why a file is not a subscription list.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpmlError {
    /// Larger than [`MAX_OPML`].
    #[error("larger than {max} bytes")]
    TooLarge {
        /// The limit.
        max: usize,
    },
    /// Nothing but whitespace.
    #[error("the file is empty")]
    Empty,
    /// Not well-formed XML, or bounds passed.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// Well-formed, but its root is not `opml`.
    #[error("the root element is <{0}>, not <opml>")]
    NotOpml(String),
}

/// 1-based line and column of a byte offset of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn syntax(text: &str, offset: usize, message: impl Into<String>) -> OpmlError {
    let (line, column) = position(text, offset);
    OpmlError::Syntax {
        line,
        column,
        message: message.into(),
    }
}

fn local(name: &[u8]) -> &[u8] {
    match name.iter().rposition(|&b| b == b':') {
        Some(i) => &name[i + 1..],
        None => name,
    }
}

/// The outline's attributes that matter, decoded: (text or title, xmlUrl, htmlUrl).
type OutlineAttrs = (Option<String>, Option<String>, Option<String>);

fn outline_attrs(e: &BytesStart<'_>) -> Result<OutlineAttrs, String> {
    let (mut text, mut title, mut xml, mut html) = (None, None, None, None);
    for a in e.attributes() {
        let a = a.map_err(|e| format!("a malformed attribute: {e}"))?;
        let raw = std::str::from_utf8(&a.value).map_err(|_| "an attribute is not UTF-8")?;
        if raw.len() > MAX_VALUE {
            return Err(format!("an attribute longer than {MAX_VALUE} bytes"));
        }
        if raw.contains('<') {
            return Err("'<' inside an attribute value".to_owned());
        }
        let value = || {
            // Character references and XML's (and HTML's) named ones are decoded; a reference
            // to an entity a DTD declares is not: it stays as written.
            let mut flags = DecodeFlags::default();
            entities::decode(raw, &mut flags).trim().to_owned()
        };
        let key = a.key.local_name();
        let key = key.as_ref();
        if key.eq_ignore_ascii_case(b"text") {
            text = Some(value());
        } else if key.eq_ignore_ascii_case(b"title") {
            title = Some(value());
        } else if key.eq_ignore_ascii_case(b"xmlUrl") {
            xml = Some(value());
        } else if key.eq_ignore_ascii_case(b"htmlUrl") {
            html = Some(value());
        }
    }
    let name = text
        .filter(|t| !t.is_empty())
        .or(title)
        .filter(|t| !t.is_empty());
    Ok((
        name,
        xml.filter(|u| !u.is_empty()),
        html.filter(|u| !u.is_empty()),
    ))
}

/// Reads a subscription list. See the module documentation.
pub fn read(bytes: &[u8]) -> Result<Opml, OpmlError> {
    if bytes.len() > MAX_OPML {
        return Err(OpmlError::TooLarge { max: MAX_OPML });
    }
    let decoded = crate::decode::decode(bytes, None);
    let text: &str = &decoded.text;
    let text = text.trim_start_matches('\u{feff}');
    if text.trim().is_empty() {
        return Err(OpmlError::Empty);
    }
    let mut reader = quick_xml::Reader::from_str(text);
    {
        let c = reader.config_mut();
        c.check_end_names = true;
        c.check_comments = true;
        c.expand_empty_elements = false;
        c.trim_text(false);
    }
    // One entry per open element: its local name and, for an outline, whether it is a folder
    // (and so pushed a name onto `folders`).
    let mut open: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut folders: Vec<String> = Vec::new();
    let mut out = Opml::default();
    let mut seen_root = false;
    let mut in_head_title = false;
    loop {
        let at = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let ev = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => {
                let pos = usize::try_from(reader.error_position()).unwrap_or(at);
                return Err(syntax(text, pos, e.to_string()));
            }
        };
        match ev {
            Event::Start(e) | Event::Empty(e) if open.is_empty() && seen_root => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                return Err(syntax(
                    text,
                    at,
                    format!("a second root element <{name}> after </opml>"),
                ));
            }
            ev @ (Event::Start(_) | Event::Empty(_)) => {
                let empty = matches!(ev, Event::Empty(_));
                let (Event::Start(e) | Event::Empty(e)) = ev else {
                    continue;
                };
                let name = local(e.name().as_ref()).to_vec();
                if open.is_empty() {
                    if !name.eq_ignore_ascii_case(b"opml") {
                        return Err(OpmlError::NotOpml(
                            String::from_utf8_lossy(e.name().as_ref())
                                .chars()
                                .take(64)
                                .collect(),
                        ));
                    }
                    seen_root = true;
                }
                if open.len() >= MAX_DEPTH {
                    return Err(syntax(
                        text,
                        at,
                        format!("elements nested deeper than {MAX_DEPTH}"),
                    ));
                }
                let mut folder = false;
                if name.eq_ignore_ascii_case(b"outline") {
                    let (title, xml, html) = outline_attrs(&e).map_err(|m| syntax(text, at, m))?;
                    match xml {
                        Some(xml_url) => {
                            if out.subscriptions.len() >= MAX_OUTLINES {
                                return Err(syntax(
                                    text,
                                    at,
                                    format!("more than {MAX_OUTLINES} feeds in one file"),
                                ));
                            }
                            out.subscriptions.push(Subscription {
                                title,
                                xml_url,
                                html_url: html,
                                folders: folders.clone(),
                            });
                        }
                        None if !empty => {
                            folders.push(title.unwrap_or_default());
                            folder = true;
                        }
                        None => {}
                    }
                }
                in_head_title = !empty
                    && name.eq_ignore_ascii_case(b"title")
                    && open.len() == 2
                    && open
                        .get(1)
                        .is_some_and(|(n, _)| n.eq_ignore_ascii_case(b"head"));
                if !empty {
                    open.push((name, folder));
                }
            }
            Event::End(_) => {
                in_head_title = false;
                if let Some((_, true)) = open.pop() {
                    folders.pop();
                }
            }
            Event::Text(t) if in_head_title => {
                let raw = std::str::from_utf8(&t).unwrap_or("");
                let mut flags = DecodeFlags::default();
                let s = entities::decode(raw, &mut flags);
                let title = out.title.get_or_insert_with(String::new);
                if title.len() + s.len() <= MAX_VALUE {
                    title.push_str(&s);
                }
            }
            Event::CData(t) if in_head_title => {
                let s = String::from_utf8_lossy(&t);
                let title = out.title.get_or_insert_with(String::new);
                if title.len() + s.len() <= MAX_VALUE {
                    title.push_str(&s);
                }
            }
            Event::Text(t) if open.is_empty() && !t.iter().all(u8::is_ascii_whitespace) => {
                return Err(syntax(text, at, "text outside the root element"));
            }
            Event::Eof => break,
            // The declaration, comments, processing instructions and the DTD (never read:
            // nothing it declares is expanded), and text between elements.
            _ => {}
        }
    }
    if let Some((name, _)) = open.last() {
        return Err(syntax(
            text,
            text.len(),
            format!(
                "the file ends inside <{}>",
                String::from_utf8_lossy(name)
                    .chars()
                    .take(64)
                    .collect::<String>()
            ),
        ));
    }
    if !seen_root {
        return Err(syntax(text, text.len(), "no root element"));
    }
    if let Some(t) = &mut out.title {
        *t = t.trim().to_owned();
    }
    Ok(out)
}

/// Escapes text for an XML attribute in double quotes: the five predefined characters, the
/// whitespace an attribute would normalise away as references, and the characters XML 1.0
/// cannot carry dropped.
pub fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => {}
            c => out.push(c),
        }
    }
    out
}

/// An OPML 2.0 document titled `title` listing `subs` (their folders are not written: the
/// list is flat).
pub fn write(title: &str, subs: &[Subscription]) -> String {
    let mut out =
        String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">\n");
    let t = escape_attr(title);
    out.push_str(&format!(
        "  <head>\n    <title>{t}</title>\n  </head>\n  <body>\n"
    ));
    for s in subs {
        let name = escape_attr(s.title.as_deref().unwrap_or(&s.xml_url));
        out.push_str(&format!(
            "    <outline type=\"rss\" text=\"{name}\" title=\"{name}\" xmlUrl=\"{}\"",
            escape_attr(&s.xml_url)
        ));
        if let Some(h) = &s.html_url {
            out.push_str(&format!(" htmlUrl=\"{}\"", escape_attr(h)));
        }
        out.push_str("/>\n");
    }
    out.push_str("  </body>\n</opml>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(o: &Opml) -> Vec<&str> {
        o.subscriptions.iter().map(|s| s.xml_url.as_str()).collect()
    }

    #[test]
    fn opml_1_0_flat() {
        let o = read(
            br#"<?xml version="1.0" encoding="ISO-8859-1"?>
<opml version="1.0"><head><title>mySubscriptions</title></head>
<body>
<outline text="CNET News.com" description="Tech news" htmlUrl="http://news.com.com/" language="unknown" title="CNET News.com" type="rss" version="RSS2" xmlUrl="http://news.com.com/2547-1_3-0-5.xml"/>
<outline text="washingtonpost.com" type="rss" xmlUrl="http://www.washingtonpost.com/wp-srv/topnews/rssheadlines.xml"/>
</body></opml>"#,
        )
        .unwrap();
        assert_eq!(o.title.as_deref(), Some("mySubscriptions"));
        assert_eq!(
            urls(&o),
            [
                "http://news.com.com/2547-1_3-0-5.xml",
                "http://www.washingtonpost.com/wp-srv/topnews/rssheadlines.xml"
            ]
        );
        assert_eq!(o.subscriptions[0].title.as_deref(), Some("CNET News.com"));
        assert_eq!(
            o.subscriptions[0].html_url.as_deref(),
            Some("http://news.com.com/")
        );
        assert!(o.subscriptions[0].folders.is_empty());
    }

    #[test]
    fn opml_2_0_nested_folders() {
        let o = read(
            br#"<opml version="2.0"><head><title>t</title></head><body>
  <outline text="Tech">
    <outline text="Linux">
      <outline type="rss" text="LWN" xmlUrl="https://lwn.net/headlines/rss"/>
    </outline>
    <outline type="rss" title="Only a title" xmlUrl=" https://example.org/a.xml "/>
  </outline>
  <outline text="empty folder"/>
  <outline text="Top" xmlurl="https://example.org/top.xml"><outline text="child" xmlUrl="https://example.org/child.xml"/></outline>
</body></opml>"#,
        )
        .unwrap();
        assert_eq!(
            urls(&o),
            [
                "https://lwn.net/headlines/rss",
                "https://example.org/a.xml",
                "https://example.org/top.xml",
                "https://example.org/child.xml"
            ]
        );
        assert_eq!(o.subscriptions[0].folders, ["Tech", "Linux"]);
        assert_eq!(o.subscriptions[1].folders, ["Tech"]);
        assert_eq!(o.subscriptions[1].title.as_deref(), Some("Only a title"));
        assert!(o.subscriptions[2].folders.is_empty());
        // An outline with a feed is not a folder; its children are read all the same.
        assert!(o.subscriptions[3].folders.is_empty());
    }

    #[test]
    fn malformed_names_the_line_and_column() {
        let e = read(
            b"<opml version=\"2.0\">\n<body>\n  <outline text=\"a\" xmlUrl=\"u\">\n</body></opml>",
        )
        .unwrap_err();
        assert!(matches!(e, OpmlError::Syntax { line: 4, .. }), "{e}");
        assert!(e.to_string().starts_with("line 4, column "), "{e}");
        let e = read(b"<opml><body><outline text=\"a\" xmlUrl=\"https://e.org/\"").unwrap_err();
        assert!(matches!(e, OpmlError::Syntax { line: 1, .. }), "{e:?}");
        let e = read(b"<opml><body>").unwrap_err();
        assert!(e.to_string().contains("ends inside <body>"), "{e}");
        let e = read(b"<opml/><opml/>").unwrap_err();
        assert!(e.to_string().contains("second root"), "{e}");
        assert_eq!(
            read(b"<rss version=\"2.0\"/>").unwrap_err(),
            OpmlError::NotOpml("rss".into())
        );
        assert_eq!(read(b"  \n").unwrap_err(), OpmlError::Empty);
        let e = read(b"<opml><body><outline text=\"a\" text=\"b\" xmlUrl=\"u\"/></body></opml>")
            .unwrap_err();
        assert!(matches!(e, OpmlError::Syntax { .. }), "{e:?}");
    }

    #[test]
    fn entities_a_dtd_declares_are_not_expanded() {
        let o = read(
            br#"<?xml version="1.0"?>
<!DOCTYPE opml [
  <!ENTITY xxe SYSTEM "file:///etc/passwd">
  <!ENTITY lol "lollollollollollollollollollol">
]>
<opml version="2.0"><head><title>&lol;</title></head><body>
<outline text="&xxe;" xmlUrl="https://example.org/?a=1&amp;b=2&#38;c=&lol;"/>
</body></opml>"#,
        )
        .unwrap();
        assert_eq!(o.title.as_deref(), Some("&lol;"));
        assert_eq!(o.subscriptions[0].title.as_deref(), Some("&xxe;"));
        assert_eq!(
            o.subscriptions[0].xml_url,
            "https://example.org/?a=1&b=2&c=&lol;"
        );
    }

    #[test]
    fn huge_files_and_deep_nesting_are_refused() {
        let big = vec![b' '; MAX_OPML + 1];
        assert_eq!(
            read(&big).unwrap_err(),
            OpmlError::TooLarge { max: MAX_OPML }
        );
        let mut deep = String::from("<opml><body>");
        for _ in 0..200 {
            deep.push_str("<outline text=\"f\">");
        }
        let e = read(deep.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("deeper than 64"), "{e}");
        let mut many = String::from("<opml><body>");
        for i in 0..=MAX_OUTLINES {
            many.push_str(&format!("<outline xmlUrl=\"https://e.org/{i}\"/>"));
        }
        many.push_str("</body></opml>");
        let e = read(many.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("more than 10000 feeds"), "{e}");
    }

    #[test]
    fn written_lists_read_back_with_every_character() {
        let subs = vec![
            Subscription {
                title: Some("A & B <\"quoted\"> 'it' \t tab\nnewline ж".into()),
                xml_url: "https://example.org/feed?a=1&b=<2>".into(),
                html_url: Some("https://example.org/".into()),
                folders: Vec::new(),
            },
            Subscription {
                title: None,
                xml_url: "http://127.0.0.1:8080/x.xml".into(),
                html_url: None,
                folders: Vec::new(),
            },
        ];
        let text = write("Maven's \"feeds\"", &subs);
        assert!(!text.contains('\u{1}'));
        let back = read(text.as_bytes()).unwrap();
        assert_eq!(back.title.as_deref(), Some("Maven's \"feeds\""));
        assert_eq!(back.subscriptions.len(), 2);
        assert_eq!(back.subscriptions[0].xml_url, subs[0].xml_url);
        // Attribute values are trimmed on reading; the inner whitespace survives.
        assert_eq!(
            back.subscriptions[0].title.as_deref(),
            Some("A & B <\"quoted\"> 'it' \t tab\nnewline ж")
        );
        assert_eq!(
            back.subscriptions[1].title.as_deref(),
            Some("http://127.0.0.1:8080/x.xml")
        );
        assert_eq!(escape_attr("a\u{1}b\u{fffe}"), "ab");
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_are_a_list_or_an_error_never_a_panic(s in "(<opml>|<body>|<outline |xmlUrl=\"|text=\"|\"|/>|</outline>|</body>|</opml>|&amp;|&x;|<!DOCTYPE opml [<!ENTITY x \"y\">]>|[a-z: ]){0,40}") {
            if let Ok(list) = read(s.as_bytes()) {
                let again = read(write("t", &list.subscriptions).as_bytes());
                proptest::prop_assert!(again.is_ok());
                proptest::prop_assert_eq!(again.unwrap().subscriptions.len(), list.subscriptions.len());
            }
        }
    }
}
