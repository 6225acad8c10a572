//! The secret rule of elicitations: whether a server's question asks for a secret, read from
//! the words of a field's name, title and description and of the question's message, in
//! English and Russian. A question that asks for one is declined without being shown (T-6).
//!
//! The rule is [`TABLE`]: each entry is a word (or a stem, or words in a row) that asks for a
//! secret, and some words ask only with a companion ("code" from an SMS or an authenticator,
//! not "code review"; "PIN" in capitals, not the verb "pin"). A text is split into words at
//! every character that is not a letter, digit or combining mark and at the humps of camelCase
//! (`accessToken` → `access token`).
//!
//! A text is read as it looks, not as it is spelled. First it is normalised: invisible
//! characters (default-ignorable code points and format characters: `pass\u{200b}word`,
//! `Pass\u{ad}word`, `p\u{2060}assword`) and the narrow spaces (thin, hair, narrow no-break)
//! are removed, then NFKC folds compatibility forms (fullwidth `ＰＩＮ`, mathematical
//! `𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝`, ligatures). Then the table is tried three times:
//!
//! 1. on the normalised words, as written — the Russian entries meet real Russian here;
//! 2. on the skeletons (Unicode TS #39, after dropping combining marks) of the lowercased
//!    words, against the entries' skeletons — Cyrillic `раssword`, Greek `ρassword`,
//!    `pássword` read as `password`;
//! 3. on the lowercased skeletons of the words as written, against the entries' lowercased
//!    skeletons — capitals that look Latin only in capitals (Cyrillic `ТОКЕN`, `SЕСRЕТ`).
//!
//! Each way compares a text and the table transformed alike, so a word matches only what it
//! looks like: an ordinary word matches no entry it did not match before unless it reads as
//! that entry (a word in capitals that reads exactly `OTP` is taken for one).
//!
//! The skeleton comes from the `unicode-security` crate (unicode-rs, whose tables rustc's own
//! confusable-identifier lints use); NFKC and NFD from `unicode-normalization` (unicode-rs);
//! the general category (format characters, marks) from `unicode-general-category`.

use unicode_normalization::UnicodeNormalization;
use unicode_security::skeleton;

use crate::text::{is_invisible, is_mark};

/// How one entry of [`TABLE`] matches.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rule {
    /// A word that begins with this stem (lowercase): `парол` for пароль, пароля, паролем.
    Stem(&'static str),
    /// This word exactly (lowercase).
    Word(&'static str),
    /// This word exactly, in capitals as the server wrote it: `PIN`, not the verb "pin".
    Caps(&'static str),
    /// These words in a row (lowercase).
    Phrase(&'static [&'static str]),
    /// A word that begins with the stem `.0` when a word of the text begins with one of the
    /// stems `.1`, or `.0` itself as the text's only word (a field named `ключ`).
    With(&'static str, &'static [&'static str]),
    /// Like [`Rule::With`], the first word matched exactly.
    WordWith(&'static str, &'static [&'static str]),
}

/// Words that ask for a secret.
pub(crate) const TABLE: &[Rule] = &[
    // English
    Rule::Stem("password"),
    Rule::Stem("passwd"),
    Rule::Stem("passphrase"),
    Rule::Stem("passcode"),
    Rule::Word("pwd"),
    Rule::Caps("PIN"),
    Rule::WordWith("pin", &["code", "number"]),
    Rule::Word("pincode"),
    Rule::Word("token"),
    Rule::Word("apikey"),
    Rule::Phrase(&["api", "key"]),
    Rule::Phrase(&["access", "key"]),
    Rule::Phrase(&["private", "key"]),
    Rule::Phrase(&["secret", "key"]),
    Rule::Word("privatekey"),
    Rule::Word("secret"),
    Rule::Word("secrets"),
    Rule::Stem("credential"),
    Rule::Word("otp"),
    Rule::Word("totp"),
    Rule::Word("2fa"),
    Rule::Word("mfa"),
    Rule::Phrase(&["one", "time"]),
    Rule::WordWith(
        "code",
        &[
            "sms",
            "authenticator",
            "verification",
            "security",
            "confirmation",
            "login",
            "auth",
        ],
    ),
    // Russian (and its transliteration)
    Rule::Stem("парол"),
    Rule::Stem("parol"),
    Rule::Caps("ПИН"),
    Rule::Word("пин"),
    Rule::Word("пинкод"),
    Rule::Stem("токен"),
    Rule::Word("секрет"),
    Rule::Word("секрета"),
    Rule::Word("секретом"),
    Rule::Word("секреты"),
    Rule::Stem("секретн"),
    Rule::With(
        "ключ",
        &["api", "апи", "доступ", "секретн", "закрыт", "приватн"],
    ),
    Rule::With(
        "код",
        &[
            "смс",
            "sms",
            "подтвержд",
            "аутентификат",
            "приложени",
            "одноразов",
            "проверочн",
            "безопасност",
            "двухфактор",
        ],
    ),
    Rule::Stem("одноразов"),
];

/// The narrow spaces, removed before NFKC would make them ordinary spaces: `pass\u{200a}word`
/// (a hair space) looks like one word and is read as one.
fn is_narrow_space(c: char) -> bool {
    matches!(
        c,
        '\u{2006}' | '\u{2008}' | '\u{2009}' | '\u{200a}' | '\u{202f}' | '\u{205f}'
    )
}

/// `text` as the rule reads it: invisible characters and narrow spaces removed, then NFKC.
pub(crate) fn normalised(text: &str) -> String {
    text.chars()
        .filter(|&c| !is_invisible(c) && !is_narrow_space(c))
        .nfkc()
        .filter(|&c| !is_invisible(c))
        .collect()
}

/// The skeleton of `word` (Unicode TS #39) without combining marks: what it looks like.
fn skel(word: &str) -> String {
    let bare: String = word.nfd().filter(|&c| !is_mark(c)).collect();
    skeleton(&bare).filter(|&c| !is_mark(c)).collect()
}

/// The words of `text` as written, split at whatever is not a letter, digit or mark, and at
/// camelCase humps.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if is_mark(c) && !cur.is_empty() {
            cur.push(c);
            continue;
        }
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase();
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One way of reading a text: its words as written and lowercased, and how an entry of the
/// table is transformed to meet them (`caps` for [`Rule::Caps`], `entry` for the others).
struct Reading {
    written: Vec<String>,
    lower: Vec<String>,
    entry: fn(&str) -> String,
    caps: fn(&str) -> String,
}

fn same(s: &str) -> String {
    s.to_owned()
}

fn lower_skel(s: &str) -> String {
    skel(s).to_lowercase()
}

impl Reading {
    /// Whether this reading of the text matches `rule`.
    fn hits(&self, rule: Rule) -> bool {
        let lower = &self.lower;
        let e = self.entry;
        let any_stem = |stems: &[&str]| {
            let stems: Vec<String> = stems.iter().map(|s| e(s)).collect();
            lower
                .iter()
                .any(|w| stems.iter().any(|s| w.starts_with(s.as_str())))
        };
        match rule {
            Rule::Stem(s) => {
                let s = e(s);
                lower.iter().any(|w| w.starts_with(&s))
            }
            Rule::Word(s) => {
                let s = e(s);
                lower.contains(&s)
            }
            Rule::Caps(s) => {
                let s = (self.caps)(s);
                self.written.contains(&s)
            }
            Rule::Phrase(p) => {
                let p: Vec<String> = p.iter().map(|w| e(w)).collect();
                lower
                    .windows(p.len())
                    .any(|win| win.iter().zip(&p).all(|(a, b)| a == b))
            }
            Rule::With(s, with) => {
                let s = e(s);
                lower.iter().any(|w| w.starts_with(&s))
                    && ((lower.len() == 1 && lower[0] == s) || any_stem(with))
            }
            Rule::WordWith(s, with) => {
                let s = e(s);
                lower.contains(&s) && (lower.len() == 1 || any_stem(with))
            }
        }
    }
}

/// Which entry of [`TABLE`] `text` matches, if any, read in each of the three ways.
pub(crate) fn matches(text: &str) -> Option<Rule> {
    let written = words(&normalised(text));
    if written.is_empty() {
        return None;
    }
    let lower: Vec<String> = written.iter().map(|w| w.to_lowercase()).collect();
    let skel_written: Vec<String> = written.iter().map(|w| skel(w)).collect();
    let readings = [
        Reading {
            written: written.clone(),
            lower: lower.clone(),
            entry: same,
            caps: same,
        },
        Reading {
            written: skel_written.clone(),
            lower: lower.iter().map(|w| skel(w)).collect(),
            entry: skel,
            caps: skel,
        },
        Reading {
            lower: skel_written.iter().map(|w| w.to_lowercase()).collect(),
            written: skel_written,
            entry: lower_skel,
            caps: skel,
        },
    ];
    readings
        .iter()
        .find_map(|r| TABLE.iter().copied().find(|&rule| r.hits(rule)))
}

/// Whether `text` (a field's name, title or description, or a question's message) asks for a
/// secret.
pub(crate) fn asks_secret(text: &str) -> bool {
    matches(text).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_of_the_table_is_caught() {
        for text in [
            "password",
            "Your password",
            "newPassword",
            "passwd",
            "Passphrase for the key",
            "passcode",
            "pwd",
            "PIN",
            "Your PIN",
            "PIN code",
            "pin",
            "pin_code",
            "pincode",
            "token",
            "Your GitHub token",
            "accessToken",
            "api_key",
            "apiKey",
            "API key",
            "apikey",
            "AWS access key",
            "private key",
            "privateKey",
            "secret",
            "client secret",
            "Secret key",
            "credentials",
            "OTP",
            "totp",
            "2FA",
            "mfa",
            "one-time code",
            "code",
            "The code from SMS",
            "Authenticator code",
            "verification code",
            "security code",
            "Ваш пароль",
            "пароля",
            "parol",
            "ПИН",
            "пин-код",
            "токен доступа",
            "Токен",
            "секрет",
            "секретное слово",
            "ключ",
            "ключ API",
            "ключ доступа",
            "закрытый ключ",
            "код",
            "код из СМС",
            "Код подтверждения",
            "код из приложения-аутентификатора",
            "одноразовый код",
        ] {
            assert!(asks_secret(text), "{text:?} should ask for a secret");
        }
    }

    #[test]
    fn near_misses_are_still_asked() {
        for text in [
            "pin the version",
            "Pin the dependency to 1.2?",
            "code review",
            "Which code style?",
            "Source code path",
            "tokenizer",
            "max tokens",
            "secretary",
            "keyboard layout",
            "key",
            "Which project?",
            "Ключевые слова",
            "Код ревью",
            "кодировка",
            "секретарь",
            "Название задачи",
            "",
        ] {
            assert!(
                !asks_secret(text),
                "{text:?} was taken for a secret: {:?}",
                matches(text)
            );
        }
    }

    /// Spellings that look like an entry of the table (or are one, in another form).
    const LOOKALIKES: &[&str] = &[
        "pass\u{200b}word",                 // a zero-width space
        "Pass\u{ad}word",                   // a soft hyphen
        "p\u{2060}assword",                 // a word joiner
        "\u{feff}pass\u{200d}wo\u{200c}rd", // a BOM, joiners
        "pass\u{180e}word\u{fe0f}",         // a Mongolian vowel separator, a variation selector
        "pass\u{e0041}word",                // a tag character
        "pass\u{202e}word",                 // a bidirectional override
        "pass\u{200a}word",                 // a hair space
        "pass\u{202f}word",                 // a narrow no-break space
        "\u{440}\u{430}ssword",             // Cyrillic р and а
        "\u{420}\u{410}SSWORD",             // Cyrillic Р and А, in capitals
        "Your \u{440}\u{430}ssword",
        "\u{3c1}\u{3b1}ssword",     // Greek ρ and α
        "\u{3a1}\u{391}SSWORD",     // Greek Ρ and Α
        "\u{ff30}\u{ff29}\u{ff2e}", // fullwidth ＰＩＮ
        "Your \u{ff30}\u{ff29}\u{ff2e}",
        "\u{ff50}\u{ff41}\u{ff53}\u{ff53}\u{ff57}\u{ff4f}\u{ff52}\u{ff44}", // fullwidth password
        "\u{1d429}\u{1d41a}\u{1d42c}\u{1d42c}\u{1d430}\u{1d428}\u{1d42b}\u{1d41d}", // bold 𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝
        "\u{1d413}\u{1d40e}\u{1d40a}\u{1d404}\u{1d40d}",                    // bold 𝐓𝐎𝐊𝐄𝐍
        "pa\u{301}ssword",                                                  // a combining acute
        "p\u{332}a\u{332}ssword", // combining low lines (no precomposed form)
        "passwo\u{308}rd",
        "\u{420}\u{406}N",                // Cyrillic Р, Ukrainian І
        "P\u{399}N",                      // Greek Ι
        "\u{422}\u{41e}\u{41a}\u{415}N",  // Cyrillic ТОКЕ, Latin N
        "S\u{415}\u{421}R\u{415}\u{422}", // Cyrillic Е, С, Т in SECRET
        "t\u{43e}k\u{435}n",              // Cyrillic о, е in token
        "\u{441}\u{43e}de from SMS",      // Cyrillic с, о in code
        "api\u{200b}_key",
        "access\u{ad}Token",
        "\u{ff2f}\u{ff34}\u{ff30}", // fullwidth ＯＴＰ
        "0TP",                      // a zero for the O
        "па\u{200b}роль",           // Russian, a zero-width space
        "Ваш п\u{430}\u{301}роль",  // Russian, a stress mark
        "\u{ff30}\u{ff29}\u{ff2e} code",
        // Cyrillic capitals that read exactly as OTP: taken for it, as they look.
        "\u{41e}\u{422}\u{420}",
    ];

    #[test]
    fn lookalikes_of_the_table_are_caught() {
        for text in LOOKALIKES {
            assert!(asks_secret(text), "{text:?} should ask for a secret");
        }
        // Which entry each reads as.
        for (text, entry) in [
            ("pass\u{200b}word", "password"),
            ("\u{440}\u{430}ssword", "password"),
            ("\u{3c1}\u{3b1}ssword", "password"),
            ("pa\u{301}ssword", "password"),
            ("\u{ff30}\u{ff29}\u{ff2e}", "PIN"),
            ("\u{420}\u{406}N", "PIN"),
            ("\u{422}\u{41e}\u{41a}\u{415}N", "token"),
            ("\u{441}\u{43e}de from SMS", "code"),
        ] {
            let got = match matches(text) {
                Some(Rule::Stem(s) | Rule::Word(s) | Rule::Caps(s)) => s,
                Some(Rule::WordWith(s, _) | Rule::With(s, _)) => s,
                other => panic!("{text:?}: {other:?}"),
            };
            assert_eq!(got, entry, "{text:?}");
        }
    }

    #[test]
    fn near_misses_stay_near_misses_however_written() {
        for text in [
            "passage",
            "Pass\u{ad}age",
            "compass word game",
            "compass\u{200a}word game",
            "pass the word",
            "bypass",
            "pin the tab",
            "Pin the tab?",
            "\u{ff50}\u{ff49}\u{ff4e} the tab", // fullwidth, lowercase: the verb
            "spinning",
            "toke",
            "tokens",
            "decode",
            "Which code editor?",
            "Title 🔑 with emoji 🎉",
            "Ship it? 👍🏽",
            "❤\u{fe0f} favourite colour",
            "👨\u{200d}👩\u{200d}👧 family name",
            "café, naïve, Ångström",
            "Какой проект выбрать?",
            "Пароход отходит в полдень",
            "Сколько копий напечатать?",
            "Укажите название задачи и срок",
            "Ключевые слова для поиска",
            "Ваше имя",
            "Привет, мир! Как дела?",
            "Выберите кодировку файла",
            "Секретарь придёт завтра",
            "Мой телефон",
            "Ελληνικά: ποιο έργο;", // Greek: which project?
            "πίνακας",
            "Größe",
            "Ship to PINE street", // capitals, but not PIN
            "I need 1 item",
            "\u{200b}",
            "\u{ad}\u{200b}\u{2060}",
        ] {
            assert!(
                !asks_secret(text),
                "{text:?} was taken for a secret: {:?}",
                matches(text)
            );
        }
    }

    #[test]
    fn normalisation_removes_the_invisible_and_folds_compatibility_forms() {
        assert_eq!(normalised("pass\u{200b}word"), "password");
        assert_eq!(normalised("Pass\u{ad}word"), "Password");
        assert_eq!(normalised("\u{ff30}\u{ff29}\u{ff2e}"), "PIN");
        assert_eq!(normalised("pass\u{2009}word"), "password");
        assert_eq!(normalised("pass word"), "pass word");
        assert_eq!(normalised("пароль"), "пароль");
        assert_eq!(skel("\u{440}\u{430}ssword"), "password");
        assert_eq!(skel("pa\u{301}ssword"), "password");
        assert_eq!(words("p\u{332}assword"), ["p\u{332}assword"]);
    }

    #[test]
    fn words_split_at_humps_and_punctuation() {
        assert_eq!(words("accessToken"), ["access", "Token"]);
        assert_eq!(words("API_key-2fa"), ["API", "key", "2fa"]);
        assert_eq!(words("пин-код"), ["пин", "код"]);
    }
}
