//! The format's features, each checked on a small file.

use sentences::{Context, Sentences};
use serde_json::json;

const YAML: &str = r#"
language: en
intents:
  SetTemperature:
    data:
      - sentences:
          - "set [the] temperature to {temperature} [degrees]"
        metadata:
          source: test
  TurnOn:
    data:
      - sentences:
          - "turn on [the] {device}"
          - "(switch;on) {device}"
        slots:
          done: true
  AddItem:
    data:
      - sentences:
          - "add {item} to [my] list"
  FrontEnd:
    data:
      - sentences:
          - "say hello"
        requires_context:
          front_end: voice
lists:
  temperature:
    range:
      from: 0
      to: 100
  device:
    values:
      - in: "(lamp|light)"
        out: {kind: light, id: 7}
      - "fan"
  item:
    wildcard: true
skip_words:
  - please
"#;

fn s() -> Sentences {
    let mut s = Sentences::new();
    s.add_yaml("test.yaml", YAML).unwrap();
    s
}

#[test]
fn range_values_are_integers_when_whole_and_numbers_when_not() {
    let mut s = Sentences::new();
    s.add_yaml(
        "r.yaml",
        r#"
language: en
intents:
  T:
    data:
      - sentences:
          - "whole {n}"
          - "half {h}"
          - "scaled {m}"
lists:
  n:
    range: {from: 0, to: 10000}
  h:
    range: {from: 0, to: 10, fractions: halves}
  m:
    range: {from: 0, to: 100, multiplier: 0.5}
"#,
    )
    .unwrap();
    let ctx = Context::new();
    let slot = |text: &str, name: &str| s.match_best(text, &ctx).unwrap().slots[name].to_string();
    assert_eq!(slot("whole 3", "n"), "3");
    assert_eq!(slot("whole three", "n"), "3");
    assert_eq!(
        slot("whole nine thousand nine hundred ninety-nine", "n"),
        "9999"
    );
    assert_eq!(slot("half 2.5", "h"), "2.5");
    assert_eq!(slot("half 2,5", "h"), "2.5");
    assert_eq!(slot("half 2", "h"), "2");
    assert_eq!(slot("scaled 3", "m"), "1.5");
    assert_eq!(slot("scaled four", "m"), "2");
}

#[test]
fn numbers_as_digits_and_words_in_english_and_russian() {
    let s = s();
    let ctx = Context::new();
    let m = s
        .match_best("Set the temperature to 21 degrees.", &ctx)
        .unwrap();
    assert_eq!(m.slots["temperature"], json!(21));
    assert_eq!(m.metadata, Some(json!({"source": "test"})));
    let m = s.match_best("set temperature to twenty one", &ctx).unwrap();
    assert_eq!(m.slots["temperature"], json!(21));
    assert!(s.match_best("set temperature to 101", &ctx).is_none());

    let mut ru = Sentences::new();
    ru.add_yaml(
        "ru.yaml",
        "language: ru\nintents:\n  T:\n    data:\n      - sentences:\n          - \"поставь {n} градусов\"\n\
         lists:\n  n:\n    range:\n      from: 0\n      to: 100\n",
    )
    .unwrap();
    let m = ru
        .match_best("Поставь двадцать один градусов", &ctx)
        .unwrap();
    assert_eq!(m.slots["n"], json!(21));
}

#[test]
fn out_values_fixed_slots_permutations_skip_words_and_wildcards() {
    let s = s();
    let ctx = Context::new();
    let m = s.match_best("please turn on the lamp", &ctx).unwrap();
    assert_eq!(m.intent, "TurnOn");
    assert_eq!(m.slots["device"], json!({"kind": "light", "id": 7}));
    assert_eq!(m.slots["done"], json!(true));
    assert_eq!(m.template.at.line, 13);
    let m = s.match_best("on switch fan", &ctx).unwrap();
    assert_eq!(m.slots["device"], json!("fan"));
    let m = s.match_best("add oat milk to my list", &ctx).unwrap();
    assert_eq!(m.slots["item"], json!("oat milk"));
    assert_eq!((m.wildcards, m.wildcard_chars), (1, 8));
}

#[test]
fn context_from_the_caller() {
    let s = s();
    assert!(s.match_best("say hello", &Context::new()).is_none());
    let m = s.match_best("say hello", &Context::new().with("front_end", "voice"));
    assert_eq!(m.unwrap().intent, "FrontEnd");
    assert!(s
        .match_best("say hello", &Context::new().with("front_end", "page"))
        .is_none());
}

#[test]
fn templates_are_listed_with_their_file() {
    let s = s();
    let t = s.templates("TurnOn");
    assert_eq!(t.len(), 2);
    assert_eq!(t[0].text, "turn on [the] {device}");
    assert_eq!(t[0].at.to_string(), "test.yaml:13:13");
}

#[test]
fn a_stem_list_matches_word_forms_through_snowball() {
    let mut ru = Sentences::new();
    ru.add_yaml(
        "ru.yaml",
        r#"
language: ru
intents:
  Weather:
    data:
      - sentences:
          - "погода в {city}"
          - "время в {exact}"
lists:
  city:
    stem: true
    values:
      - "Лондон"
      - in: "нижний новгород"
        out: "Nizhny Novgorod"
  exact:
    values:
      - "лондон"
"#,
    )
    .unwrap();
    let ctx = Context::new();
    let city = |text: &str| ru.match_best(text, &ctx).map(|m| m.slots["city"].clone());
    assert_eq!(city("погода в лондоне"), Some(json!("Лондон")));
    assert_eq!(city("Погода в Лондоне?"), Some(json!("Лондон")));
    assert_eq!(city("погода в лондон"), Some(json!("Лондон")));
    assert_eq!(
        city("погода в нижнем новгороде"),
        Some(json!("Nizhny Novgorod"))
    );
    // Another word, not a form of the value's.
    assert_eq!(city("погода в лондонский"), None);
    assert_eq!(city("погода в лондоне сегодня"), None);
    // Without `stem`, only the value as written.
    assert!(ru.match_best("время в лондоне", &ctx).is_none());
    assert!(ru.match_best("время в лондон", &ctx).is_some());

    let mut en = Sentences::new();
    en.add_yaml(
        "en.yaml",
        "language: en\nintents:\n  Feed:\n    data:\n      - sentences:\n          - \"feed the {pet}\"\n\
         lists:\n  pet:\n    stem: true\n    values:\n      - cat\n      - guinea pig\n",
    )
    .unwrap();
    let pet = |text: &str| en.match_best(text, &ctx).map(|m| m.slots["pet"].clone());
    assert_eq!(pet("feed the cats"), Some(json!("cat")));
    assert_eq!(pet("feed the guinea pigs"), Some(json!("guinea pig")));
    assert_eq!(pet("feed the dogs"), None);
}

#[test]
fn files_added_at_once_match_as_files_added_one_by_one() {
    let a =
        "language: en\nintents:\n  A:\n    data:\n      - sentences:\n          - \"set {n}\"\n\
             lists:\n  n:\n    range:\n      from: 0\n      to: 100\n";
    let b = "language: en\nintents:\n  B:\n    data:\n      - sentences:\n          - \"feed the {pet}\"\n\
             lists:\n  pet:\n    values:\n      - cat\n";
    let mut one = Sentences::new();
    one.add_yaml("a.yaml", a).unwrap();
    one.add_yaml("b.yaml", b).unwrap();
    let mut all = Sentences::new();
    all.add_yaml_files(&[("a.yaml", a), ("b.yaml", b)]).unwrap();
    let ctx = Context::new();
    for text in ["set twenty one", "set 7", "feed the cat", "feed the dog"] {
        assert_eq!(
            one.match_best(text, &ctx),
            all.match_best(text, &ctx),
            "{text}"
        );
    }
    // An error names its file, and changes nothing.
    let err = all
        .add_yaml_files(&[("c.yaml", "intents: [")])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("c.yaml:"), "{err}");
    assert_eq!(all.intents(), ["A", "B"]);
}
