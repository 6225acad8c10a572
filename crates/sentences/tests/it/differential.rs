//! Agreement with hassil 3.12.1 on Home Assistant's own sentence data (home-assistant-intents
//! 2026.10.27), English and Russian.
//!
//! `testenv/hassil_peer.py sample LANG 2 1` samples with hassil's own sampler: for every
//! template of every intent, the first 300 expansions, 2 of them picked with
//! `random.Random(1)` and Python's hash seed 1 (1,722 English and 1,398 Russian sentences;
//! `HASSIL_SAMPLE_SEED=N` samples with seed N instead, `HASSIL_SAMPLE_PER=K` K per template),
//! and answers each with `recognize_best` (no context). The same JSON data and the same
//! run-time lists (`area`, `name`, `floor`) are loaded here; intent and slots must agree on
//! every sentence, including those hassil itself does not recognise.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn testenv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testenv")
}

/// The Python of the sentences venv, which must exist (a test peer).
fn python() -> PathBuf {
    let p = testenv().join(".venv-sentences/bin/python");
    assert!(
        p.exists(),
        "test peer missing: {} does not exist; run scripts/install-test-peers.sh",
        p.display()
    );
    p
}

/// Numbers compare by value (hassil gives 50.0 for digits, 50 for words).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn agree(lang: &str) {
    let out = Command::new(python())
        .arg(testenv().join("hassil_peer.py"))
        .args(["sample", lang])
        .arg(std::env::var("HASSIL_SAMPLE_PER").unwrap_or_else(|_| "2".to_owned()))
        .arg(std::env::var("HASSIL_SAMPLE_SEED").unwrap_or_else(|_| "1".to_owned()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(peer["data"].as_str().unwrap()).unwrap())
            .unwrap();
    let mut s = sentences::Sentences::from_json(&format!("{lang}.json"), &data).unwrap();
    for (name, values) in peer["lists"].as_object().unwrap() {
        let values: Vec<String> = values
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        s.set_list(name, &values).unwrap();
    }
    let cases = peer["cases"].as_array().unwrap();
    assert!(cases.len() > 1000, "{} cases", cases.len());
    let ctx = sentences::Context::new();
    let mut wrong = Vec::new();
    for c in cases {
        let text = c["text"].as_str().unwrap();
        let got = s.match_best(text, &ctx);
        let ok = match (&got, c["intent"].as_str()) {
            (None, None) => true,
            (Some(m), Some(intent)) => {
                let want = c["slots"].as_object().unwrap();
                m.intent == intent
                    && m.slots.len() == want.len()
                    && want
                        .iter()
                        .all(|(k, v)| m.slots.get(k).is_some_and(|g| same(g, v)))
            }
            _ => false,
        };
        if !ok {
            wrong.push(format!(
                "{text:?}: hassil {} {}, ours {:?}",
                c["intent"],
                c["slots"],
                got.map(|m| (m.intent, m.slots, m.template.text))
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{lang}: {} of {} disagree:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

#[test]
fn agrees_with_hassil_on_home_assistant_english() {
    agree("en");
}

#[test]
fn agrees_with_hassil_on_home_assistant_russian() {
    agree("ru");
}
