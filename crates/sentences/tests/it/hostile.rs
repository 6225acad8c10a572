//! Hostile sentence files: each refused with a specific error naming its place, quickly, and
//! without a panic.

use sentences::{Error, Sentences};

fn load(yaml: &str) -> Result<Sentences, Error> {
    let mut s = Sentences::new();
    s.add_yaml("hostile.yaml", yaml).map(|()| s)
}

#[test]
fn broken_yaml_names_line_and_column() {
    let e = load("language: en\nintents:\n  X:\n    data: [\n").unwrap_err();
    let Error::Yaml { at, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(at.file, "hostile.yaml");
    assert!(at.line >= 4, "{e}");
    assert!(e.to_string().starts_with("hostile.yaml:"), "{e}");
}

#[test]
fn anchors_aliases_and_tags_are_refused() {
    let e = load("a: &x [1, 2]\nb: *x\n").unwrap_err();
    assert!(
        matches!(
            e,
            Error::YamlFeature {
                what: "anchors",
                ..
            }
        ),
        "{e}"
    );
    let e = load("a: !!str x\n").unwrap_err();
    assert!(matches!(e, Error::YamlFeature { what: "tags", .. }), "{e}");
    let e = load("a: 1\n---\nb: 2\n").unwrap_err();
    assert!(
        matches!(
            e,
            Error::YamlFeature {
                what: "several documents",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn a_cycle_of_expansion_rules_is_named() {
    let e = load(
        "language: en\nintents:\n  X:\n    data:\n      - sentences:\n          - \"say <a>\"\n\
         expansion_rules:\n  a: \"x <b>\"\n  b: \"y <a>\"\n",
    )
    .unwrap_err();
    let Error::RuleCycle { cycle, at } = &e else {
        panic!("{e}")
    };
    assert_eq!(cycle, "<a> -> <b> -> <a>");
    assert_eq!(at.line, 8, "{e}");
}

#[test]
fn an_exponential_template_is_refused_without_hanging() {
    // Each rule doubles the one before: 2^20 words once inlined.
    let mut rules = String::from("expansion_rules:\n  r0: \"(a|b)\"\n");
    for i in 1..20 {
        rules.push_str(&format!("  r{i}: \"<r{}> <r{}>\"\n", i - 1, i - 1));
    }
    let yaml = format!(
        "language: en\nintents:\n  X:\n    data:\n      - sentences:\n          - \"<r19>\"\n{rules}"
    );
    let e = load(&yaml).unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooLarge {
                max: sentences::MAX_TEMPLATE_SIZE,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.location().line, 6, "{e}");
    // A permutation of many items is refused before it is spelled out.
    let items: Vec<String> = (0..12).map(|i| format!("w{i}")).collect();
    let yaml = format!(
        "language: en\nintents:\n  X:\n    data:\n      - sentences:\n          - \"({})\"\n",
        items.join(";")
    );
    let e = load(&yaml).unwrap_err();
    assert!(e.to_string().contains("a permutation of 12 items"), "{e}");
}

#[test]
fn a_huge_list_and_a_huge_file_are_refused() {
    let values: String = (0..=sentences::MAX_LIST_VALUES)
        .map(|i| format!("      - v{i}\n"))
        .collect();
    let yaml = format!("language: en\nlists:\n  big:\n    values:\n{values}");
    let e = match load(&yaml) {
        Err(e) => e,
        Ok(_) => panic!("a list of {} values loaded", sentences::MAX_LIST_VALUES + 1),
    };
    // The file is over 1 MiB too: that is checked first.
    assert!(matches!(e, Error::FileTooLarge { .. }), "{e}");
    let mut json_values = Vec::new();
    for i in 0..=sentences::MAX_LIST_VALUES {
        json_values.push(serde_json::Value::String(format!("v{i}")));
    }
    let data = serde_json::json!({"language": "en", "lists": {"big": {"values": json_values}}});
    let e = Sentences::from_json("big.json", &data).unwrap_err();
    let Error::ListTooLong { at, list, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(list, "big");
    assert_eq!(at.path, "lists.big");
}

#[test]
fn deep_nesting_is_refused() {
    let t = format!("{}x{}", "(".repeat(33), ")".repeat(33));
    let yaml = format!(
        "language: en\nintents:\n  X:\n    data:\n      - sentences:\n          - \"{t}\"\n"
    );
    let e = load(&yaml).unwrap_err();
    assert!(matches!(e, Error::TooDeep { max: 32, .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "hostile.yaml:6:13: template nests groups deeper than 32"
    );
    // Deep YAML is refused too.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let e = load(&deep).unwrap_err();
    assert!(matches!(e, Error::Shape { .. }), "{e}");
}

#[test]
fn a_broken_template_says_why_and_where() {
    let e = load(
        "language: en\nintents:\n  X:\n    data:\n      - sentences:\n          - \"turn (on\"\n",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "hostile.yaml:6:13: template 'turn (on': no closing ')' (character 9)"
    );
    let e = load(
        "language: en\nintents:\n  X:\n    data:\n      - sentences:\n          - \"<nope>\"\n",
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::MissingRule { rule, .. } if rule == "nope"),
        "{e}"
    );
}
