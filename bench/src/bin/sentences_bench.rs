//! `sentences-bench CASES.json ROUNDS`: the `sentences` matcher on the cases
//! `testenv/hassil_peer.py sample` writes (Home Assistant's data file, its run-time lists, the
//! sampled sentences), each matched ROUNDS times; prints `{"times": [seconds, …], "agree": N}`
//! for `bench/sentences.py`, which runs hassil on the same cases beside it.
//!
//! `sentences-bench --load [FILE.yaml…]`: the time to load sentence files one after the other
//! into one `Sentences` with `add_yaml`, as Maven loads the phrasebook and the owner's files;
//! without files, 14 small files (7 English, 7 Russian), each with two templates and a range of
//! 0 to 10000 said as digits and as words. Prints `{"files": N, "load_ms": …, "batch_ms": …}`
//! (the best of 5; `batch_ms`: the same files given to `add_yaml_files` at once, per language).

#![allow(
    clippy::disallowed_macros,
    reason = "a benchmark prints its measurements"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark measures wall time with the standard clock"
)]

use std::time::Instant;

fn range_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (lang, words) in [("en", ["set", "to"]), ("ru", ["поставь", "на"])] {
        for i in 0..7 {
            let text = format!(
                "language: {lang}\nintents:\n  Act{i}:\n    data:\n      - sentences:\n          \
                 - \"{w0} thing{i} {w1} {{n{i}}}\"\n          - \"{{n{i}}} {w1} thing{i}\"\n\
                 lists:\n  n{i}:\n    range:\n      from: 0\n      to: 10000\n",
                w0 = words[0],
                w1 = words[1],
            );
            out.push((format!("{lang}/r{i}.yaml"), text));
        }
    }
    out
}

fn batch(files: &[(String, String)]) -> Result<f64, Box<dyn std::error::Error>> {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t0 = Instant::now();
        for lang in ["en", "ru"] {
            let mine: Vec<(&str, &str)> = files
                .iter()
                .filter(|(name, _)| name.contains("ru/") == (lang == "ru"))
                .map(|(n, t)| (n.as_str(), t.as_str()))
                .collect();
            sentences::Sentences::new().add_yaml_files(&mine)?;
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    Ok(best * 1000.0)
}

fn load(files: &[(String, String)]) -> Result<f64, Box<dyn std::error::Error>> {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t0 = Instant::now();
        let mut by_lang: Vec<(String, sentences::Sentences)> = Vec::new();
        for (name, text) in files {
            let lang = if name.contains("ru/") { "ru" } else { "en" };
            let i = match by_lang.iter().position(|(l, _)| l == lang) {
                Some(i) => i,
                None => {
                    by_lang.push((lang.to_owned(), sentences::Sentences::new()));
                    by_lang.len() - 1
                }
            };
            by_lang[i].1.add_yaml(name, text)?;
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    Ok(best * 1000.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--load") {
        let files: Vec<(String, String)> = if args.len() > 2 {
            args[2..]
                .iter()
                .map(|p| Ok((p.clone(), std::fs::read_to_string(p)?)))
                .collect::<Result<_, std::io::Error>>()?
        } else {
            range_files()
        };
        let ms = load(&files)?;
        let batch_ms = batch(&files)?;
        println!(
            "{}",
            serde_json::json!({"files": files.len(), "load_ms": ms, "batch_ms": batch_ms})
        );
        return Ok(());
    }
    let (Some(cases), Some(rounds)) = (args.get(1), args.get(2)) else {
        return Err(
            "usage: sentences-bench CASES.json ROUNDS | sentences-bench --load [FILE…]".into(),
        );
    };
    let rounds: usize = rounds.parse()?;
    let peer: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(cases)?)?;
    let data_path = peer["data"].as_str().ok_or("no data path")?;
    let data: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(data_path)?)?;
    let mut s = sentences::Sentences::from_json(data_path, &data)?;
    if let Some(lists) = peer["lists"].as_object() {
        for (name, values) in lists {
            let values: Vec<String> = values
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            s.set_list(name, &values)?;
        }
    }
    let cases = peer["cases"].as_array().ok_or("no cases")?;
    let ctx = sentences::Context::new();
    let mut times = Vec::with_capacity(cases.len() * rounds);
    let mut agree = 0usize;
    for round in 0..rounds {
        for c in cases {
            let text = c["text"].as_str().unwrap_or("");
            let t0 = Instant::now();
            let m = s.match_best(text, &ctx);
            times.push(t0.elapsed().as_secs_f64());
            if round == 0 && m.map(|m| m.intent).as_deref() == c["intent"].as_str() {
                agree += 1;
            }
        }
    }
    println!("{}", serde_json::json!({"times": times, "agree": agree}));
    Ok(())
}
