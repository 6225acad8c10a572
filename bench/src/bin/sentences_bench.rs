//! `sentences-bench CASES.json ROUNDS`: the `sentences` matcher on the cases
//! `testenv/hassil_peer.py sample` writes (Home Assistant's data file, its run-time lists, the
//! sampled sentences), each matched ROUNDS times; prints `{"times": [seconds, …], "agree": N}`
//! for `bench/sentences.py`, which runs hassil on the same cases beside it.

#![allow(
    clippy::disallowed_macros,
    reason = "a benchmark prints its measurements"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "a benchmark measures wall time with the standard clock"
)]

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(cases), Some(rounds)) = (args.get(1), args.get(2)) else {
        return Err("usage: sentences-bench CASES.json ROUNDS".into());
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
