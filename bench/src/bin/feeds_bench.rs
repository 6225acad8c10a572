//! `feeds-bench`: the Rust side of the P-4 feed parsing benchmark (`bench/p4.py`, run by
//! `bench/run`; see BENCHMARKS.md).
//!
//! - `corpus DIR [--smoke]`: writes the corpus of `maven_bench::feed_corpus` (the same bytes as
//!   the criterion bench `feeds_parse`) to DIR, one folder per input, and `DIR/manifest.json`
//!   (`{"inputs": [{"name", "bytes", "files"}]}`), so every peer parses identical files. With
//!   `--smoke`, only the 10 KiB sizes and the fixtures.
//! - `time DIR PEER INPUT [--min-secs S]`: reads the input's files into memory, parses them once
//!   untimed, then parses them in passes until at least S seconds (default 0.5) have gone by, and
//!   prints one JSON line: `{"peer", "input", "bytes", "passes", "secs", "mib_s", "items"}`
//!   (items: entries found in one pass). PEER is `maven` (parse-only), `maven-text` (with plain
//!   text), `feed-rs` or `feed-rs-text` (feed-rs followed by Maven's `html_to_text`).
//! - `count DIR PEER INPUT N`: N untimed passes and the same JSON line without timing, for an
//!   instruction count under `valgrind` (N = 0 gives the baseline of reading the files).

#![allow(
    clippy::disallowed_macros,
    reason = "a benchmark prints its measurements"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use maven_bench::feed_corpus;
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn write_corpus(dir: &Path, smoke: bool) -> Res<()> {
    let mut inputs = feed_corpus::generated(if smoke { 1 } else { feed_corpus::SIZES.len() });
    inputs.push(feed_corpus::fixtures());
    let mut manifest = Vec::new();
    for input in &inputs {
        let sub = dir.join(&input.name);
        std::fs::create_dir_all(&sub).map_err(|e| format!("create {}: {e}", sub.display()))?;
        for (file, bytes) in &input.docs {
            let path = sub.join(file);
            std::fs::write(&path, bytes).map_err(|e| format!("write {}: {e}", path.display()))?;
        }
        let files: Vec<&str> = input.docs.iter().map(|(f, _)| f.as_str()).collect();
        manifest.push(json!({"name": input.name, "bytes": input.bytes(), "files": files}));
    }
    let path = dir.join("manifest.json");
    std::fs::write(&path, json!({ "inputs": manifest }).to_string())
        .map_err(|e| format!("write {}: {e}", path.display()))?;
    eprintln!(
        "feeds-bench: wrote {} inputs to {}",
        inputs.len(),
        dir.display()
    );
    Ok(())
}

/// The input's files, read into memory in manifest order.
fn load(dir: &Path, input: &str) -> Res<Vec<Vec<u8>>> {
    let path = dir.join("manifest.json");
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
    let manifest: Value = serde_json::from_str(&text)?;
    let entry = manifest["inputs"]
        .as_array()
        .and_then(|a| a.iter().find(|i| i["name"] == input))
        .ok_or_else(|| format!("no input {input:?} in {}", path.display()))?;
    let files = entry["files"]
        .as_array()
        .ok_or_else(|| format!("input {input:?} has no file list"))?;
    let mut docs = Vec::new();
    for f in files {
        let name = f.as_str().ok_or("a file name is not a string")?;
        let p: PathBuf = dir.join(input).join(name);
        docs.push(std::fs::read(&p).map_err(|e| format!("read {}: {e}", p.display()))?);
    }
    Ok(docs)
}

fn peer_fn(peer: &str) -> Res<impl Fn(&[u8]) -> usize> {
    let (rust_fn, text): (feed_corpus::ParseFn, bool) = match peer {
        "maven" => (feed_corpus::maven, false),
        "maven-text" => (feed_corpus::maven, true),
        "feed-rs" => (feed_corpus::feed_rs, false),
        "feed-rs-text" => (feed_corpus::feed_rs, true),
        other => {
            return Err(format!(
                "unknown peer {other:?} (maven, maven-text, feed-rs, feed-rs-text)"
            )
            .into())
        }
    };
    Ok(move |d: &[u8]| rust_fn(black_box(d), text))
}

fn pass(docs: &[Vec<u8>], parse: &impl Fn(&[u8]) -> usize) -> usize {
    docs.iter().map(|d| parse(d)).sum()
}

#[expect(clippy::disallowed_methods, reason = "a benchmark measures wall time")]
fn time(dir: &Path, peer: &str, input: &str, min: Duration) -> Res<()> {
    let parse = peer_fn(peer)?;
    let docs = load(dir, input)?;
    let bytes: usize = docs.iter().map(Vec::len).sum();
    let items = pass(&docs, &parse);
    let mut passes: u64 = 0;
    let start = Instant::now();
    let secs = loop {
        black_box(pass(&docs, &parse));
        passes += 1;
        let e = start.elapsed();
        if e >= min {
            break e.as_secs_f64();
        }
    };
    let mib_s = bytes as f64 * passes as f64 / secs / (1024.0 * 1024.0);
    println!(
        "{}",
        json!({"peer": peer, "input": input, "bytes": bytes, "passes": passes, "secs": secs,
               "mib_s": mib_s, "items": items})
    );
    Ok(())
}

fn count(dir: &Path, peer: &str, input: &str, n: u64) -> Res<()> {
    let parse = peer_fn(peer)?;
    let docs = load(dir, input)?;
    let bytes: usize = docs.iter().map(Vec::len).sum();
    let mut items = 0;
    for _ in 0..n {
        items = black_box(pass(&docs, &parse));
    }
    println!(
        "{}",
        json!({"peer": peer, "input": input, "bytes": bytes, "passes": n, "items": items})
    );
    Ok(())
}

fn run(args: &[String]) -> Res<()> {
    let usage = "usage: feeds-bench corpus DIR [--smoke] | time DIR PEER INPUT [--min-secs S] | count DIR PEER INPUT N";
    match args {
        [sub, dir] if sub == "corpus" => write_corpus(Path::new(dir), false),
        [sub, dir, flag] if sub == "corpus" && flag == "--smoke" => {
            write_corpus(Path::new(dir), true)
        }
        [sub, dir, peer, input] if sub == "time" => {
            time(Path::new(dir), peer, input, Duration::from_millis(500))
        }
        [sub, dir, peer, input, flag, s] if sub == "time" && flag == "--min-secs" => {
            let s: f64 = s
                .parse()
                .map_err(|_| format!("--min-secs {s:?} is not a number"))?;
            let min = Duration::try_from_secs_f64(s)
                .map_err(|_| format!("--min-secs {s} is out of range"))?;
            time(Path::new(dir), peer, input, min)
        }
        [sub, dir, peer, input, n] if sub == "count" => {
            let n: u64 = n.parse().map_err(|_| format!("N {n:?} is not a count"))?;
            count(Path::new(dir), peer, input, n)
        }
        _ => Err(usage.into()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("feeds-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
