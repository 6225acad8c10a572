//! Feed parsing throughput, Maven's `feeds` against the `feed-rs` crate on the same inputs in the
//! same run (see BENCHMARKS.md).
//!
//! Inputs: a seeded, deterministic generator of RSS 2.0 and Atom 1.0 feeds from 10 KB to 2 MiB
//! (HTML descriptions with entities, CDATA content, dates with zone names, enclosures), plus the
//! feeds crate's own fixtures that feed-rs accepts without panicking.
//!
//! Groups: `parse` is parse-only (`feeds::parse_with` without plain text; `feed_rs::parser::parse`);
//! `parse_text` adds a plain-text rendering of every item's summary and content (`feeds::parse`,
//! which fills `summary_text`/`content_text`; feed-rs followed by `feeds::html_to_text` on its
//! title, summary and content, since it has no renderer of its own).

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

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

fn rss(seed: u64, target: usize) -> Vec<u8> {
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

fn atom(seed: u64, target: usize) -> Vec<u8> {
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

/// The fixtures feed-rs parses without panicking (it panics on some encodings); each is parsed
/// in turn and the throughput counts their total size.
fn fixture_set() -> Vec<Vec<u8>> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/feeds/tests/fixtures"
    );
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let set = paths
        .into_iter()
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "xml" || e == "rdf" || e == "json")
        })
        .filter_map(|p| std::fs::read(p).ok())
        .filter(|b| {
            std::panic::catch_unwind(|| feed_rs::parser::parse(&b[..]).is_ok()).unwrap_or(false)
        })
        .collect();
    std::panic::set_hook(prev);
    set
}

fn ours(input: &[u8], text: bool) -> usize {
    let options = feeds::Options { plain_text: text };
    match feeds::parse_with(input, &feeds::Hints::default(), &options) {
        Ok(f) => f.items.len(),
        Err(_) => 0,
    }
}

fn theirs(input: &[u8], text: bool) -> usize {
    match feed_rs::parser::parse(input) {
        Ok(f) => {
            if text {
                let mut n = 0;
                for e in &f.entries {
                    if let Some(s) = &e.summary {
                        n += feeds::html_to_text(&s.content).len();
                    }
                    if let Some(b) = e.content.as_ref().and_then(|c| c.body.as_ref()) {
                        n += feeds::html_to_text(b).len();
                    }
                    if let Some(t) = &e.title {
                        n += feeds::html_to_text(&t.content).len();
                    }
                }
                n
            } else {
                f.entries.len()
            }
        }
        Err(_) => 0,
    }
}

fn bench(c: &mut Criterion) {
    let mut inputs: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
    for (i, size) in [10 << 10, 100 << 10, 500 << 10, 2 << 20]
        .into_iter()
        .enumerate()
    {
        let kb = size >> 10;
        inputs.push((format!("rss_{kb}KiB"), vec![rss(0x5eed + i as u64, size)]));
        inputs.push((format!("atom_{kb}KiB"), vec![atom(0xa70e + i as u64, size)]));
    }
    inputs.push(("fixtures".into(), fixture_set()));
    for (mode, text) in [("parse", false), ("parse_text", true)] {
        let mut g = c.benchmark_group(format!("feeds_{mode}"));
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        g.sample_size(20);
        for (name, docs) in &inputs {
            let bytes: usize = docs.iter().map(Vec::len).sum();
            g.throughput(Throughput::Bytes(bytes as u64));
            g.bench_with_input(BenchmarkId::new("maven", name), docs, |b, docs| {
                b.iter(|| docs.iter().map(|d| ours(black_box(d), text)).sum::<usize>())
            });
            g.bench_with_input(BenchmarkId::new("feed-rs", name), docs, |b, docs| {
                b.iter(|| {
                    docs.iter()
                        .map(|d| theirs(black_box(d), text))
                        .sum::<usize>()
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
