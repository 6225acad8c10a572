//! Tests of spoken turns: their sentences in Russian are test inputs, kept out of the code.

use super::*;

#[test]
fn transcripts_become_the_words_said() {
    for (said, want) in [
        ("List tasks in box.", "list tasks in box"),
        ("To do, list tasks Inbox!", "to do list tasks inbox"),
        ("Go forward 10 meters.", "go forward 10 meters"),
        ("Mark task three done.", "mark task 3 done"),
        ("Mark task twenty-one done", "mark task 21 done"),
        ("mark task twenty one done", "mark task 21 done"),
        ("Отметь задачу двадцать три.", "отметь задачу 23"),
        ("Что нового в лентах?", "что нового в лентах"),
        ("Yes, orange.", "yes orange"),
        ("Да, апельсин!", "да апельсин"),
        ("It's «quoted» — text…", "it's quoted text"),
        ("Ёлка", "елка"),
    ] {
        assert_eq!(normalise(said), want, "{said}");
    }
}

#[test]
fn the_lists_are_as_large_as_stated_and_hold_only_plain_distinct_words() {
    assert_eq!(list(Lang::En).len(), WORDS_EN_COUNT);
    assert_eq!(list(Lang::Ru).len(), WORDS_RU_COUNT);
    assert_eq!(all_words().len(), WORDS_EN_COUNT + WORDS_RU_COUNT);
    for w in list(Lang::En).iter().chain(list(Lang::Ru)) {
        // A word is read back as itself: no number word (made digits), no yes or no.
        assert_eq!(normalise(w), *w, "{w}");
        assert!(
            !crate::phrases::spoken_yes(w) && crate::rules::yes_no(w).is_none(),
            "{w}"
        );
    }
}

#[test]
fn only_yes_and_the_word_with_little_else_confirms() {
    use Heard::*;
    for (said, want) in [
        // As Whisper and other recognisers write it.
        ("Yes, orange.", Confirmed),
        ("Yes. Orange!", Confirmed),
        ("yes orange", Confirmed),
        ("Okay, yes, orange please.", Confirmed),
        ("Yeah, orange.", Confirmed),
        ("Да, апельсин!", Confirmed),
        ("Да. Апельсин.", Confirmed),
        // Not the form.
        ("Orange.", NotAlone),
        ("Orange, yes.", NotAlone),
        ("Yes, I think it is orange.", NotAlone),
        // Another word of either list ends the question.
        ("Yes, orange, abandon.", WrongWord),
        ("Yes, abandon.", WrongWord),
        ("Да, абзац.", WrongWord),
        // Nothing of the list.
        ("Yes.", PlainYes),
        ("Да", PlainYes),
        ("What's new in my feeds?", Other),
    ] {
        let word = if said.contains('а') || said.contains('Д') {
            "апельсин"
        } else {
            "orange"
        };
        assert_eq!(hear(said, word), want, "{said}");
    }
}

#[test]
fn every_word_at_once_confirms_nothing() {
    for lang in [Lang::En, Lang::Ru] {
        let word = one_time_word(lang);
        let all = list(lang).join(" ");
        assert_eq!(hear(&all, word), Heard::WrongWord);
        assert_eq!(hear(&format!("yes {all}"), word), Heard::WrongWord);
        assert_eq!(hear(&format!("да {all}"), word), Heard::WrongWord);
    }
}

#[test]
fn a_question_is_read_with_every_argument_or_not_at_all() {
    let named = |v: serde_json::Value| match v {
        Value::Object(m) => allowlist::Args::Named(m),
        _ => unreachable!(),
    };
    let args = named(serde_json::json!({
        "to": "attacker@evil.example",
        "body": "see https://mom.example/x",
        "count": 3
    }));
    assert_eq!(
        spoken_arguments(&args),
        Ok(Some(
            "to: attacker@evil.example; body: see https://mom.example/x; count: 3".to_owned()
        ))
    );
    assert_eq!(
        spoken_arguments(&allowlist::Args::Tail("3".into())),
        Ok(Some("3".to_owned()))
    );
    assert_eq!(
        spoken_arguments(&allowlist::Args::Tail(String::new())),
        Ok(None)
    );
    let long = "x".repeat(MAX_SPOKEN_VALUE + 1);
    for (v, want) in [
        (
            serde_json::json!({"body": long}),
            Unspeakable::TooLong {
                name: "body".into(),
                chars: MAX_SPOKEN_VALUE + 1,
            },
        ),
        (
            serde_json::json!({"a": "x".repeat(80), "b": "y".repeat(80), "c": "z".repeat(81)}),
            Unspeakable::TooLong {
                name: "c".into(),
                chars: 81,
            },
        ),
        (
            serde_json::json!({"a": "x".repeat(80), "b": "y".repeat(80), "c": "z".repeat(80), "d": "w"}),
            Unspeakable::TooMuch { chars: 241 },
        ),
        (
            serde_json::json!({"to": ["a", "b"]}),
            Unspeakable::Nested { name: "to".into() },
        ),
        (
            serde_json::json!({"body": "hi\u{e0049}\u{e0067}"}),
            Unspeakable::Invisible {
                name: "body".into(),
                count: 2,
            },
        ),
        (
            serde_json::json!({"q": "rm -rf $HOME"}),
            Unspeakable::Strange {
                name: "q".into(),
                c: '$',
            },
        ),
        (
            serde_json::json!({"to": "pаypal.example"}),
            Unspeakable::Mixed { name: "to".into() },
        ),
        (
            serde_json::json!({"to": "αβγ"}),
            Unspeakable::Strange {
                name: "to".into(),
                c: 'α',
            },
        ),
    ] {
        assert_eq!(spoken_arguments(&named(v.clone())), Err(want), "{v}");
    }
}

#[test]
fn a_one_time_word_is_drawn_from_its_language() {
    for lang in [Lang::En, Lang::Ru] {
        let w = one_time_word(lang);
        assert!(list(lang).contains(&w));
        assert_eq!(hear(&format!("yes {w}"), w), Heard::Confirmed);
    }
}
