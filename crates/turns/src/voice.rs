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
//! - after [`normalise`], it is a yes ("yes", "yeah", "yep", or a Russian yes: the words of
//!   `phrases`) and then the word ("Yes, orange.", the same in Russian), at most
//!   [`MAX_OTHER_WORDS`] other words anywhere ("okay, yes, orange please");
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
use crate::phrases;

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
        // A short answer with a yes in it ("yes", "yes please", a Russian "yes, go on") is a plain yes; a
        // longer sentence is another turn.
        return if words.iter().any(|w| phrases::spoken_yes(w)) && words.len() <= 1 + MAX_OTHER_WORDS
        {
            Heard::PlainYes
        } else {
            Heard::Other
        };
    };
    let yes_before = words.iter().take(at).any(|w| phrases::spoken_yes(w));
    let others = words
        .iter()
        .filter(|w| **w != word && !phrases::spoken_yes(w))
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
        match self {
            Unspeakable::TooLong { name, chars } => {
                phrases::too_long(lang, name, *chars, MAX_SPOKEN_VALUE)
            }
            Unspeakable::TooMuch { chars } => phrases::too_much(lang, *chars, MAX_SPOKEN_ARGUMENTS),
            Unspeakable::Nested { name } => phrases::nested(lang, name),
            Unspeakable::Invisible { name, count } => phrases::invisible_in(lang, name, *count),
            Unspeakable::Strange { name, c } => phrases::strange(
                lang,
                name,
                &shown::line(&format!("U+{:04X}", u32::from(*c))),
            ),
            Unspeakable::Mixed { name } => phrases::mixed(lang, name),
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

fn unit(w: &str) -> Option<usize> {
    phrases::unit(w)
}

fn tens(w: &str) -> Option<usize> {
    phrases::tens(w)
}

/// A transcript as the owner's words: lowercase, punctuation dropped (a hyphen or an
/// apostrophe inside a word kept), whitespace single, and numbers written as digits ("ten",
/// "twenty one", "twenty-one", and the same in Russian → "10", "21", "21").
pub fn normalise(text: &str) -> String {
    let lower = phrases::fold(&text.to_lowercase());
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

#[path = "tests/voice.rs"]
#[cfg(test)]
mod tests;
