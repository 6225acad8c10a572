//! Feed parsing throughput, Maven's `feeds` against the `feed-rs` crate on the same inputs in the
//! same run (see BENCHMARKS.md). `bench/run` measures the same corpus with Python `feedparser`
//! as a third peer (`bench/p4.py`); this bench is the quick Rust-only view of it.
//!
//! Inputs: `maven_bench::feed_corpus::full()` — seeded generated RSS 2.0 and Atom 1.0 feeds from
//! 10 KiB to 2 MiB plus the feeds crate's fixtures that feed-rs accepts without panicking.
//!
//! Groups: `parse` is parse-only (`feeds::parse_with` without plain text; `feed_rs::parser::parse`);
//! `parse_text` adds a plain-text rendering of every item's summary and content (`feeds::parse`,
//! which fills `summary_text`/`content_text`; feed-rs followed by `feeds::html_to_text` on its
//! title, summary and content, since it has no renderer of its own).

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use maven_bench::feed_corpus::{self, Input};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let inputs = feed_corpus::full();
    for (mode, text) in [("parse", false), ("parse_text", true)] {
        let mut g = c.benchmark_group(format!("feeds_{mode}"));
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        g.sample_size(20);
        for input in &inputs {
            g.throughput(Throughput::Bytes(input.bytes() as u64));
            let peers: [(&str, feed_corpus::ParseFn); 2] = [
                ("maven", feed_corpus::maven),
                ("feed-rs", feed_corpus::feed_rs),
            ];
            for (peer, parse) in peers {
                g.bench_with_input(
                    BenchmarkId::new(peer, &input.name),
                    input,
                    |b, input: &Input| {
                        b.iter(|| {
                            input
                                .docs
                                .iter()
                                .map(|(_, d)| parse(black_box(d), text))
                                .sum::<usize>()
                        })
                    },
                );
            }
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
