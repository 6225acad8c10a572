//! Cutting server-written text to a size (every cap of the crate goes through these), and
//! what of a server's text is visible.

use unicode_general_category::{get_general_category, GeneralCategory};

/// The first `cap` characters of `s` (a prefix, never splitting a character): `shown`'s one
/// cut by characters.
pub use shown::prefix_chars as cap_chars;

/// The longest prefix of `s` of at most `cap` bytes that ends on a character boundary:
/// `shown`'s one cut by bytes.
pub(crate) use shown::prefix_bytes as cap_bytes;

/// `s` cut to [`cap_bytes`] in place.
pub(crate) fn cap_string(mut s: String, cap: usize) -> String {
    let end = cap_bytes(&s, cap).len();
    s.truncate(end);
    s
}

/// The Default_Ignorable_Code_Point ranges of the Unicode Character Database
/// (DerivedCoreProperties.txt): code points a renderer draws as nothing — the soft hyphen, the
/// zero-width space and joiners, the word joiner, the byte order mark, variation selectors, the
/// Hangul fillers, tags — and the ranges reserved for more of them.
const DEFAULT_IGNORABLE: &[(char, char)] = &[
    ('\u{ad}', '\u{ad}'),
    ('\u{34f}', '\u{34f}'),
    ('\u{61c}', '\u{61c}'),
    ('\u{115f}', '\u{1160}'),
    ('\u{17b4}', '\u{17b5}'),
    ('\u{180b}', '\u{180f}'),
    ('\u{200b}', '\u{200f}'),
    ('\u{202a}', '\u{202e}'),
    ('\u{2060}', '\u{206f}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{fe00}', '\u{fe0f}'),
    ('\u{feff}', '\u{feff}'),
    ('\u{ffa0}', '\u{ffa0}'),
    ('\u{fff0}', '\u{fff8}'),
    ('\u{1bca0}', '\u{1bca3}'),
    ('\u{1d173}', '\u{1d17a}'),
    ('\u{e0000}', '\u{e0fff}'),
];

/// Whether `c` is invisible: a default-ignorable code point or a format character (general
/// category Cf: U+200B, U+00AD, U+2060, U+FEFF, the bidirectional controls, tags…).
pub(crate) fn is_invisible(c: char) -> bool {
    DEFAULT_IGNORABLE
        .iter()
        .any(|&(lo, hi)| (lo..=hi).contains(&c))
        || get_general_category(c) == GeneralCategory::Format
}

/// Whether `c` is a combining mark (general category Mn, Mc or Me).
pub(crate) fn is_mark(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
    )
}

/// The bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): the
/// owner's renderers show them as escapes, so a question keeps them, visibly.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A server's text as the owner is shown it (T-6): its invisible characters removed, so what
/// is shown is all there is (`pass\u{200b}word` is shown as `password`, and read so by the
/// secret rule). The bidirectional controls stay: they are shown as escapes.
pub(crate) fn visible(s: &str) -> String {
    s.chars()
        .filter(|&c| !is_invisible(c) || is_bidi_control(c))
        .collect()
}

/// A server's URL as the owner is shown it, of at most `cap` characters: its invisible
/// characters percent-encoded (`%E2%80%8B`), so the address shown is the address asked for,
/// and visibly so; an escape is never cut.
pub(crate) fn visible_url(s: &str, cap: usize) -> String {
    let mut out = String::new();
    let mut len = 0;
    for c in s.chars() {
        let piece = if is_invisible(c) {
            let mut buf = [0; 4];
            c.encode_utf8(&mut buf)
                .bytes()
                .map(|b| format!("%{b:02X}"))
                .collect()
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if len + n > cap {
            break;
        }
        len += n;
        out.push_str(&piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_not_shown() {
        for s in [
            "pass\u{200b}word",
            "Pass\u{ad}word",
            "p\u{2060}assword",
            "\u{feff}pass\u{200d}word\u{fe0f}",
            "pass\u{200c}wo\u{180e}rd\u{e0041}",
            "pass\u{3164}word",
        ] {
            assert!(
                visible(s).eq_ignore_ascii_case("password"),
                "{s:?} -> {:?}",
                visible(s)
            );
        }
        // Kept: what the renderers escape, and what is visible.
        assert_eq!(visible("a\u{202e}b"), "a\u{202e}b");
        assert_eq!(visible("Привет, мир 🎉"), "Привет, мир 🎉");
        assert_eq!(visible("ру\u{301}сский"), "ру\u{301}сский");
        assert!(is_invisible('\u{600}') && is_invisible('\u{e0020}'));
        assert!(!is_invisible(' ') && !is_invisible('a') && !is_invisible('\u{301}'));
    }

    #[test]
    fn a_url_shows_its_invisible_characters_encoded() {
        assert_eq!(
            visible_url("https://exa\u{200b}mple.org/a\u{ad}b", 100),
            "https://exa%E2%80%8Bmple.org/a%C2%ADb"
        );
        assert_eq!(visible_url("https://x.org/", 100), "https://x.org/");
        // Never cut inside an escape.
        assert_eq!(visible_url("ab\u{200b}c", 4), "ab");
        assert_eq!(visible_url("ab\u{200b}c", 11), "ab%E2%80%8B");
    }
}
