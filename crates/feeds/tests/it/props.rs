//! Property tests: no input makes the parser panic, and its output stays bounded.

use feeds::Hints;
use proptest::prelude::*;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn seeds() -> Vec<Vec<u8>> {
    let mut names: Vec<_> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    names
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e != "py"))
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

fn check(bytes: &[u8]) {
    let hints = Hints {
        url: Some("http://example.com/a/b"),
        content_type: Some("text/xml; charset=koi8-r"),
        content_location: Some("../c/"),
    };
    for h in [Hints::default(), hints] {
        if let Ok(feed) = feeds::parse(bytes, &h) {
            assert!(feed.warnings.len() <= feeds::MAX_WARNINGS + 1);
            let json = feed.to_json();
            assert!(json.starts_with('{'));
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let snippets = prop::sample::select(vec![
        b"<".to_vec(),
        b">".to_vec(),
        b"&".to_vec(),
        b"</item>".to_vec(),
        b"<item>".to_vec(),
        b"<![CDATA[".to_vec(),
        b"<!--".to_vec(),
        b"&nbsp;".to_vec(),
        b"\0".to_vec(),
        b"\xff\xfe".to_vec(),
        b"xml:base=\"::\"".to_vec(),
        b"<entry xml:base='../'>".to_vec(),
        b"\"".to_vec(),
    ]);
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), snippets).prop_map(|(i, s)| Mutation::Insert(i, s)),
        (any::<usize>(), 0usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

fn apply(mut doc: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let len = doc.len().max(1);
        match m {
            Mutation::Truncate(i) => doc.truncate(i % len),
            Mutation::Flip(i, b) => {
                if let Some(x) = doc.get_mut(i % len) {
                    *x = *b;
                }
            }
            Mutation::Insert(i, s) => {
                let at = (i % len).min(doc.len());
                doc.splice(at..at, s.iter().copied());
            }
            Mutation::Delete(i, n) => {
                let at = (i % len).min(doc.len());
                let end = (at + n).min(doc.len());
                doc.drain(at..end);
            }
        }
    }
    doc
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check(&bytes);
    }

    #[test]
    fn markup_soup_never_panics(parts in prop::collection::vec(prop::sample::select(vec![
        "<rss>", "<channel>", "<item>", "</item>", "<title>", "</title>", "<feed>", "<entry>",
        "</entry>", "<content type='xhtml'>", "<div>", "</div>", "&amp;", "&#x;", "&#99999999;",
        "<![CDATA[", "]]>", "<!--", "-->", "<?x ?>", "<a href='", "'>", "text", " ", "<", ">",
        "<link href='../x'/>", "xml:base='http://[::1]/'", "<pubDate>", "Mon, 99 Foo 2025 99:99:99 +9999",
        "{", "\"items\":[", "]", "}", "\u{0}", "\u{feff}",
        "<!DOCTYPE r [<!ENTITY a \"&b;<x>\"><!ENTITY b '&a;&#38;'>", "]>", "&a;", "&b;",
        "<svg:a xlink:href='x'>", "<itunes:category text='a'>", "<CHANNEL HREF='x'>",
        "<ITEM HREF='y' LASTMOD='1998'>", "<media:group>", "<xhtml:body>", "<feed xmlns='urn:x'>",
    ]), 0..200)) {
        check(parts.concat().as_bytes());
    }

    #[test]
    fn mutated_fixtures_never_panic(seed in 0usize..256, muts in prop::collection::vec(mutation(), 1..8)) {
        let seeds = seeds();
        let doc = seeds[seed % seeds.len()].clone();
        check(&apply(doc, &muts));
    }
}

#[test]
fn deep_nesting_is_bounded() {
    let mut doc = String::from("<rss><channel><item><title>");
    for _ in 0..100_000 {
        doc.push_str("<b>");
    }
    doc.push_str("</title></item></channel></rss>");
    let feed = feeds::parse(doc.as_bytes(), &Hints::default()).unwrap();
    assert_eq!(feed.items.len(), 1);
    let json = "[".repeat(100_000);
    assert!(feeds::parse(json.as_bytes(), &Hints::default()).is_err());
}

#[test]
fn many_items_are_bounded() {
    let mut doc = String::from("<rss><channel>");
    for _ in 0..(feeds::MAX_ITEMS + 10) {
        doc.push_str("<item/>");
    }
    doc.push_str("</channel></rss>");
    let feed = feeds::parse(doc.as_bytes(), &Hints::default()).unwrap();
    assert_eq!(feed.items.len(), feeds::MAX_ITEMS);
    assert!(feed.warnings.iter().any(|w| w.contains("more than")));
}
