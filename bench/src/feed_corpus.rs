//! The P-4 feed corpus and the Rust parse calls measured on it, shared by the criterion bench
//! (`benches/feeds_parse.rs`) and `feeds-bench` (the Rust side of `bench/p4.py`, which writes the
//! same bytes to disk for Python `feedparser`).
//!
//! The corpus is a seeded, deterministic generator of RSS 2.0 and Atom 1.0 feeds (HTML
//! descriptions with entities, CDATA content, dates with zone names, enclosures) at the sizes of
//! [`SIZES`], plus the feeds crate's own fixtures that feed-rs accepts without panicking.

use std::hint::black_box;
use std::path::Path;

/// One measured input: a name (`rss_10KiB`, `fixtures`, ...) and the documents parsed in turn
/// for one pass over it.
#[derive(Clone, Debug)]
pub struct Input {
    /// The row name.
    pub name: String,
    /// The documents, each a file name and its bytes.
    pub docs: Vec<(String, Vec<u8>)>,
}

impl Input {
    /// Total size of one pass.
    pub fn bytes(&self) -> usize {
        self.docs.iter().map(|(_, d)| d.len()).sum()
    }
}

/// The generated sizes of the full corpus: 10 KiB, 100 KiB, 500 KiB and 2 MiB.
pub const SIZES: [usize; 4] = [10 << 10, 100 << 10, 500 << 10, 2 << 20];

/// xorshift64*: deterministic across platforms and runs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const WORDS: &[&str] = &[
    "feed",
    "parser",
    "daemon",
    "новости",
    "наука",
    "café",
    "résumé",
    "tolerant",
    "entity",
    "encoding",
    "window",
    "server",
    "client",
    "release",
    "notes",
    "über",
    "naïve",
    "stream",
    "item",
    "channel",
    "atom",
    "update",
    "network",
    "погода",
    "москва",
    "the",
    "and",
    "of",
];
const ZONES: &[&str] = &[
    "GMT", "+0000", "EST", "PDT", "CEST", "MSK", "+0300", "-0500",
];
const MONTHS: &[&str] = &[
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn sentence(r: &mut Rng, n: usize) -> String {
    (0..n).map(|_| r.pick(WORDS)).collect::<Vec<_>>().join(" ")
}

fn html_paragraphs(r: &mut Rng, paras: usize) -> String {
    let mut s = String::new();
    for _ in 0..paras {
        s.push_str("<p>");
        s.push_str(&sentence(r, 12));
        s.push_str(" <a href=\"/post/");
        s.push_str(&r.below(10_000).to_string());
        s.push_str("\">link</a> &amp; <b>");
        s.push_str(&sentence(r, 3));
        s.push_str("</b>&nbsp;&mdash; ");
        s.push_str(&sentence(r, 8));
        s.push_str("&hellip;</p>\n");
    }
    s
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// An RSS 2.0 feed of at least `target` bytes (it ends after the item that reaches it).
pub fn rss(seed: u64, target: usize) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rss version=\"2.0\" xmlns:content=\"http://purl.org/rss/1.0/modules/content/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n<channel>\n<title>Generated feed</title>\n<link>https://example.com/</link>\n<description>A generated feed</description>\n",
    );
    let mut i = 0;
    while s.len() < target {
        i += 1;
        let day = 1 + r.below(28);
        let month = r.pick(MONTHS);
        let zone = r.pick(ZONES);
        s.push_str(&format!(
            "<item>\n<title>{} &amp; {}</title>\n<link>https://example.com/posts/{i}</link>\n<guid isPermaLink=\"false\">urn:gen:{seed}:{i}</guid>\n<pubDate>Mon, {day:02} {month} 2025 {:02}:{:02}:00 {zone}</pubDate>\n<dc:creator>{}</dc:creator>\n<category>{}</category>\n<description>{}</description>\n<content:encoded><![CDATA[{}]]></content:encoded>\n",
            sentence(&mut r, 6),
            sentence(&mut r, 2),
            r.below(24),
            r.below(60),
            sentence(&mut r, 2),
            r.pick(WORDS),
            escape(&html_paragraphs(&mut r, 1)),
            {
                let n = 1 + r.below(6);
                html_paragraphs(&mut r, n)
            },
        ));
        if r.below(4) == 0 {
            s.push_str(&format!(
                "<enclosure url=\"https://cdn.example.com/{i}.mp3\" length=\"{}\" type=\"audio/mpeg\"/>\n",
                r.below(100_000_000)
            ));
        }
        s.push_str("</item>\n");
    }
    s.push_str("</channel>\n</rss>\n");
    s.into_bytes()
}

/// An Atom 1.0 feed of at least `target` bytes (it ends after the entry that reaches it).
pub fn atom(seed: u64, target: usize) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:base=\"https://example.org/\">\n<title type=\"text\">Generated Atom</title>\n<id>urn:gen:atom</id>\n<updated>2025-05-12T10:00:00Z</updated>\n<link href=\"/\"/>\n",
    );
    let mut i = 0;
    while s.len() < target {
        i += 1;
        s.push_str(&format!(
            "<entry>\n<title type=\"html\">{}</title>\n<id>urn:gen:{seed}:{i}</id>\n<link href=\"/entries/{i}\"/>\n<published>2025-{:02}-{:02}T{:02}:00:00+03:00</published>\n<updated>2025-05-12T10:00:00Z</updated>\n<author><name>{}</name></author>\n<summary type=\"text\">{}</summary>\n<content type=\"html\">{}</content>\n</entry>\n",
            escape(&sentence(&mut r, 6)),
            1 + r.below(12),
            1 + r.below(28),
            r.below(24),
            sentence(&mut r, 2),
            sentence(&mut r, 20),
            {
                let n = 1 + r.below(6);
                escape(&html_paragraphs(&mut r, n))
            },
        ));
    }
    s.push_str("</feed>\n");
    s.into_bytes()
}

/// The generated inputs: for the k-th size of `SIZES`, `rss_<KiB>KiB` (seed `0x5eed + k`) and
/// `atom_<KiB>KiB` (seed `0xa70e + k`). `count` takes the first sizes only (`--smoke` takes 1).
pub fn generated(count: usize) -> Vec<Input> {
    let mut out = Vec::new();
    for (k, size) in SIZES.into_iter().enumerate().take(count) {
        let kib = size >> 10;
        for (kind, seed, make) in [
            ("rss", 0x5eed, rss as fn(u64, usize) -> Vec<u8>),
            ("atom", 0xa70e, atom),
        ] {
            let name = format!("{kind}_{kib}KiB");
            let doc = make(seed + k as u64, size);
            out.push(Input {
                docs: vec![(format!("{name}.xml"), doc)],
                name,
            });
        }
    }
    out
}

/// The fixtures of `crates/feeds/tests/fixtures` (XML, RDF and JSON feeds, sorted by name) that
/// feed-rs parses without an error or a panic (it panics on some encodings), as one input
/// named `fixtures`.
pub fn fixtures() -> Input {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/feeds/tests/fixtures");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let docs = paths
        .into_iter()
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "xml" || e == "rdf" || e == "json")
        })
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some((name, std::fs::read(&p).ok()?))
        })
        .filter(|(_, b)| {
            std::panic::catch_unwind(|| feed_rs::parser::parse(&b[..]).is_ok()).unwrap_or(false)
        })
        .collect();
    std::panic::set_hook(prev);
    Input {
        name: "fixtures".into(),
        docs,
    }
}

/// The whole corpus: every generated size, then the fixtures.
pub fn full() -> Vec<Input> {
    let mut v = generated(SIZES.len());
    v.push(fixtures());
    v
}

/// A measured parse call: the document and whether to render plain text; returns the number of
/// items found.
pub type ParseFn = fn(&[u8], bool) -> usize;

/// Maven's `feeds`: parse-only (`parse_with` without plain text) or with the plain-text
/// rendering of every summary and content (`plain_text`, what `feeds::parse` does). Returns the
/// number of items (0 for a document it rejects).
pub fn maven(input: &[u8], text: bool) -> usize {
    let options = feeds::Options { plain_text: text };
    match feeds::parse_with(input, &feeds::Hints::default(), &options) {
        Ok(f) => f.items.len(),
        Err(_) => 0,
    }
}

/// The feed-rs crate: parse-only, or followed by `feeds::html_to_text` on every entry's title,
/// summary and content (feed-rs has no renderer of its own). Returns the number of entries
/// (0 for a document it rejects).
pub fn feed_rs(input: &[u8], text: bool) -> usize {
    match feed_rs::parser::parse(input) {
        Ok(f) => {
            if text {
                for e in &f.entries {
                    if let Some(s) = &e.summary {
                        black_box(feeds::html_to_text(&s.content));
                    }
                    if let Some(b) = e.content.as_ref().and_then(|c| c.body.as_ref()) {
                        black_box(feeds::html_to_text(b));
                    }
                    if let Some(t) = &e.title {
                        black_box(feeds::html_to_text(&t.content));
                    }
                }
            }
            f.entries.len()
        }
        Err(_) => 0,
    }
}
