//! Tests of the phrases: every language has its words, and no Cyrillic text is written
//! anywhere in the crate's code but in the Russian phrases.

use std::path::{Path, PathBuf};

use super::*;

/// Whether `c` is a Cyrillic letter or mark (every Unicode block of the script).
fn cyrillic(c: char) -> bool {
    matches!(c,
        '\u{0400}'..='\u{052F}'
        | '\u{1C80}'..='\u{1C8F}'
        | '\u{2DE0}'..='\u{2DFF}'
        | '\u{A640}'..='\u{A69F}'
        | '\u{1E030}'..='\u{1E08F}')
}

/// Every `.rs` file under `dir`, as paths relative to `root`.
fn sources(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

#[test]
fn no_cyrillic_literal_outside_the_russian_phrases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    // The Russian phrases, and the tests' own files (their inputs are Russian sentences).
    let exempt = |f: &Path| f == Path::new("phrases/ru.rs") || f.starts_with("tests");
    let mut found = Vec::new();
    let mut checked = 0;
    for f in files.iter().filter(|f| !exempt(f)) {
        checked += 1;
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.chars().any(cyrillic) {
                found.push(format!("src/{}:{}: {}", f.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "Cyrillic outside src/phrases/ru.rs (a phrase belongs there):\n{}",
        found.join("\n")
    );
    // It read the code, and it would see Cyrillic where it is.
    assert!(checked >= 10, "only {checked} files read");
    assert!(files.iter().any(|f| f == Path::new("lib.rs")));
    let ru = std::fs::read_to_string(root.join("phrases/ru.rs")).unwrap();
    assert!(ru.chars().any(cyrillic));
}

#[test]
fn each_language_says_every_phrase_in_its_own_words() {
    for (en, ru) in [
        (cancelled(Lang::En, "wipe"), cancelled(Lang::Ru, "wipe")),
        (nothing_to_confirm(Lang::En), nothing_to_confirm(Lang::Ru)),
        (help(Lang::En), help(Lang::Ru)),
        (
            link(Lang::En, Some("example.org")),
            link(Lang::Ru, Some("example.org")),
        ),
    ] {
        assert!(!en.chars().any(cyrillic), "{en}");
        assert!(ru.chars().any(cyrillic), "{ru}");
    }
    assert_eq!(cancelled(Lang::En, "wipe"), en::cancelled("wipe"));
    assert_eq!(cancelled(Lang::Ru, "wipe"), ru::cancelled("wipe"));
}

#[test]
fn the_words_heard_are_each_languages() {
    assert_eq!(yes_no("yes"), Some(true));
    assert_eq!(yes_no(ru::YES[0]), Some(true));
    assert_eq!(yes_no(ru::NO[0]), Some(false));
    assert_eq!(yes_no("cancel"), Some(false));
    assert_eq!(yes_no("maybe"), None);
    assert!(starts_as_no("don't do it"));
    assert!(starts_as_no(&format!("{}x", ru::NO_STARTS[0])));
    assert_eq!(unit("nineteen"), Some(19));
    assert_eq!(unit(ru::UNIT_FORMS[2].0), Some(2));
    assert_eq!(tens("ninety"), Some(9));
    assert_eq!(tens(""), None);
    assert_eq!(boolean("yes"), Some(true));
    assert_eq!(boolean(ru::FALSE[0]), Some(false));
    assert_eq!(fold(&ru::FOLD[0].0.to_string()), ru::FOLD[0].1.to_string());
}
