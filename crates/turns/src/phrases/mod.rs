//! Everything Maven says in a turn, and the words it hears, as data: one module per language
//! ([`en`], [`ru`]), each phrase a function of the values it names, chosen here by the turn's
//! [`Lang`]. Every language has every phrase (the compiler holds it: the choice below names
//! both). A line said in English whatever the language (a server's question, a failure,
//! `maven say --explain`) lives in [`en`] alone and is called from there.
//!
//! No source file of this crate but `ru` holds a Cyrillic literal (a test reads them all).

pub mod en;
pub mod ru;

use std::fmt::Display;

use crate::answer::Lang;

/// Each phrase said in both languages: `phrase(lang, …)` is `en::phrase(…)` or `ru::phrase(…)`.
macro_rules! in_both {
    ($( fn $name:ident($($a:ident: $t:ty),* $(,)?); )*) => {$(
        #[doc = concat!("`", stringify!($name), "`, in `lang`.")]
        pub fn $name(lang: Lang, $($a: $t),*) -> String {
            match lang {
                Lang::En => en::$name($($a),*),
                Lang::Ru => ru::$name($($a),*),
            }
        }
    )*};
}

in_both! {
    fn wont(reason: &dyn Display);
    fn ran_head(act: &str, server: Option<&str>, ok: bool);
    fn returned_nothing();
    fn no_such_act(name: &str);
    fn with_tail(tail: &str);
    fn none_unset();
    fn with_named(shown: &str, unset: &str);
    fn invisible(n: usize);
    fn run_it(act: &str, with: &str, hidden: &str);
    fn needs_the_screen(why: &str);
    fn say_yes_and(word: &str);
    fn about_to_run_and(act: &str, ask: &str);
    fn not_set(unset: &str);
    fn about_to_run(act: &str);
    fn with_said(said: &str, not_set: &str);
    fn plain_yes(act: &str, word: &str);
    fn wrong_word();
    fn not_alone();
    fn not_confirmed(act: &str, why: &str);
    fn nothing_to_confirm();
    fn too_late(act: &str);
    fn cancelled(act: &str);
    fn too_long(name: &str, chars: usize, max: usize);
    fn too_much(chars: usize, max: usize);
    fn nested(name: &str);
    fn invisible_in(name: &str, count: usize);
    fn strange(name: &str, code: &str);
    fn mixed(name: &str);
    fn output_says(server: Option<&str>);
    fn server_asks(server: &str);
    fn and_more(n: usize);
    fn and_more_lines(n: usize);
    fn link(host: Option<&str>);
    fn no_feeds();
    fn failing(feeds: &str);
    fn nothing_new();
    fn feed_new(feed: &str, n: usize);
    fn and_n_more(n: usize);
    fn no_notes(q: &str);
    fn say_bare(phrase: &str);
    fn say_rest(phrase: &str);
    fn needs_named(phrase: &str);
    fn once_allowed(phrase: &str, allow: &str);
    fn asks_first();
    fn help();
    fn no_acts();
    fn and_these_acts();
    fn cannot_help();
    fn did_you_mean(phrase: &str);
    fn try_these();
    fn or_your_acts();
    fn or_say(phrase: &str);
    fn router_fell_back(e: &dyn Display);
}

/// Whether `word` is one of either language's.
fn either(word: &str, en: &[&str], ru: &[&str]) -> bool {
    en.contains(&word) || ru.contains(&word)
}

/// A whole (normalised) sentence that is a yes or a no, in either language.
pub fn yes_no(said: &str) -> Option<bool> {
    if either(said, en::YES, ru::YES) {
        Some(true)
    } else if either(said, en::NO, ru::NO) {
        Some(false)
    } else {
        None
    }
}

/// A spoken sentence that starts as a no ("don't …"), whatever follows.
pub fn starts_as_no(said: &str) -> bool {
    en::NO_STARTS
        .iter()
        .chain(ru::NO_STARTS)
        .any(|s| said.starts_with(s))
}

/// A word of a spoken yes, in either language.
pub fn spoken_yes(word: &str) -> bool {
    either(word, en::SPOKEN_YES, ru::SPOKEN_YES)
}

/// A slot's words as a boolean, when they read as one.
pub fn boolean(word: &str) -> Option<bool> {
    if either(word, en::TRUE, ru::TRUE) {
        Some(true)
    } else if either(word, en::FALSE, ru::FALSE) {
        Some(false)
    } else {
        None
    }
}

/// A (lowercased) transcript with the letters each language folds made the same.
pub fn fold(text: &str) -> String {
    text.chars()
        .map(|c| {
            ru::FOLD
                .iter()
                .find(|(from, _)| *from == c)
                .map_or(c, |(_, to)| *to)
        })
        .collect()
}

/// A sentence that asks for the feeds digest, in either language.
pub fn is_digest(said: &str) -> bool {
    either(said, en::DIGEST, ru::DIGEST)
}

/// A sentence that asks what Maven can do, in either language.
pub fn is_help(said: &str) -> bool {
    either(said, en::HELP, ru::HELP)
}

/// The starts of a sentence that searches the notes, in either language.
pub fn notes_starts() -> impl Iterator<Item = &'static str> {
    en::NOTES.iter().chain(ru::NOTES).copied()
}

/// The number a unit word (zero to nineteen, and the other forms) says, in either language.
pub fn unit(word: &str) -> Option<usize> {
    en::UNITS
        .iter()
        .position(|u| *u == word)
        .or_else(|| ru::UNITS.iter().position(|u| *u == word))
        .or_else(|| {
            en::UNIT_FORMS
                .iter()
                .chain(ru::UNIT_FORMS)
                .find(|(w, _)| *w == word)
                .map(|(_, n)| *n)
        })
}

/// The digit of a tens word (twenty to ninety), in either language.
pub fn tens(word: &str) -> Option<usize> {
    en::TENS
        .iter()
        .position(|t| !t.is_empty() && *t == word)
        .or_else(|| ru::TENS.iter().position(|t| !t.is_empty() && *t == word))
}

#[path = "../tests/phrases.rs"]
#[cfg(test)]
mod tests;
