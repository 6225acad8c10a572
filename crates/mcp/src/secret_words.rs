//! The secret rule of elicitations: whether a server's question asks for a secret, read from
//! the words of a field's name, title and description and of the question's message, in
//! English and Russian. A question that asks for one is declined without being shown.
//!
//! The rule is [`TABLE`]: each entry is a word (or a stem, or words in a row) that asks for a
//! secret, and some words ask only with a companion ("code" from an SMS or an authenticator,
//! not "code review"; "PIN" in capitals, not the verb "pin"). A text is split into words at
//! every character that is not a letter or digit and at the humps of camelCase
//! (`accessToken` → `access token`).

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

/// The words of `text` as written, split at non-alphanumerics and camelCase humps.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
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

/// Which entry of [`TABLE`] `text` matches, if any.
pub(crate) fn matches(text: &str) -> Option<Rule> {
    let written = words(text);
    if written.is_empty() {
        return None;
    }
    let lower: Vec<String> = written.iter().map(|w| w.to_lowercase()).collect();
    let any_stem = |stems: &[&str]| lower.iter().any(|w| stems.iter().any(|s| w.starts_with(s)));
    TABLE.iter().copied().find(|rule| match *rule {
        Rule::Stem(s) => lower.iter().any(|w| w.starts_with(s)),
        Rule::Word(s) => lower.iter().any(|w| w == s),
        Rule::Caps(s) => written.iter().any(|w| w == s),
        Rule::Phrase(p) => lower
            .windows(p.len())
            .any(|win| win.iter().zip(p).all(|(a, b)| a == b)),
        Rule::With(s, with) => {
            lower.iter().any(|w| w.starts_with(s))
                && ((lower.len() == 1 && lower[0] == s) || any_stem(with))
        }
        Rule::WordWith(s, with) => {
            lower.iter().any(|w| w == s) && (lower.len() == 1 || any_stem(with))
        }
    })
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

    #[test]
    fn words_split_at_humps_and_punctuation() {
        assert_eq!(words("accessToken"), ["access", "Token"]);
        assert_eq!(words("API_key-2fa"), ["API", "key", "2fa"]);
        assert_eq!(words("пин-код"), ["пин", "код"]);
    }
}
