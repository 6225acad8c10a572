//! Spoken turns: a transcript as recognisers write it made into the words the owner said, and
//! the one-time word a spoken confirmation must carry.
//!
//! A recogniser writes "List tasks in box." for "list tasks inbox", "To do" for "todo", digits
//! for numbers ("Go forward 10 meters."), capitals and a full stop everywhere. [`normalise`]
//! lowercases, drops punctuation, and writes numbers as digits whether they came as digits or
//! as words (English and Russian, up to 99); act names are matched with spaces ignored (the
//! rules router's `match_act`), which takes the recogniser's splits and joins.
//!
//! A spoken question before an act that may write ends with a one-time word chosen at random
//! for that question ([`one_time_word`]): a television, a replayed recording or someone else in
//! the room saying "yes" does not run it; only an answer that contains the word, in the same
//! conversation, within the two minutes, does.

use rand::seq::SliceRandom as _;

use crate::answer::Lang;

/// Short, distinct words, easy to say and to hear apart, one of which ends each spoken
/// confirmation question.
pub(crate) const WORDS_EN: &[&str] = &[
    "orange", "anchor", "violet", "comet", "maple", "pepper", "harbor", "lantern", "tiger",
    "walnut", "cobalt", "meadow", "falcon", "copper", "velvet", "raven",
];
const WORDS_RU: &[&str] = &[
    "апельсин",
    "якорь",
    "комета",
    "фиалка",
    "маяк",
    "тигр",
    "орех",
    "сокол",
    "медь",
    "ворон",
    "клён",
    "луна",
    "бархат",
    "гранат",
    "кедр",
    "янтарь",
];

/// A one-time word for a question asked in `lang`.
pub fn one_time_word(lang: Lang) -> &'static str {
    let words = match lang {
        Lang::En => WORDS_EN,
        Lang::Ru => WORDS_RU,
    };
    words
        .choose(&mut rand::thread_rng())
        .copied()
        .unwrap_or("orange")
}

/// Whether `said` (a transcript) carries `word`, as a word of its own.
pub fn carries(said: &str, word: &str) -> bool {
    let word = normalise(word);
    normalise(said).split(' ').any(|w| w == word)
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
    fn a_one_time_word_is_heard_only_as_itself() {
        assert!(carries("Yes, orange.", "orange"));
        assert!(carries("ORANGE yes", "orange"));
        assert!(!carries("yes", "orange"));
        assert!(!carries("yes, oranges", "orange"));
        assert!(carries("Да, клён.", "клён"));
        for lang in [Lang::En, Lang::Ru] {
            let w = one_time_word(lang);
            assert!(carries(&format!("yes {w}"), w));
        }
        // Distinct words: no word is another's prefix, so one is never heard for another.
        for list in [WORDS_EN, WORDS_RU] {
            for a in list {
                for b in list {
                    assert!(a == b || !b.starts_with(a), "{a} {b}");
                }
            }
        }
    }
}
