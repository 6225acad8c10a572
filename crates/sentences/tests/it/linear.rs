//! Matching time is linear in the sentence for any templates: adversarial templates (nested
//! optionals, wildcards next to each other, a permutation, a long list of prefixes of each
//! other) against sentences of growing length; the steps per character stay flat.

use sentences::{Context, Sentences};

const YAML: &str = r#"
language: en
intents:
  Adversarial:
    data:
      - sentences:
          - "[[[a] a] a] [[[a] a] a] [[[a] a] a] [[[a] a] a] b"
          - "{w1} {w2} {w3} c"
          - "(a;[a];[a] a;a [a]) d"
          - "{prefix} {prefix} {prefix} e"
lists:
  w1:
    wildcard: true
  w2:
    wildcard: true
  w3:
    wildcard: true
  prefix:
    values:
      - "a"
      - "a a"
      - "a a a"
      - "a a a a"
      - "a a a a a"
"#;

#[test]
fn steps_per_character_stay_flat_on_adversarial_templates() {
    let mut s = Sentences::new();
    s.add_yaml("adversarial.yaml", YAML).unwrap();
    let ctx = Context::new();
    let mut per_char = Vec::new();
    for n in [16usize, 64, 256, 1024, 4096] {
        // "a a a … a" and a wrong ending never matches: the worst case for a backtracker.
        // The ending holds every template's words, so no template is skipped unread.
        let text = format!("{} e d c b x", vec!["a"; n].join(" "));
        let (matches, steps) = s.match_counted(&text, &ctx);
        assert!(matches.is_empty());
        per_char.push(steps as f64 / text.len() as f64);
        println!(
            "{n} words: {steps} steps, {:.1} per character",
            per_char.last().unwrap()
        );
    }
    let first = per_char[1];
    assert!(first > 1.0, "the templates were run: {per_char:?}");
    for &p in &per_char[1..] {
        assert!(p < first * 1.5, "steps per character grew: {per_char:?}");
    }
    // And they do match when the last word is there.
    let (m, _) = s.match_counted(&format!("{} b", ["a"; 12].join(" ")), &ctx);
    assert_eq!(m[0].intent, "Adversarial");
    let (m, _) = s.match_counted("x y z zz c", &ctx);
    assert_eq!(m[0].slots["w1"], "x");
}

const NUMBERS: &str = r#"
language: en
intents:
  Numbers:
    data:
      - sentences:
          - "{n} {n} {n} f"
          - "[{n}] {pet} {pet} g"
lists:
  n:
    range:
      from: 0
      to: 99999
  pet:
    stem: true
    values:
      - "twenty"
      - "twenty twenty"
      - "cat"
"#;

#[test]
fn steps_per_character_stay_flat_through_number_words_and_stems() {
    let mut s = Sentences::new();
    s.add_yaml("numbers.yaml", NUMBERS).unwrap();
    let ctx = Context::new();
    let mut per_char = Vec::new();
    for n in [16usize, 64, 256, 1024] {
        // Every word starts a number and a stemmed value; nothing ever matches.
        let text = format!("{} f g x", vec!["twenty"; n].join(" "));
        let (matches, steps) = s.match_counted(&text, &ctx);
        assert!(matches.is_empty());
        per_char.push(steps as f64 / text.len() as f64);
    }
    let first = per_char[1];
    assert!(first > 1.0, "the templates were run: {per_char:?}");
    for &p in &per_char[1..] {
        assert!(p < first * 1.5, "steps per character grew: {per_char:?}");
    }
    let (m, _) = s.match_counted("twenty one two three f", &ctx);
    assert_eq!(m[0].slots["n"], 3);
    let (m, _) = s.match_counted("cats twenties g", &ctx);
    assert_eq!(m[0].slots["pet"], "twenty");
}
