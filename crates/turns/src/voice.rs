//! Spoken turns: a transcript as recognisers write it made into the words the owner said, and
//! the one-time word a spoken confirmation must carry.
//!
//! A recogniser writes "List tasks in box." for "list tasks inbox", "To do" for "todo", digits
//! for numbers ("Go forward 10 meters."), capitals and a full stop everywhere. [`normalise`]
//! lowercases, drops punctuation, and writes numbers as digits whether they came as digits or
//! as words (English and Russian, up to 99); act names are matched with spaces ignored (the
//! rules router's `match_act`), which takes the recogniser's splits and joins.
//!
//! A spoken question before an act that may write says every argument and ends with a
//! one-time word drawn at random for that question ([`one_time_word`]) from a list of
//! [`WORDS_EN_COUNT`] English or [`WORDS_RU_COUNT`] Russian words (`words/`, the BIP-39 lists):
//! a television, a replayed recording or someone else in the room saying "yes" does not run
//! it. [`hear`] holds the rule an answer keeps to confirm, in the same conversation, within the
//! two minutes:
//!
//! - after [`normalise`], it is a yes ("yes", "yeah", "yep", "да", "ага") and then the word
//!   ("Yes, orange.", "Да, апельсин!"), at most [`MAX_OTHER_WORDS`] other words anywhere
//!   ("okay, yes, orange please");
//! - it names no other word of either list. Saying many words at once is how a recording
//!   would try its luck, so an answer that names another word, or the word with too much
//!   else, ends the question: nothing runs, and the owner asks again for a new word. One guess
//!   per question: a guess is right once in two thousand.
//!
//! A spoken question is read word for word ([`spoken_arguments`]): every argument in the order
//! the screen shows it, nothing shortened. An argument a voice cannot say faithfully — longer
//! than [`MAX_SPOKEN_VALUE`] characters (or all of them past [`MAX_SPOKEN_ARGUMENTS`]), an
//! object or a list, an invisible character, a character outside letters, digits, spaces and
//! `. , : ; ! ? ' - _ / @ + # & % ( )`, letters of a script other than Latin and Cyrillic, or a
//! word that mixes the two (a look-alike) — means the question is not asked by voice at all.

use std::collections::HashSet;
use std::sync::OnceLock;

use rand::seq::SliceRandom as _;
use serde_json::Value;

use crate::answer::Lang;

const WORDS_EN: &str = include_str!("words/en.txt");
const WORDS_RU: &str = include_str!("words/ru.txt");
/// How many English one-time words there are.
pub const WORDS_EN_COUNT: usize = 2019;
/// How many Russian one-time words there are.
pub const WORDS_RU_COUNT: usize = 2036;
/// How many words an answer may hold besides its yes and the one-time word.
pub const MAX_OTHER_WORDS: usize = 2;
/// The longest argument value read aloud, in characters.
pub const MAX_SPOKEN_VALUE: usize = 80;
/// The most characters of argument values one spoken question reads.
pub const MAX_SPOKEN_ARGUMENTS: usize = 240;

const YES: &[&str] = &["yes", "yeah", "yep", "yup", "да", "ага"];

fn list(lang: Lang) -> &'static [&'static str] {
    static EN: OnceLock<Vec<&'static str>> = OnceLock::new();
    static RU: OnceLock<Vec<&'static str>> = OnceLock::new();
    match lang {
        Lang::En => EN.get_or_init(|| WORDS_EN.lines().filter(|w| !w.is_empty()).collect()),
        Lang::Ru => RU.get_or_init(|| WORDS_RU.lines().filter(|w| !w.is_empty()).collect()),
    }
}

/// Every one-time word of both languages.
fn all_words() -> &'static HashSet<&'static str> {
    static ALL: OnceLock<HashSet<&'static str>> = OnceLock::new();
    ALL.get_or_init(|| {
        list(Lang::En)
            .iter()
            .chain(list(Lang::Ru))
            .copied()
            .collect()
    })
}

/// A one-time word for a question asked in `lang`.
pub fn one_time_word(lang: Lang) -> &'static str {
    list(lang)
        .choose(&mut rand::thread_rng())
        .copied()
        .unwrap_or("orange")
}

/// What an answer to a spoken confirmation question is, by the rule above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// A yes with the question's word: it runs.
    Confirmed,
    /// A yes without any word: the question is asked again.
    PlainYes,
    /// Another word of the list: the question ends.
    WrongWord,
    /// The word, but not as "yes WORD" with little else: the question ends.
    NotAlone,
    /// No yes and no word of the list: another turn.
    Other,
}

/// Hears `said` (a transcript) as an answer to a question whose one-time word is `word`.
pub fn hear(said: &str, word: &str) -> Heard {
    let word = normalise(word);
    let said = normalise(said);
    let words: Vec<&str> = said.split(' ').filter(|w| !w.is_empty()).collect();
    let listed = all_words();
    if words.iter().any(|w| *w != word && listed.contains(w)) {
        return Heard::WrongWord;
    }
    let Some(at) = words.iter().position(|w| *w == word) else {
        // A short answer with a yes in it ("yes", "yes please", "да, давай") is a plain yes; a
        // longer sentence is another turn.
        return if words.iter().any(|w| YES.contains(w)) && words.len() <= 1 + MAX_OTHER_WORDS {
            Heard::PlainYes
        } else {
            Heard::Other
        };
    };
    let yes_before = words.iter().take(at).any(|w| YES.contains(w));
    let others = words
        .iter()
        .filter(|w| **w != word && !YES.contains(*w))
        .count();
    if yes_before && others <= MAX_OTHER_WORDS {
        Heard::Confirmed
    } else {
        Heard::NotAlone
    }
}

/// Why a question cannot be asked by voice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unspeakable {
    /// An argument longer than [`MAX_SPOKEN_VALUE`].
    TooLong {
        /// The argument.
        name: String,
        /// Its length in characters.
        chars: usize,
    },
    /// Every argument together longer than [`MAX_SPOKEN_ARGUMENTS`].
    TooMuch {
        /// Their length in characters.
        chars: usize,
    },
    /// An argument that is an object or a list.
    Nested {
        /// The argument.
        name: String,
    },
    /// An argument with invisible characters.
    Invisible {
        /// The argument.
        name: String,
        /// How many.
        count: usize,
    },
    /// An argument with a character a voice would not say as written.
    Strange {
        /// The argument.
        name: String,
        /// The character.
        c: char,
    },
    /// An argument with a word that mixes Latin and Cyrillic letters.
    Mixed {
        /// The argument.
        name: String,
    },
}

impl Unspeakable {
    /// Why, in the owner's language.
    pub fn why(&self, lang: Lang) -> String {
        let ru = lang == Lang::Ru;
        match (self, ru) {
            (Unspeakable::TooLong { name, chars }, false) => format!(
                "{name} is {chars} characters long, more than a voice reads ({MAX_SPOKEN_VALUE})"
            ),
            (Unspeakable::TooLong { name, chars }, true) => format!(
                "в {name} {chars} символов, больше, чем читается вслух ({MAX_SPOKEN_VALUE})"
            ),
            (Unspeakable::TooMuch { chars }, false) => format!(
                "its arguments are {chars} characters long, more than a voice reads ({MAX_SPOKEN_ARGUMENTS})"
            ),
            (Unspeakable::TooMuch { chars }, true) => format!(
                "в аргументах {chars} символов, больше, чем читается вслух ({MAX_SPOKEN_ARGUMENTS})"
            ),
            (Unspeakable::Nested { name }, false) => {
                format!("{name} is a list or an object, which a voice cannot read faithfully")
            }
            (Unspeakable::Nested { name }, true) => {
                format!("{name} — список или объект, его не прочесть вслух точно")
            }
            (Unspeakable::Invisible { name, count }, false) => {
                format!("{name} holds {count} invisible characters")
            }
            (Unspeakable::Invisible { name, count }, true) => {
                format!("в {name} невидимых символов: {count}")
            }
            (Unspeakable::Strange { name, c }, false) => format!(
                "{name} holds {}, which a voice would not say as written",
                shown::line(&format!("U+{:04X}", u32::from(*c)))
            ),
            (Unspeakable::Strange { name, c }, true) => format!(
                "в {name} есть {}, голос не произнесёт его как написано",
                shown::line(&format!("U+{:04X}", u32::from(*c)))
            ),
            (Unspeakable::Mixed { name }, false) => {
                format!("{name} mixes Latin and Cyrillic letters in one word")
            }
            (Unspeakable::Mixed { name }, true) => {
                format!("в {name} латинские и русские буквы в одном слове")
            }
        }
    }
}

/// Characters a voice reads as written besides letters, digits and spaces.
const SPOKEN_MARKS: &str = ".,:;!?'-_/@+#&%()";

fn speakable(name: &str, value: &str) -> Result<(), Unspeakable> {
    let name = name.to_owned();
    let chars = value.chars().count();
    if chars > MAX_SPOKEN_VALUE {
        return Err(Unspeakable::TooLong { name, chars });
    }
    let count = shown::invisible_count(value);
    if count > 0 {
        return Err(Unspeakable::Invisible { name, count });
    }
    let latin = |c: char| c.is_ascii_alphabetic();
    let cyrillic = |c: char| matches!(c, '\u{400}'..='\u{4ff}');
    if let Some(c) = value.chars().find(|&c| {
        !(c == ' ' || c.is_ascii_digit() || latin(c) || cyrillic(c) || SPOKEN_MARKS.contains(c))
    }) {
        return Err(Unspeakable::Strange { name, c });
    }
    if value
        .split(|c: char| !c.is_alphabetic())
        .any(|w| w.chars().any(latin) && w.chars().any(cyrillic))
    {
        return Err(Unspeakable::Mixed { name });
    }
    Ok(())
}

/// The arguments of a question as a voice reads them, every one in the order the screen shows
/// them (`name: value; name: value`, or the rest of the sentence as said), nothing shortened;
/// `None` when there are none.
pub fn spoken_arguments(args: &allowlist::Args) -> Result<Option<String>, Unspeakable> {
    match args {
        allowlist::Args::Tail(t) if t.trim().is_empty() => Ok(None),
        allowlist::Args::Tail(t) => {
            speakable("what you said", t)?;
            Ok(Some(t.trim().to_owned()))
        }
        allowlist::Args::Named(m) | allowlist::Args::Said(m) if m.is_empty() => Ok(None),
        allowlist::Args::Named(m) | allowlist::Args::Said(m) => {
            let mut said = Vec::with_capacity(m.len());
            let mut total = 0;
            for (name, value) in m {
                speakable("an argument's name", name)?;
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Null => "null".to_owned(),
                    Value::Array(_) | Value::Object(_) => {
                        return Err(Unspeakable::Nested { name: name.clone() })
                    }
                };
                speakable(name, &text)?;
                total += text.chars().count();
                said.push(format!("{name}: {text}"));
            }
            if total > MAX_SPOKEN_ARGUMENTS {
                return Err(Unspeakable::TooMuch { chars: total });
            }
            Ok(Some(said.join("; ")))
        }
    }
}

const UNITS_EN: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS_EN: &[&str] = &[
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];
const UNITS_RU: &[&str] = &[
    "ноль",
    "один",
    "два",
    "три",
    "четыре",
    "пять",
    "шесть",
    "семь",
    "восемь",
    "девять",
    "десять",
    "одиннадцать",
    "двенадцать",
    "тринадцать",
    "четырнадцать",
    "пятнадцать",
    "шестнадцать",
    "семнадцать",
    "восемнадцать",
    "девятнадцать",
];
const TENS_RU: &[&str] = &[
    "",
    "",
    "двадцать",
    "тридцать",
    "сорок",
    "пятьдесят",
    "шестьдесят",
    "семьдесят",
    "восемьдесят",
    "девяносто",
];

fn unit(w: &str) -> Option<usize> {
    UNITS_EN
        .iter()
        .position(|u| *u == w)
        .or_else(|| UNITS_RU.iter().position(|u| *u == w))
        .or(match w {
            // Russian feminine and neuter forms.
            "одна" | "одно" => Some(1),
            "две" => Some(2),
            _ => None,
        })
}

fn tens(w: &str) -> Option<usize> {
    TENS_EN
        .iter()
        .position(|t| !t.is_empty() && *t == w)
        .or_else(|| TENS_RU.iter().position(|t| !t.is_empty() && *t == w))
}

/// A transcript as the owner's words: lowercase, punctuation dropped (a hyphen or an
/// apostrophe inside a word kept), whitespace single, and numbers written as digits ("ten",
/// "twenty one", "twenty-one", "двадцать три" → "10", "21", "21", "23").
pub fn normalise(text: &str) -> String {
    let lower = text.to_lowercase().replace('ё', "е");
    let cleaned: String = lower
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '\'' || c == '-' || c == '_' {
                c
            } else {
                ' '
            }
        })
        .collect();
    let mut words: Vec<String> = Vec::new();
    for raw in cleaned.split_whitespace() {
        let w = raw.trim_matches(|c| c == '\'' || c == '-');
        if w.is_empty() {
            continue;
        }
        // "twenty-one" as one word.
        if let Some((t, u)) = w.split_once('-') {
            if let (Some(t), Some(u)) = (tens(t), unit(u).filter(|u| (1..10).contains(u))) {
                words.push((t * 10 + u).to_string());
                continue;
            }
        }
        words.push(w.to_owned());
    }
    // Number words into digits: a tens word, then a unit word, make one number.
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if let Some(t) = tens(w) {
            match words
                .get(i + 1)
                .and_then(|n| unit(n))
                .filter(|u| (1..10).contains(u))
            {
                Some(u) => {
                    out.push((t * 10 + u).to_string());
                    i += 2;
                }
                None => {
                    out.push((t * 10).to_string());
                    i += 1;
                }
            }
            continue;
        }
        match unit(w) {
            Some(u) => out.push(u.to_string()),
            None => out.push(w.clone()),
        }
        i += 1;
    }
    out.join(" ")
}

/// What the pipeline's tests need of the lists.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// Every word of `lang`'s list, spaced.
    pub(crate) fn every_word(lang: Lang) -> String {
        list(lang).join(" ")
    }
}

#[cfg(test)]
mod tests {
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
            assert!(!YES.contains(w) && crate::rules::yes_no(w).is_none(), "{w}");
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
}
