//! Text normalisation as hassil's `util.py` does it: whitespace runs made one space, NFC, `’` as
//! `'`; punctuation removed at the edges of words (`normalize_for_matching`); skip words removed
//! as whole words. Matching compares lower-cased characters, with `ё` as `е`.

use unicode_normalization::UnicodeNormalization as _;

const PUNCT: &str = ".。,，?¿？؟!¡！;；:：’…—–―";

fn is_punct(c: char) -> bool {
    PUNCT.contains(c)
}

fn is_punct_no_period(c: char) -> bool {
    c != '.' && is_punct(c)
}

/// Python's `\w`.
pub(crate) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// hassil's `normalize_text`: whitespace runs to one space, NFC, `’` to `'`.
pub(crate) fn normalize_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out.nfc().map(|c| if c == '’' { '\'' } else { c }).collect()
}

/// One character as matching compares it.
pub(crate) fn fold(c: char) -> char {
    let mut l = c.to_lowercase();
    let first = l.next().unwrap_or(c);
    let f = if l.next().is_some() { c } else { first };
    if f == 'ё' {
        'е'
    } else {
        f
    }
}

/// Removes every run of `pred` characters matched at positions where `ok(text, start, end)`.
fn sub(
    text: &[char],
    pred: fn(char) -> bool,
    ok: impl Fn(&[char], usize, usize) -> bool,
) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if pred(text[i]) {
            // Regex `[...]+` is greedy, but a lookahead may fail at the greedy end and succeed
            // at a shorter one: try the longest first.
            let mut end = i;
            while end < text.len() && pred(text[end]) {
                end += 1;
            }
            let mut found = None;
            let mut e = end;
            while e > i {
                if ok(text, i, e) {
                    found = Some(e);
                    break;
                }
                e -= 1;
            }
            if let Some(e) = found {
                i = e;
                continue;
            }
        }
        out.push(text[i]);
        i += 1;
    }
    out
}

fn w_at(text: &[char], i: usize) -> bool {
    text.get(i).is_some_and(|&c| is_word(c))
}

fn nw_at(text: &[char], i: usize) -> bool {
    text.get(i).is_some_and(|&c| !is_word(c))
}

fn nw_before(text: &[char], i: usize) -> bool {
    i > 0 && nw_at(text, i - 1)
}

fn w_before(text: &[char], i: usize) -> bool {
    i > 0 && w_at(text, i - 1)
}

/// `\b(?:\w\.){2,}$`.
fn initialism_at_end(text: &[char]) -> bool {
    let mut n = 0;
    let mut end = text.len();
    while end >= 2 && text[end - 1] == '.' && is_word(text[end - 2]) {
        n += 1;
        end -= 2;
        if n >= 2 && !w_before(text, end) {
            return true;
        }
    }
    false
}

/// hassil's `normalize_for_matching`: [`normalize_text`], punctuation removed, stripped.
pub(crate) fn normalize_for_matching(text: &str) -> String {
    let t: Vec<char> = normalize_text(text).chars().collect();
    // PUNCTUATION_START
    let mut t: Vec<char> = {
        let skip = t.iter().take_while(|&&c| is_punct(c)).count();
        t[skip..].to_vec()
    };
    if !initialism_at_end(&t) {
        let keep = t.len() - t.iter().rev().take_while(|&&c| is_punct(c)).count();
        t.truncate(keep);
    }
    // (?<=\W)P+(?=\w)
    t = sub(&t, is_punct, |s, a, e| nw_before(s, a) && w_at(s, e));
    // (?<=\w)P'+(?=\W)
    t = sub(&t, is_punct_no_period, |s, a, e| {
        w_before(s, a) && nw_at(s, e)
    });
    // (?<!\w\.\w)\.(?=\W)
    t = sub(
        &t,
        |c| c == '.',
        |s, a, e| {
            e == a + 1
                && nw_at(s, e)
                && !(a >= 2 && is_word(s[a - 1]) && s[a - 2] == '.' && a >= 3 && is_word(s[a - 3]))
        },
    );
    // (?<=\W)P+(?=\W)
    t = sub(&t, is_punct, |s, a, e| nw_before(s, a) && nw_at(s, e));
    let s: String = t.into_iter().collect();
    s.trim().to_owned()
}

fn collapse(t: &[char]) -> Vec<char> {
    let mut out = Vec::with_capacity(t.len());
    let mut in_space = false;
    for &c in t {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

fn trim(t: &[char]) -> Vec<char> {
    let a = t.iter().take_while(|c| c.is_whitespace()).count();
    let b = t.iter().rev().take_while(|c| c.is_whitespace()).count();
    if a >= t.len() {
        return Vec::new();
    }
    t[a..t.len() - b].to_vec()
}

/// The skip words, longest first, each folded.
pub(crate) fn skip_word_table(words: &[String]) -> Vec<Vec<char>> {
    let mut v: Vec<Vec<char>> = Vec::new();
    for w in words {
        let w: Vec<char> = w.trim().chars().map(fold).collect();
        if !w.is_empty() && !v.contains(&w) {
            v.push(w);
        }
    }
    // Python sorts a set by length, longest first; ties keep no useful order, and an
    // alternation of equal-length words matches the same text whichever comes first.
    v.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    v
}

fn word_at(t: &[char], i: usize, w: &[char]) -> bool {
    t.len() >= i + w.len() && t[i..i + w.len()].iter().zip(w).all(|(&a, &b)| fold(a) == b)
}

/// Which ends of the text skip words are removed from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ends {
    Both,
    Start,
    End,
}

/// hassil's `remove_skip_words` (whitespace-sensitive mode).
pub(crate) fn remove_skip_words(text: &str, words: &[Vec<char>], ends: Ends) -> String {
    let t: Vec<char> = text.chars().collect();
    if words.is_empty() {
        return text.to_owned();
    }
    let out = match ends {
        Ends::Both => {
            let mut out = Vec::with_capacity(t.len());
            let mut i = 0;
            while i < t.len() {
                if !w_before(&t, i) {
                    if let Some(w) = words
                        .iter()
                        .find(|w| word_at(&t, i, w) && !w_at(&t, i + w.len()))
                    {
                        out.push(' ');
                        i += w.len();
                        continue;
                    }
                }
                out.push(t[i]);
                i += 1;
            }
            trim(&collapse(&out))
        }
        Ends::Start => {
            let mut t = t;
            loop {
                let ws = t.iter().take_while(|c| c.is_whitespace()).count();
                let hit = words.iter().find(|w| {
                    word_at(&t, ws, w)
                        && t.get(ws + w.len())
                            .is_none_or(|&c| c.is_whitespace() || !is_word(c))
                });
                let next = match hit {
                    Some(w) => {
                        let mut e = ws + w.len();
                        while t.get(e).is_some_and(|c| c.is_whitespace()) {
                            e += 1;
                        }
                        trim(&collapse(&t[e..]))
                    }
                    None => trim(&collapse(&t)),
                };
                if next == t {
                    break t;
                }
                t = next;
            }
        }
        Ends::End => {
            let mut t = t;
            loop {
                let ws = t.iter().rev().take_while(|c| c.is_whitespace()).count();
                let end = t.len() - ws;
                let hit = words.iter().find(|w| {
                    end >= w.len() && word_at(&t, end - w.len(), w) && !w_before(&t, end - w.len())
                });
                let next = match hit {
                    Some(w) => {
                        let mut a = end - w.len();
                        while a > 0 && t[a - 1].is_whitespace() {
                            a -= 1;
                        }
                        trim(&collapse(&t[..a]))
                    }
                    None => trim(&collapse(&t)),
                };
                if next == t {
                    break t;
                }
                t = next;
            }
        }
    };
    out.into_iter().collect()
}

/// The Snowball stemmer of a language (`ru`, `en`, or a region of them, and the other
/// languages Snowball has), for lists that ask to match by stem.
pub(crate) fn stemmer_of(language: &str) -> Option<rust_stemmers::Algorithm> {
    use rust_stemmers::Algorithm as A;
    let family = language.split(['-', '_']).next().unwrap_or("");
    Some(match family {
        "ar" => A::Arabic,
        "da" => A::Danish,
        "nl" => A::Dutch,
        "en" => A::English,
        "fi" => A::Finnish,
        "fr" => A::French,
        "de" => A::German,
        "el" => A::Greek,
        "hu" => A::Hungarian,
        "it" => A::Italian,
        "nb" | "nn" | "no" => A::Norwegian,
        "pt" => A::Portuguese,
        "ro" => A::Romanian,
        "ru" => A::Russian,
        "es" => A::Spanish,
        "sv" => A::Swedish,
        "ta" => A::Tamil,
        "tr" => A::Turkish,
        _ => return None,
    })
}

/// The longest word stemmed; a longer one matches only as written.
pub(crate) const MAX_STEMMED_WORD: usize = 64;

/// The stem of a folded word, or `None` when it is not a word (empty, too long, not letters)
/// or has no stem.
pub(crate) fn stem(stemmer: &rust_stemmers::Stemmer, word: &str) -> Option<String> {
    let n = word.chars().count();
    if n == 0
        || n > MAX_STEMMED_WORD
        || !word
            .chars()
            .all(|c| c.is_alphabetic() || c == '-' || c == '\'')
    {
        return None;
    }
    let s = stemmer.stem(word).into_owned();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_words_are_stemmed() {
        let ru = rust_stemmers::Stemmer::create(stemmer_of("ru-RU").unwrap());
        assert_eq!(stem(&ru, "лондоне").as_deref(), Some("лондон"));
        assert_eq!(
            stem(&ru, "санкт-петербурге").as_deref(),
            Some("санкт-петербург")
        );
        assert_eq!(stem(&ru, ""), None);
        assert_eq!(stem(&ru, "42"), None);
        assert_eq!(stem(&ru, &"я".repeat(MAX_STEMMED_WORD + 1)), None);
        assert!(stemmer_of("xx").is_none());
    }

    #[test]
    fn punctuation_goes_at_word_edges_only() {
        assert_eq!(
            normalize_for_matching("  What's the time?  "),
            "What's the time"
        );
        assert_eq!(normalize_for_matching("Hello, world!"), "Hello world");
        assert_eq!(
            normalize_for_matching("turn on the A.C."),
            "turn on the A.C."
        );
        assert_eq!(
            normalize_for_matching("который час, в Токио?"),
            "который час в Токио"
        );
        assert_eq!(
            normalize_for_matching("set 21.5 degrees."),
            "set 21.5 degrees"
        );
    }

    #[test]
    fn skip_words_go_as_whole_words() {
        let w = skip_word_table(&["please".to_owned(), "can you".to_owned()]);
        assert_eq!(
            remove_skip_words("can you please turn on", &w, Ends::Both),
            "turn on"
        );
        assert_eq!(remove_skip_words("pleased", &w, Ends::Both), "pleased");
        assert_eq!(
            remove_skip_words("please add please", &w, Ends::Start),
            "add please"
        );
        assert_eq!(
            remove_skip_words("please add please", &w, Ends::End),
            "please add"
        );
    }

    #[test]
    fn folding_is_lower_case_with_yo_as_ye() {
        assert_eq!(
            "ВКЛЮЧИ Ёлку".chars().map(fold).collect::<String>(),
            "включи елку"
        );
    }
}
