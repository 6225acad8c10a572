//! One fixture or more per class of input the parser once read wrongly, or where readers agree
//! on an answer the parser did not give, with the facts each exists for.

use feeds::{Feed, Format, Hints, NotAFeed};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn try_parse(name: &str, content_type: Option<&str>) -> Result<Feed, NotAFeed> {
    let bytes = std::fs::read(format!("{DIR}/{name}")).unwrap();
    feeds::parse(
        &bytes,
        &Hints {
            url: None,
            content_type,
            content_location: None,
        },
    )
}

fn parse(name: &str) -> Feed {
    try_parse(name, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn warned(feed: &Feed, needle: &str) -> bool {
    feed.warnings.iter().any(|w| w.contains(needle))
}

#[test]
fn atom_in_an_unexpected_namespace_or_version() {
    let f = parse("atom_unknown_namespace.xml");
    assert_eq!(f.format, Format::Atom1);
    assert_eq!(f.title.as_deref(), Some("Made-up namespace"));
    assert_eq!(f.link.as_deref(), Some("http://example.org/"));
    assert!(f.updated.is_some());
    assert!(warned(&f, "not Atom's; read as Atom"), "{:?}", f.warnings);
    assert!(!f.bozo);
    assert_eq!(f.items.len(), 1);
    assert_eq!(f.items[0].title.as_deref(), Some("First"));
    assert_eq!(f.items[0].id.as_deref(), Some("urn:example:1"));
    assert_eq!(f.items[0].summary.as_deref(), Some("One"));

    let f = parse("atom03_unknown_namespace.xml");
    assert_eq!(f.format, Format::Atom03);
    assert_eq!(f.title.as_deref(), Some("Old draft namespace"));
    let e = &f.items[0];
    assert_eq!(e.link.as_deref(), Some("http://example.org/d"));
    assert_eq!(e.content.as_deref(), Some("<p>Body</p>"));
    assert!(e.published.is_some() && e.updated.is_some());

    let f = parse("atom_prefixed_root.xml");
    assert_eq!(f.format, Format::Atom1);
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    assert_eq!(f.title.as_deref(), Some("Prefixed Atom"));
    let e = &f.items[0];
    assert_eq!(e.title.as_deref(), Some("Bold entry"));
    assert_eq!(e.link.as_deref(), Some("http://example.org/p1"));
    assert_eq!(e.content.as_deref(), Some("<p>Hi</p>"));
    assert!(e.published.is_some());

    // A root named `feed` that is not shaped like Atom is not a feed.
    assert!(matches!(
        try_parse("notfeed_unknown_namespace.xml", None),
        Err(NotAFeed::UnknownRoot(_))
    ));
}

fn rfc3339(t: Option<time::OffsetDateTime>) -> String {
    t.and_then(|t| {
        t.format(&time::format_description::well_known::Rfc3339)
            .ok()
    })
    .unwrap_or_default()
}

#[test]
fn dates_from_extension_elements() {
    let f = parse("dates_dcterms.xml");
    assert_eq!(rfc3339(f.updated), "2024-02-02T02:02:02Z");
    let got: Vec<(String, String)> = f
        .items
        .iter()
        .map(|i| (rfc3339(i.published), rfc3339(i.updated)))
        .collect();
    let want = [
        ("2024-01-01T10:00:00Z", "2024-01-03T10:00:00Z"),
        ("2024-01-04T09:00:00Z", ""),
        ("2024-01-05T10:00:00Z", ""),
        ("2024-01-06T10:00:00Z", "2024-01-07T10:00:00Z"),
        ("2024-01-08T10:00:00Z", ""),
    ];
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!((g.0.as_str(), g.1.as_str()), w, "item {i}");
    }

    let f = parse("dates_atom_candidates.xml");
    assert_eq!(rfc3339(f.updated), "2024-01-01T00:00:00Z");
    let got: Vec<(String, String)> = f
        .items
        .iter()
        .map(|i| (rfc3339(i.published), rfc3339(i.updated)))
        .collect();
    let want = [
        ("2024-01-10T00:00:00Z", "2024-01-12T00:00:00Z"),
        ("2024-01-13T00:00:00Z", "2024-01-14T00:00:00Z"),
        ("2024-01-15T00:00:00Z", "2024-01-16T00:00:00Z"),
    ];
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!((g.0.as_str(), g.1.as_str()), w, "entry {i}");
    }
}

#[test]
fn extension_vocabularies() {
    let f = parse("itunes_categories.xml");
    assert_eq!(
        f.items[0].categories,
        ["Society & Culture", "Documentary", "Technology", "tech"]
    );

    let f = parse("media_rss.xml");
    let i = &f.items[0];
    assert_eq!(i.title.as_deref(), Some("A title from media:title"));
    assert_eq!(i.categories, ["nature/birds"]);
    assert_eq!(
        i.summary.as_deref(),
        Some("Plain &lt;text&gt; description\n        on two lines")
    );
    assert_eq!(
        i.summary_text.as_deref(),
        Some("Plain <text> description on two lines")
    );
    let i = &f.items[1];
    assert_eq!(i.title.as_deref(), Some("Core title"));
    assert_eq!(i.summary.as_deref(), Some("The core description"));
    let i = &f.items[2];
    assert_eq!(i.summary, None);
    assert_eq!(i.content.as_deref(), Some("<p>Full body</p>"));

    let f = parse("youtube_atom.xml");
    let e = &f.items[0];
    assert_eq!(e.title.as_deref(), Some("Video one"));
    assert_eq!(
        e.summary_text.as_deref(),
        Some("Links & notes: https://example.org/notes")
    );
    assert_eq!(
        e.summary.as_deref(),
        Some("Links &amp; notes:\nhttps://example.org/notes")
    );
    assert_eq!(e.content, None);

    let f = parse("free_form_tags.xml");
    assert_eq!(f.items[0].categories, ["first", "rust", "feeds", "parsing"]);
}

fn bodies(f: &Feed) -> Vec<(Option<&str>, Option<&str>)> {
    f.items
        .iter()
        .map(|i| (i.summary.as_deref(), i.content.as_deref()))
        .collect()
}

#[test]
fn precedence_of_bodies() {
    let f = parse("bodies_rss.xml");
    assert_eq!(
        bodies(&f),
        [
            (Some("D1"), Some("<p>C1</p>")),
            (Some("D2"), Some("<p>C2</p>")),
            (Some("D3"), Some("S3")),
            (Some("S4"), Some("D4")),
            (Some("D5"), Some(r#"<p>B5 <a href="x">link</a></p>"#)),
            (
                Some("D6"),
                Some(r#"<xhtml:p xmlns:xhtml="http://www.w3.org/1999/xhtml">B6</xhtml:p>"#)
            ),
            (Some("D7"), Some("C7")),
            (None, Some("C8")),
            (Some("DC9"), Some("C9")),
        ]
    );
    assert_eq!(f.items[5].content_text.as_deref(), Some("B6"));
    let f = parse("bodies_atom.xml");
    assert_eq!(
        bodies(&f),
        [
            (Some("S1"), Some("<p>C1</p>")),
            (Some("S2"), Some("<i>second</i>")),
            (Some("S3"), Some("C3")),
        ]
    );
}

#[test]
fn xhtml_content_keeps_other_namespaces() {
    let f = parse("xhtml_svg_namespaces.xml");
    let c: Vec<&str> = f
        .items
        .iter()
        .filter_map(|i| i.content.as_deref())
        .collect();
    assert_eq!(
        c,
        [
            concat!(
                r#"<p>Picture</p><svg:svg xmlns:svg="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">"#,
                r#"<svg:a xlink:href="http://example.org/x"><svg:circle r="4"/></svg:a></svg:svg>"#
            ),
            r##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="#dot"/></svg>"##,
            r#"<m:math xmlns:m="http://www.w3.org/1998/Math/MathML"><m:mi>x</m:mi></m:math>"#,
        ]
    );
    assert_eq!(f.items[0].content_text.as_deref(), Some("Picture"));
}

#[test]
fn empty_elements_are_empty_strings() {
    let f = parse("empty_elements.xml");
    assert_eq!(f.title.as_deref(), Some(""));
    assert_eq!(f.subtitle.as_deref(), Some(""));
    let i = &f.items[0];
    assert_eq!(
        (
            i.title.as_deref(),
            i.summary.as_deref(),
            i.content.as_deref()
        ),
        (Some(""), Some(""), Some(""))
    );
    let i = &f.items[1];
    assert_eq!(
        (i.title.as_deref(), i.summary.as_deref()),
        (Some(""), Some(""))
    );
    let i = &f.items[2];
    assert_eq!(i.title.as_deref(), Some("From Dublin Core"));
    assert_eq!(i.summary.as_deref(), Some("Fallback body"));
    let i = &f.items[3];
    assert_eq!((i.title.as_deref(), i.summary.as_deref()), (None, None));
    // The JSON form says "" (present, empty) apart from null (absent).
    let v = f.to_json_value();
    assert_eq!(v["items"][0]["summary"], "");
    assert!(v["items"][3]["summary"].is_null());
}

#[test]
fn plain_text_keeps_non_ascii_spaces() {
    let f = parse("plain_text_whitespace.xml");
    let t: Vec<&str> = f.items.iter().filter_map(|i| i.title.as_deref()).collect();
    assert_eq!(
        t,
        [
            "10\u{a0}km \u{2002}|\u{2003}x\u{2009}y co\u{ad}operate",
            "chars: 1\u{a0}2\u{2002}3\u{2003}4\u{2009}co\u{ad}op tab",
            "edges",
        ]
    );
    assert_eq!(
        f.items[0].summary_text.as_deref(),
        Some("a\u{a0}b c\u{ad}d")
    );
    assert_eq!(feeds::html_to_text("x&nbsp;&nbsp; y"), "x\u{a0}\u{a0} y");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times the parser by the wall clock"
)]
fn internal_dtd_entities_are_expanded_within_bounds() {
    let f = parse("dtd_entities.xml");
    assert_eq!(f.title.as_deref(), Some("Example & Co"));
    let i = &f.items[0];
    assert_eq!(i.title.as_deref(), Some("Hello\u{a0}from Example & Co"));
    // The external entity is never loaded: the reference stays as written.
    assert_eq!(i.summary.as_deref(), Some("© Example & Co and &secret;"));
    assert!(warned(&f, "external entities are never loaded: secret"));

    let t0 = std::time::Instant::now();
    let f = parse("dtd_billion_laughs.xml");
    assert!(t0.elapsed() < std::time::Duration::from_secs(5));
    assert!(f.bozo);
    assert!(warned(&f, "entity expansion stopped"), "{:?}", f.warnings);
    assert_eq!(f.items.len(), 2);
    assert_eq!(f.items[0].title.as_deref(), Some("&lol9;"));
    assert_eq!(f.items[1].title.as_deref(), Some("after"));
}

#[test]
fn unclosed_elements_do_not_swallow_items() {
    let f = parse("unclosed_before_items.xml");
    assert!(f.bozo);
    assert!(
        warned(&f, "<itunes:category> was never closed"),
        "{:?}",
        f.warnings
    );
    let ids: Vec<_> = f.items.iter().map(|i| i.id.as_deref()).collect();
    assert_eq!(ids, [Some("u1"), Some("u2"), Some("u3")]);
    assert_eq!(f.items[1].summary.as_deref(), Some("left open"));
    assert_eq!(f.items[2].title.as_deref(), Some("Three"));

    let f = parse("unclosed_atom_entry.xml");
    let ids: Vec<_> = f.items.iter().map(|i| i.id.as_deref()).collect();
    assert_eq!(ids, [Some("urn:e1"), Some("urn:e2"), Some("urn:e3")]);
    assert_eq!(f.authors.len(), 1);
    assert_eq!(f.items[1].title.as_deref(), Some("E2"));
}

#[test]
fn json_feed_titles_decode_character_references() {
    let f = parse("jsonfeed_escaped_titles.json");
    assert_eq!(f.title.as_deref(), Some("Kottke & Friends"));
    assert_eq!(f.subtitle.as_deref(), Some("Links – daily"));
    let t: Vec<&str> = f.items.iter().filter_map(|i| i.title.as_deref()).collect();
    assert_eq!(
        t,
        [
            "It's here",
            "Fish & Chips … ’quoted’",
            "Tom & Jerry",
            "Use <b> for bold",
            "Unknown &madeup; stays",
            "Double &amp; once",
            "Plain title: no escapes",
        ]
    );
}

#[test]
fn encodings() {
    let cjk = [
        ("cjk_euc-kr_comment_first.xml", "한국어 제목"),
        ("cjk_shift_jis_comment_first.xml", "日本語のタイトル"),
        ("cjk_gb2312_comment_first.xml", "中文标题"),
        ("cjk_gbk_comment_first.xml", "中文標題镕"),
        ("cjk_big5_comment_first.xml", "中文標題"),
    ];
    for (name, title) in cjk {
        let f = parse(name);
        assert_eq!(f.title.as_deref(), Some(title), "{name}");
        assert_eq!(f.items[0].title.as_deref(), Some(title), "{name}");
        assert!(!f.bozo, "{name}: {:?}", f.warnings);
    }
    let f = parse("cjk_shift_jis_comment_before_root.xml");
    assert_eq!(f.title.as_deref(), Some("日本語"));
    assert_eq!(f.items[0].title.as_deref(), Some("記事"));

    // windows-1252 quotes in a feed declared ISO-8859-1.
    let f = parse("iso8859_1_smart_quotes.xml");
    assert_eq!(f.title.as_deref(), Some("Café “quoted” – it’s"));
    assert!(!f.bozo);

    // The HTTP charset against the declaration (which says iso-8859-1; the bytes are Latin-1).
    let combos = [
        (None, "Résumé", false),
        // RFC 3023 would say US-ASCII; the declaration is read instead.
        (Some("text/xml"), "Résumé", false),
        (
            Some("application/rss+xml; charset=iso-8859-1"),
            "Résumé",
            false,
        ),
        // The HTTP charset wins over the declaration.
        (
            Some("application/xml; charset=windows-1251"),
            "Rйsumй",
            false,
        ),
        // It says UTF-8 but the bytes are not: the declaration's encoding, and bozo (the
        // bytes are read in another encoding than the one the HTTP charset declares).
        (Some("text/xml; charset=utf-8"), "Résumé", true),
        (Some("text/xml; charset=no-such-charset"), "Résumé", true),
    ];
    for (ct, title, bozo) in combos {
        let f = try_parse("latin1_declared.xml", ct).unwrap();
        assert_eq!(f.title.as_deref(), Some(title), "{ct:?}");
        assert_eq!(f.bozo, bozo, "{ct:?}: {:?}", f.warnings);
    }

    let f = parse("bogus_encoding_name.xml");
    assert!(f.bozo);
    assert!(warned(&f, "unknown encoding \"x-made-up-8\""));
    assert_eq!(f.title.as_deref(), Some("Café"));

    let f = try_parse("rss20_full.xml", Some("text/plain")).unwrap();
    assert!(f.bozo);
    assert!(warned(&f, "not an XML media type"));
    assert!(
        !try_parse("rss20_full.xml", Some("application/rss+xml"))
            .unwrap()
            .bozo
    );

    let f = parse("bom_then_invalid_utf8.xml");
    assert!(f.bozo);
    assert!(
        warned(&f, "bytes invalid in UTF-8 were replaced"),
        "{:?}",
        f.warnings
    );
    assert_eq!(f.title.as_deref(), Some("Bad \u{fffd}\u{fffd} bytes"));

    let f = parse("undeclared_prefix.xml");
    assert!(f.bozo);
    assert!(
        warned(&f, "namespace prefix \"dc\" is not declared"),
        "{:?}",
        f.warnings
    );
    // The usual meaning of a well-known prefix is still read.
    assert_eq!(f.items[0].author.as_deref(), Some("Someone"));
}

#[test]
fn microsoft_cdf() {
    let bytes = std::fs::read(format!("{DIR}/cdf.xml")).unwrap();
    let hints = Hints {
        url: Some("http://example.org/channel.cdf"),
        content_type: None,
        content_location: None,
    };
    let f = feeds::parse(&bytes, &hints).unwrap();
    assert_eq!(f.format, Format::Cdf);
    assert_eq!(f.to_json_value()["format"], "cdf");
    assert_eq!(f.title.as_deref(), Some("Example CDF Channel"));
    assert_eq!(f.subtitle.as_deref(), Some("Channels of the push era"));
    assert_eq!(f.link.as_deref(), Some("http://example.org/index.html"));
    assert_eq!(rfc3339(f.updated), "1998-11-05T22:12:00Z");
    let got: Vec<(Option<&str>, Option<&str>)> = f
        .items
        .iter()
        .map(|i| (i.title.as_deref(), i.link.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("First item"), Some("http://example.org/first.html")),
            (
                Some("Second item"),
                Some("http://example.org/sub/second.html")
            ),
            (Some("Third item"), Some("http://example.org/third.html")),
        ]
    );
    let first = &f.items[0];
    assert_eq!(
        first.summary.as_deref(),
        Some("About the first item &amp; more")
    );
    assert_eq!(
        first.summary_text.as_deref(),
        Some("About the first item & more")
    );
    assert_eq!(rfc3339(first.updated), "1998-11-04T08:30:00Z");
    // A bare lower-case RSS 0.9x channel root is still RSS.
    let rss =
        b"<channel><title>t</title><link>http://x/</link><item><title>i</title></item></channel>";
    assert_eq!(
        feeds::parse(rss, &Hints::default()).unwrap().format,
        Format::Rss09x
    );
}

#[test]
fn xml_lang_with_an_underscore_is_a_language_tag() {
    let f = parse("xml_lang_underscore.xml");
    assert_eq!(f.language.as_deref(), Some("en-US"));
    let rss = b"<rss><channel><title>t</title><language>pt_BR</language></channel></rss>";
    let f = feeds::parse(rss, &Hints::default()).unwrap();
    assert_eq!(f.language.as_deref(), Some("pt-BR"));
}

#[test]
fn an_extension_item_closes_nothing() {
    let rss = br#"<rss xmlns:g="http://example.org/g"><channel><title>t</title>
        <item><guid>1</guid><g:list><g:item>x</g:item></g:list><title>kept</title></item>
        </channel></rss>"#;
    let f = feeds::parse(rss, &Hints::default()).unwrap();
    assert!(!f.bozo, "{:?}", f.warnings);
    assert_eq!(f.items.len(), 1);
    assert_eq!(f.items[0].title.as_deref(), Some("kept"));
}

#[test]
fn iri_bases_stay_iris() {
    let f = parse("xml_base_iri.xml");
    assert_eq!(f.link.as_deref(), Some("http://example.org/café/feed.html"));
    let e = &f.items[0];
    assert_eq!(e.id.as_deref(), Some("http://bücher.example/ö/entry/1"));
    let hrefs: Vec<&str> = e.links.iter().map(|l| l.href.as_str()).collect();
    assert_eq!(
        hrefs,
        [
            "http://bücher.example/ö/a%20b.html",
            "http://bücher.example/ö/ü.html"
        ]
    );
    assert_eq!(
        e.content.as_deref(),
        Some(r#"<a href="http://bücher.example/ö/x.html">x</a>"#)
    );
    let e = &f.items[1];
    let hrefs: Vec<&str> = e.links.iter().map(|l| l.href.as_str()).collect();
    assert_eq!(
        hrefs,
        [
            "http://example.org/plain/ñ.html",
            "http://example.org/plain/a%20b.html"
        ]
    );
}

/// Relative links resolve against `xml:base`, else the HTTP Content-Location (itself resolved
/// against the URL the feed came from), else that URL.
#[test]
fn bases_xml_base_then_content_location_then_the_url() {
    let doc = br#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>t</title><link>home/</link>
<item><title>plain</title><link>a.html</link></item>
<item xml:base="http://base.example/x/"><title>based</title><link>b.html</link></item>
</channel></rss>"#;
    let parse = |content_location: Option<&str>| {
        let hints = Hints {
            url: Some("http://fetched.example/feeds/rss.xml"),
            content_type: Some("application/rss+xml"),
            content_location,
        };
        feeds::parse(doc, &hints).unwrap()
    };
    let links =
        |f: &Feed| -> Vec<Option<String>> { f.items.iter().map(|i| i.link.clone()).collect() };

    let by_url = parse(None);
    assert_eq!(
        by_url.link.as_deref(),
        Some("http://fetched.example/feeds/home/")
    );
    assert_eq!(
        links(&by_url),
        [
            Some("http://fetched.example/feeds/a.html".to_owned()),
            Some("http://base.example/x/b.html".to_owned())
        ]
    );

    // A relative Content-Location is resolved against the URL first.
    let located = parse(Some("/mirror/rss.xml"));
    assert_eq!(
        located.link.as_deref(),
        Some("http://fetched.example/mirror/home/")
    );
    assert_eq!(
        links(&located),
        [
            Some("http://fetched.example/mirror/a.html".to_owned()),
            Some("http://base.example/x/b.html".to_owned())
        ],
        "xml:base still wins"
    );

    let absolute = parse(Some("https://cdn.example/r/"));
    assert_eq!(
        links(&absolute)[0].as_deref(),
        Some("https://cdn.example/r/a.html")
    );
    // A Content-Location that is not a URI is ignored.
    assert_eq!(links(&parse(Some("http://[bad"))), links(&by_url));
}

fn parse_with_hints(name: &str, hints: &Hints<'_>) -> Feed {
    let bytes = std::fs::read(format!("{DIR}/{name}")).unwrap();
    feeds::parse(&bytes, hints).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Radio UserLand's un-namespaced `<body>` in an RSS item is the item's content, read like
/// `xhtml:body`; its relative links resolve against Content-Location, then the URL.
#[test]
fn an_unnamespaced_body_in_an_rss_item_is_its_content() {
    let located = parse_with_hints(
        "userland_body.xml",
        &Hints {
            url: Some("http://radio.example.com/rss.xml"),
            content_type: None,
            content_location: Some("http://mirror.example.net/radio/rss.xml"),
        },
    );
    assert!(!located.bozo, "{:?}", located.warnings);
    let i = &located.items[0];
    assert_eq!(i.summary.as_deref(), Some("Short form."));
    assert_eq!(
        i.content.as_deref(),
        Some(concat!(
            r#"<p>Read <a href="http://mirror.example.net/radio/2002/10/01.html#a1">the post</a> and "#,
            r#"<img src="http://mirror.example.net/images/dave.gif"/>.</p>"#
        ))
    );
    assert_eq!(i.content_text.as_deref(), Some("Read the post and ."));
    let i = &located.items[1];
    assert_eq!(i.summary, None);
    assert_eq!(
        i.content.as_deref(),
        Some(r#"<p>Escaped <a href="http://mirror.example.net/radio/notes.html">notes</a></p>"#)
    );
    // The first content element wins, as it does for the other content elements.
    assert_eq!(
        located.items[2].content.as_deref(),
        Some("<p>The encoded one</p>")
    );

    let by_url = parse_with_hints(
        "userland_body.xml",
        &Hints {
            url: Some("http://radio.example.com/rss.xml"),
            ..Hints::default()
        },
    );
    assert_eq!(
        by_url.items[1].content.as_deref(),
        Some(r#"<p>Escaped <a href="http://radio.example.com/notes.html">notes</a></p>"#)
    );
    // In Atom a `body` is no Atom element and stays unread.
    let atom = br#"<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
        <entry><id>e</id><body>not content</body></entry></feed>"#;
    let f = feeds::parse(atom, &Hints::default()).unwrap();
    assert_eq!(f.items[0].content, None);
}

/// Userland's RSS namespaces and Harvard's on the root are plain RSS 2.0.
#[test]
fn userland_rss_namespaces_are_plain_rss() {
    let f = parse("userland_namespace_rss2.xml");
    assert_eq!(f.format, Format::Rss2);
    assert!(!f.bozo && f.warnings.is_empty(), "{:?}", f.warnings);
    assert_eq!(f.title.as_deref(), Some("Userland RSS 2 namespace"));
    assert_eq!(
        f.subtitle.as_deref(),
        Some("The channel says which RSS it speaks.")
    );
    assert_eq!(f.link.as_deref(), Some("http://example.org/"));
    assert_eq!(f.language.as_deref(), Some("en-us"));
    assert_eq!(f.ttl, Some(60));
    assert_eq!(rfc3339(f.updated), "2002-10-01T12:00:00Z");
    assert_eq!(f.items.len(), 2);
    let i = &f.items[0];
    assert_eq!(i.title.as_deref(), Some("First"));
    assert_eq!(i.link.as_deref(), Some("http://example.org/1"));
    assert_eq!(i.id.as_deref(), Some("http://example.org/1"));
    assert_eq!(i.summary.as_deref(), Some("One"));
    assert_eq!(rfc3339(i.published), "2002-10-01T10:00:00Z");
    assert_eq!(i.categories, ["news"]);
    assert_eq!(i.enclosures.len(), 1);
    assert_eq!(i.enclosures[0].length, Some(123));

    for (name, title, id) in [
        (
            "userland_namespace_prefixed.xml",
            "Prefixed Userland 2.1",
            "p-1",
        ),
        (
            "userland_namespace_rss.xml",
            "Userland RSS namespace",
            "r-1",
        ),
        ("harvard_namespace.xml", "Harvard RSS namespace", "h-1"),
    ] {
        let f = parse(name);
        assert_eq!(f.format, Format::Rss2, "{name}");
        assert!(!f.bozo && f.warnings.is_empty(), "{name}: {:?}", f.warnings);
        assert_eq!(f.title.as_deref(), Some(title), "{name}");
        assert_eq!(f.link.as_deref(), Some("http://example.org/"), "{name}");
        assert_eq!(f.items.len(), 1, "{name}");
        assert_eq!(f.items[0].id.as_deref(), Some(id), "{name}");
        assert_eq!(
            f.items[0].link.as_deref(),
            Some("http://example.org/1"),
            "{name}"
        );
    }
    // Any other namespace on the root is not RSS: its items are not read.
    let other = br#"<rss xmlns="http://example.org/not-rss" version="2.0"><channel>
        <title>t</title><item><title>i</title></item></channel></rss>"#;
    let f = feeds::parse(other, &Hints::default()).unwrap();
    assert_eq!(f.title, None);
}

/// Microsoft CDF: `LASTMOD` is the updated date, `ABSTRACT` the summary, `TITLE` an element
/// or else an attribute, `HREF` the link.
#[test]
fn cdf_titles_by_attribute_and_lastmod() {
    let f = parse("cdf_attributes.xml");
    assert_eq!(f.format, Format::Cdf);
    assert_eq!(f.title.as_deref(), Some("Channel by attribute"));
    assert_eq!(f.subtitle.as_deref(), Some("Titles as attributes"));
    assert_eq!(rfc3339(f.updated), "1998-03-01T10:00:00Z");
    assert_eq!(f.link, None);
    let got: Vec<_> = f
        .items
        .iter()
        .map(|i| {
            (
                i.title.as_deref(),
                i.link.as_deref(),
                i.summary.as_deref(),
                rfc3339(i.updated),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                Some("Item by attribute"),
                Some("http://example.org/a.html"),
                Some("An item titled by its attribute"),
                "1998-02-27T09:15:00Z".to_owned()
            ),
            (
                Some("Element wins"),
                Some("http://example.org/b.html"),
                None,
                String::new()
            ),
        ]
    );
}

/// No encoding declared and bytes that are not UTF-8: windows-1252 (0x80–0x9F are the
/// characters readers show), and `bozo`, as whenever the bytes are read in another encoding
/// than the one declared or implied.
#[test]
fn undeclared_invalid_utf8_is_windows_1252_and_bozo() {
    let f = parse("undeclared_windows1252.xml");
    assert_eq!(f.title.as_deref(), Some("Don’t panic"));
    let i = &f.items[0];
    assert_eq!(i.title.as_deref(), Some("“Smart” quotes cost €5"));
    assert_eq!(i.summary_text.as_deref(), Some("It’s what the bytes say."));
    assert!(f.bozo);
    assert!(
        warned(
            &f,
            "no usable encoding declared and not UTF-8; read as windows-1252"
        ),
        "{:?}",
        f.warnings
    );
    // An HTTP charset of UTF-8 that the bytes belie: the same reading, and bozo.
    let f = try_parse(
        "undeclared_windows1252.xml",
        Some("text/xml; charset=utf-8"),
    )
    .unwrap();
    assert_eq!(f.title.as_deref(), Some("Don’t panic"));
    assert!(f.bozo);
    assert!(warned(&f, "read as windows-1252"), "{:?}", f.warnings);

    // Valid UTF-8 under another declared encoding is read as UTF-8: bozo too.
    let f = parse("utf8_wrong_declaration.xml");
    assert_eq!(
        f.title.as_deref(),
        Some("Declared Latin-1, really UTF-8: café — naïve")
    );
    assert!(f.bozo);
    // The HTTP charset says UTF-8, the bytes are not, the declaration names another encoding:
    // the declaration is read.
    let koi = encoding_rs::KOI8_R.encode("Привет").0.into_owned();
    let mut doc = b"<?xml version='1.0' encoding='koi8-r'?><rss><channel><title>".to_vec();
    doc.extend_from_slice(&koi);
    doc.extend_from_slice(b"</title></channel></rss>");
    let hints = Hints {
        content_type: Some("application/rss+xml; charset=utf-8"),
        ..Hints::default()
    };
    let f = feeds::parse(&doc, &hints).unwrap();
    assert_eq!(f.title.as_deref(), Some("Привет"));
    assert!(f.bozo);
    assert!(warned(&f, "read as KOI8-R"), "{:?}", f.warnings);

    // Read as declared (or as implied, UTF-8): no bozo. ISO-8859-1 read as windows-1252 is
    // what that label means on the web, not another encoding.
    assert!(!parse("ru_windows1251.xml").bozo);
    assert!(!parse("iso8859_1_smart_quotes.xml").bozo);
    assert!(!parse("rss20_full.xml").bozo);
}

/// RSS 1.0: the item's `rdf:about` is its id, over `dc:identifier`; the identifier the id used
/// to be is kept as `former_id` (outside the JSON form) for readers that keyed items by it.
#[test]
fn rss10_rdf_about_is_the_id_over_dc_identifier() {
    let f = parse("rss10_about_and_identifier.rdf");
    assert_eq!(f.format, Format::Rss1);
    let ids: Vec<_> = f
        .items
        .iter()
        .map(|i| (i.id.as_deref(), i.former_id.as_deref()))
        .collect();
    assert_eq!(
        ids,
        [
            (Some("http://example.org/a"), Some("urn:isbn:0-395-36341-1")),
            (Some("http://example.org/b"), None),
            (Some("urn:example:c"), None),
        ]
    );
    let v = f.to_json_value();
    assert_eq!(v["items"][0]["id"], "http://example.org/a");
    assert!(v["items"][0].get("former_id").is_none());
    // A guid still comes first.
    let rss = br#"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns="http://purl.org/rss/1.0/">
        <item rdf:about="http://x/a"><guid>g</guid><dc:identifier>d</dc:identifier></item>
        </rdf:RDF>"#;
    let f = feeds::parse(rss, &Hints::default()).unwrap();
    assert_eq!(f.items[0].id.as_deref(), Some("g"));
    assert_eq!(f.items[0].former_id, None);
}

/// An Atom Entry Document (root `<entry>`) is a feed of that one entry, with a warning.
#[test]
fn an_atom_entry_document_is_a_feed_of_one_entry() {
    let f = parse("atom_entry_document.xml");
    assert_eq!(f.format, Format::Atom1);
    assert!(!f.bozo);
    assert!(
        warned(&f, "the root is an Atom entry, not a feed"),
        "{:?}",
        f.warnings
    );
    // The feed has nothing of its own: the entry's title is not the feed's.
    assert_eq!((f.title.as_deref(), f.id.as_deref()), (None, None));
    assert!(f.links.is_empty());
    assert_eq!(f.language.as_deref(), Some("en"));
    assert_eq!(f.items.len(), 1);
    let e = &f.items[0];
    assert_eq!(e.title.as_deref(), Some("A lone entry"));
    assert_eq!(e.id.as_deref(), Some("tag:example.org,2025:entry-1"));
    assert_eq!(
        e.link.as_deref(),
        Some("http://example.org/2025/entry-1.html")
    );
    assert_eq!(e.links.len(), 2);
    assert_eq!(rfc3339(e.published), "2025-05-11T09:00:00Z");
    assert_eq!(rfc3339(e.updated), "2025-05-12T10:00:00Z");
    assert_eq!(e.author.as_deref(), Some("Author Name"));
    assert_eq!(
        e.summary.as_deref(),
        Some("What an Atom Publishing server answers for one member.")
    );
    assert_eq!(e.content.as_deref(), Some("<p>The body</p>"));

    let atom03 = br#"<entry xmlns="http://purl.org/atom/ns#"><title>Old</title>
        <id>urn:o</id><modified>2004-01-01T00:00:00Z</modified></entry>"#;
    let f = feeds::parse(atom03, &Hints::default()).unwrap();
    assert_eq!(f.format, Format::Atom03);
    assert_eq!(f.items[0].title.as_deref(), Some("Old"));
    // An `entry` root of another vocabulary is still not a feed.
    assert!(matches!(
        feeds::parse(
            br#"<entry xmlns="http://example.org/dictionary"><word>x</word></entry>"#,
            &Hints::default()
        ),
        Err(NotAFeed::UnknownRoot(_))
    ));
}

/// Of two alternate links, one untyped and one `type="text/html"`, the typed one is the link,
/// in either order; an untyped one beats one of another type.
#[test]
fn an_html_typed_alternate_beats_an_untyped_one() {
    let f = parse("alternate_links_typed.xml");
    assert_eq!(f.link.as_deref(), Some("http://example.org/"));
    let links: Vec<_> = f.items.iter().map(|i| i.link.as_deref()).collect();
    assert_eq!(
        links,
        [
            Some("http://example.org/a1.html"),
            Some("http://example.org/a2.html"),
            Some("http://example.org/a3"),
            Some("http://example.org/a4.pdf"),
        ]
    );
}
