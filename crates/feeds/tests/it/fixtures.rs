//! Our own fixtures, one per case the parser must survive, snapshotted as F-9 JSON, plus
//! specific assertions on the facts each fixture exists for.

use feeds::{Feed, Format, Hints, NotAFeed};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// (file, url hint, content-type hint)
const CASES: &[(&str, Option<&str>, Option<&str>)] = &[
    ("rss20_full.xml", Some("https://example.com/feed.xml"), None),
    ("rss_version_missing.xml", None, None),
    ("rss201.xml", None, None),
    ("rss21.xml", None, None),
    ("rss090.rdf", None, None),
    ("rss091.xml", None, None),
    ("rss092.xml", None, None),
    ("rss10.rdf", None, None),
    ("atom10_full.xml", None, None),
    ("atom03.xml", None, None),
    ("jsonfeed10.json", None, Some("application/feed+json")),
    ("jsonfeed11.json", None, None),
    ("ru_windows1251.xml", None, None),
    ("ru_koi8r.xml", None, None),
    (
        "http_charset_1251.xml",
        None,
        Some("application/rss+xml; charset=windows-1251"),
    ),
    ("utf16le_bom.xml", None, None),
    ("utf16be_bom.xml", None, None),
    ("utf16le_nobom.xml", None, None),
    ("utf8_wrong_declaration.xml", None, None),
    ("windows1252_fallback.xml", None, None),
    ("control_chars.xml", None, None),
    ("truncated.xml", None, None),
    ("entities.xml", None, None),
    ("xml_base.xml", None, None),
    (
        "relative_links_hint.xml",
        Some("https://example.com/blog/feed/rss.xml"),
        None,
    ),
    ("broken_dates.xml", None, None),
    ("unclosed_html.xml", None, None),
    ("mismatched_tags.xml", None, None),
    ("cdata.xml", None, None),
];

fn load(name: &str, url: Option<&str>, content_type: Option<&str>) -> Result<Feed, NotAFeed> {
    let bytes = std::fs::read(format!("{DIR}/{name}")).unwrap();
    feeds::parse(
        &bytes,
        &Hints {
            url,
            content_type,
            content_location: None,
        },
    )
}

fn feed(name: &str) -> Feed {
    let (_, url, ct) = CASES.iter().find(|c| c.0 == name).unwrap();
    load(name, *url, *ct).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn snapshots() {
    for (name, url, ct) in CASES {
        let feed = load(name, *url, *ct).unwrap_or_else(|e| panic!("{name}: {e}"));
        let snap = name.replace('.', "_");
        insta::assert_json_snapshot!(snap, feed);
    }
}

#[test]
fn formats() {
    let cases = [
        ("rss20_full.xml", Format::Rss2),
        ("rss_version_missing.xml", Format::Rss2),
        ("rss201.xml", Format::Rss2),
        ("rss21.xml", Format::Rss2),
        ("rss090.rdf", Format::Rss09x),
        ("rss091.xml", Format::Rss09x),
        ("rss092.xml", Format::Rss09x),
        ("rss10.rdf", Format::Rss1),
        ("atom10_full.xml", Format::Atom1),
        ("atom03.xml", Format::Atom03),
        ("jsonfeed10.json", Format::Json1),
        ("jsonfeed11.json", Format::Json1),
    ];
    for (name, want) in cases {
        let f = feed(name);
        assert_eq!(f.format, want, "{name}");
        assert!(!f.items.is_empty(), "{name}: no items");
    }
}

#[test]
fn russian_encodings_come_out_right() {
    for name in ["ru_windows1251.xml", "ru_koi8r.xml"] {
        let f = feed(name);
        assert_eq!(f.title.as_deref(), Some("Новости науки"), "{name}");
        assert_eq!(
            f.subtitle.as_deref(),
            Some("Главные новости — каждый день"),
            "{name}"
        );
        assert_eq!(
            f.items[0].title.as_deref(),
            Some("Учёные обнаружили «новую» частицу"),
            "{name}"
        );
        assert_eq!(
            f.items[0].summary_text.as_deref(),
            Some("Подробности эксперимента в Дубне…"),
            "{name}"
        );
        assert_eq!(f.items[0].author.as_deref(), Some("Редакция"), "{name}");
        assert_eq!(
            f.items[1].title.as_deref(),
            Some("Ёжик в тумане: ещё одна статья"),
            "{name}"
        );
        assert!(!f.bozo, "{name}");
    }
    let f = feed("http_charset_1251.xml");
    assert_eq!(f.items[0].title.as_deref(), Some("Привет, мир"));
}

#[test]
fn other_encodings() {
    for name in ["utf16le_bom.xml", "utf16be_bom.xml", "utf16le_nobom.xml"] {
        let f = feed(name);
        assert_eq!(f.title.as_deref(), Some("UTF-16 feed — ünïcødé"), "{name}");
        assert_eq!(f.items[0].title.as_deref(), Some("Entry ☃"), "{name}");
    }
    let f = feed("utf8_wrong_declaration.xml");
    assert_eq!(f.items[0].title.as_deref(), Some("Ελληνικά και кириллица"));
    assert!(
        f.warnings.iter().any(|w| w.contains("valid UTF-8")),
        "{:?}",
        f.warnings
    );
    let f = feed("windows1252_fallback.xml");
    assert_eq!(f.title.as_deref(), Some("Café “quotes” – dash …"));
    let f = feed("control_chars.xml");
    assert_eq!(f.title.as_deref(), Some("Control characters stripped"));
    assert_eq!(f.items[0].title.as_deref(), Some("Bell and NUL are gone"));
    assert!(f.bozo);
}

#[test]
fn truncated_keeps_complete_items() {
    let f = feed("truncated.xml");
    assert!(f.bozo);
    let ids: Vec<_> = f.items.iter().map(|i| i.id.as_deref()).collect();
    assert_eq!(ids, [Some("item-1"), Some("item-2")]);
    assert!(
        f.warnings
            .iter()
            .any(|w| w.contains("truncated") && w.contains("1 incomplete")),
        "{:?}",
        f.warnings
    );
}

#[test]
fn entities_and_text() {
    let f = feed("entities.xml");
    // No-break spaces stay what they are (issue 18, plain text whitespace).
    assert_eq!(f.title.as_deref(), Some("Fish\u{a0}&\u{a0}Chips — AT&T…"));
    assert_eq!(
        f.items[0].title.as_deref(),
        Some("Café «quoted» “curly” ☃ ©2025")
    );
    assert_eq!(
        f.items[0].link.as_deref(),
        Some("http://example.com/?a=1&b=2")
    );
    assert_eq!(
        f.items[0].summary_text.as_deref(),
        Some("Escaped\u{a0}HTML\n\n& double")
    );
    assert_eq!(
        f.items[1].title.as_deref(),
        Some("Unknown &bogus; entity and a lone & ampersand & more")
    );
    assert!(f.bozo);
    let f = feed("cdata.xml");
    assert_eq!(f.title.as_deref(), Some("CDATA & stuff"));
    assert_eq!(f.items[0].title.as_deref(), Some("Mixed cdata text"));
    assert_eq!(f.items[0].id.as_deref(), Some("cdata-guid-1"));
    let f = feed("unclosed_html.xml");
    assert_eq!(f.items.len(), 2);
    assert_eq!(f.items[0].title.as_deref(), Some("Naked bold"));
    assert_eq!(
        f.items[0].summary_text.as_deref(),
        Some("Hello\nworld\n\npara end")
    );
    assert_eq!(f.items[1].title.as_deref(), Some("After the broken one"));
    let f = feed("mismatched_tags.xml");
    let ids: Vec<_> = f.items.iter().map(|i| i.id.as_deref()).collect();
    assert_eq!(ids, [Some("m-1"), Some("m-2"), Some("m-3")]);
    assert!(f.bozo);
}

#[test]
fn atom_text_constructs() {
    let f = feed("atom10_full.xml");
    assert_eq!(f.title.as_deref(), Some("Example Feed"));
    assert_eq!(
        f.subtitle.as_deref(),
        Some("Text with <tags> kept literally")
    );
    let e = &f.items[0];
    assert_eq!(e.content_text.as_deref(), Some("An image & bold words."));
    assert!(e
        .content
        .as_deref()
        .unwrap()
        .contains(r#"src="http://cdn.example.org/robot.png""#));
    assert_eq!(
        e.summary.as_deref(),
        Some(r#"Some <a href="http://example.org/blog/posts/more">text</a>."#)
    );
    let e = &f.items[1];
    assert_eq!(
        e.content.as_deref(),
        Some("Line one\n      line   two &lt;not a tag&gt;")
    );
    assert_eq!(
        e.content_text.as_deref(),
        Some("Line one line two <not a tag>")
    );
    let f = feed("atom03.xml");
    assert_eq!(
        f.subtitle.as_deref(),
        Some("A lot of effort went into making this effortless")
    );
    assert_eq!(f.items[0].content_text.as_deref(), Some("Escaped HTML."));
    assert_eq!(f.items[1].title.as_deref(), Some("Base64 title"));
    assert_eq!(f.items[1].content_text.as_deref(), Some("Inline XHTML"));
}

#[test]
fn links_resolve_against_xml_base_and_feed_url() {
    let f = feed("xml_base.xml");
    assert_eq!(
        f.link.as_deref(),
        Some("https://example.net/root/index.html")
    );
    let e = &f.items[0];
    assert_eq!(
        e.link.as_deref(),
        Some("https://example.net/root/section/page.html")
    );
    assert_eq!(
        e.links[1].href,
        "https://example.net/root/section/other.html"
    );
    let c = e.content.as_deref().unwrap();
    assert!(
        c.contains(r#"href="https://example.net/root/section/inner.html""#),
        "{c}"
    );
    assert!(c.contains(r#"href="mailto:x@example.com""#), "{c}");
    assert_eq!(
        f.items[1].link.as_deref(),
        Some("https://other.example/abs/p")
    );
    let f = feed("relative_links_hint.xml");
    assert_eq!(f.link.as_deref(), Some("https://example.com/blog/"));
    assert_eq!(
        f.items[0].link.as_deref(),
        Some("https://example.com/blog/feed/posts/1.html")
    );
    let s = f.items[0].summary.as_deref().unwrap();
    assert!(
        s.contains(r#"src="https://example.com/blog/feed/pic.jpg""#),
        "{s}"
    );
    assert!(s.contains(r#"href="https://cdn.example.com/x""#), "{s}");
    let f = feed("rss20_full.xml");
    assert_eq!(f.link.as_deref(), Some("https://example.com/blog/"));
    let e = &f.items[0];
    assert_eq!(e.enclosures[0].url, "https://example.com/media/12.mp3");
    assert_eq!(e.enclosures[0].length, Some(12_345_678));
    assert!(e
        .links
        .iter()
        .any(|l| l.rel.as_deref() == Some("enclosure") && l.href == e.enclosures[0].url));
    assert_eq!(
        f.items[1].link.as_deref(),
        Some("https://example.com/blog/permalink")
    );
}

#[test]
fn dates() {
    let f = feed("broken_dates.xml");
    let got: Vec<Option<String>> = f
        .items
        .iter()
        .map(|i| {
            i.published.map(|d| {
                d.format(&time::format_description::well_known::Rfc3339)
                    .unwrap()
            })
        })
        .collect();
    let want = [
        Some("2004-01-01T19:48:21Z"),
        Some("2025-05-12T08:00:00Z"),
        Some("2025-05-12T07:00:00Z"),
        Some("2025-05-12T15:00:00Z"),
        Some("2025-05-12T00:00:00Z"),
        Some("2025-05-12T10:00:00Z"),
        Some("2025-05-12T10:00:00Z"),
        Some("2025-05-12T04:30:00Z"),
        None,
        None,
        Some("2025-05-12T10:00:00Z"),
        Some("2025-05-12T17:00:00.25Z"),
    ];
    assert_eq!(got, want.map(|w| w.map(String::from)));
    assert!(f.warnings.iter().any(|w| w.contains("sometime last week")));
    assert!(f
        .warnings
        .iter()
        .any(|w| w.contains("QQQT") && w.contains("UTC")));
}

#[test]
fn not_a_feed_is_a_specific_error() {
    let cases: [(&[u8], NotAFeed); 7] = [
        (b"", NotAFeed::Empty),
        (b"  \n\t ", NotAFeed::Empty),
        (
            b"<!DOCTYPE html><html><body>moved</body></html>",
            NotAFeed::Html,
        ),
        (b"<html><body>x</body></html>", NotAFeed::Html),
        (
            b"<?xml version='1.0'?><svg xmlns='http://www.w3.org/2000/svg'/>",
            NotAFeed::UnknownRoot("svg".into()),
        ),
        (b"just some text", NotAFeed::NotMarkup),
        (b"<!-- only a comment -->", NotAFeed::NotMarkup),
    ];
    for (input, want) in cases {
        assert_eq!(
            feeds::parse(input, &Hints::default()).unwrap_err(),
            want,
            "{:?}",
            String::from_utf8_lossy(input)
        );
    }
    let err = load("html_page.html", None, None).unwrap_err();
    assert!(err.is_html());
    for json in [&b"{\"a\": 1}"[..], b"[1,2]", b"{\"version\": "] {
        let e = feeds::parse(json, &Hints::default()).unwrap_err();
        assert!(matches!(e, NotAFeed::NotJsonFeed(_)), "{e:?}");
    }
}

#[test]
fn json_shape_is_f9() {
    let v = feed("rss20_full.xml").to_json_value();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "format", "bozo", "warnings", "title", "subtitle", "link", "links", "id", "language",
            "updated", "authors", "items"
        ]
    );
    let item: Vec<&str> = v["items"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        item,
        [
            "id",
            "title",
            "link",
            "links",
            "published",
            "updated",
            "authors",
            "author",
            "categories",
            "summary",
            "summary_text",
            "content",
            "content_text",
            "enclosures"
        ]
    );
    assert_eq!(
        v["items"][0]["links"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["href", "rel", "type", "title"]
    );
    assert_eq!(
        v["items"][0]["enclosures"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["url", "type", "length"]
    );
    assert_eq!(
        v["authors"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name", "email", "uri"]
    );
    assert_eq!(v["updated"], "2025-05-12T22:00:00Z");
    assert_eq!(v["format"], "rss2.0");
}

#[test]
fn without_plain_text_only_the_renderings_are_missing() {
    for (name, url, ct) in CASES {
        let bytes = std::fs::read(format!("{DIR}/{name}")).unwrap();
        let hints = Hints {
            url: *url,
            content_type: *ct,
            content_location: None,
        };
        let full = feeds::parse(&bytes, &hints).unwrap();
        let lean =
            feeds::parse_with(&bytes, &hints, &feeds::Options { plain_text: false }).unwrap();
        let mut stripped = full.clone();
        for item in &mut stripped.items {
            item.summary_text = None;
            item.content_text = None;
        }
        assert_eq!(lean, stripped, "{name}");
    }
}
