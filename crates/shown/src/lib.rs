//! How text that someone else wrote is shown to the owner.
//!
//! Server names and versions, tool names, titles and descriptions, results, feed titles and
//! summaries, a child's stderr, an error message that quotes a server: all of it may carry bytes
//! that a terminal obeys instead of showing — a screen clear (`ESC [2J`), a window title
//! (`ESC ]0;…BEL`), a clipboard write (OSC 52), a hyperlink that points elsewhere than it reads
//! (OSC 8), a C1 CSI (`U+009B`), or a bidirectional override that makes text read backwards.
//! Every human-readable output renders such text through this crate:
//!
//! - [`line`] for one-line fields (a name, a title, a description in a table): every hazard is
//!   shown as an escape (`\e`, `\u{9b}`, `\u{202e}`), a newline as `⏎`, so one field can neither
//!   drive the terminal nor fake another row;
//! - [`block`] for text that may span lines (a tool's result, a stderr tail): newlines and tabs
//!   stay, every other hazard is escaped;
//! - [`for_prompt`] for the model's prompt: hazards removed, newlines made spaces;
//! - [`capped`] for a quoted name that may be huge: its first characters and its length;
//! - [`cut`] to shorten text to a number of characters, marking the cut.
//!
//! Machine-readable (`--json`) outputs keep the exact strings; JSON escapes them itself.

#![warn(clippy::expect_used, clippy::panic)]

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as itself: C0 controls (tab excepted), DEL, C1
/// controls, and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069). Newlines are hazards too; [`block`] lets them through.
pub fn is_hazard(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{a}'..='\u{1f}' | '\u{7f}'..='\u{9f}') || is_bidi_control(c)
}

/// The bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Writes the visible form of hazard `c`.
fn escape(out: &mut String, c: char) {
    match c {
        '\u{1b}' => out.push_str("\\e"),
        '\r' => out.push_str("\\r"),
        '\0' => out.push_str("\\0"),
        _ => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

fn render<'a>(s: &'a str, keep: impl Fn(char) -> bool, newline: &str) -> Cow<'a, str> {
    if !s.chars().any(|c| is_hazard(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_hazard(c) || keep(c) {
            out.push(c);
        } else if c == '\n' {
            out.push_str(newline);
        } else {
            escape(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// A one-line field for a terminal: every hazard shown as an escape, a newline as `⏎`.
///
/// ```
/// assert_eq!(shown::line("esc\u{1b}]0;pwned\u{7}"), "esc\\e]0;pwned\\u{7}");
/// assert_eq!(shown::line("two\nrows"), "two⏎rows");
/// assert_eq!(shown::line("plain"), "plain");
/// ```
pub fn line(s: &str) -> Cow<'_, str> {
    render(s, |_| false, "⏎")
}

/// Text that may span lines, for a terminal: newlines kept, every other hazard escaped.
///
/// ```
/// assert_eq!(shown::block("a\nb\u{9b}2J"), "a\nb\\u{9b}2J");
/// ```
pub fn block(s: &str) -> Cow<'_, str> {
    render(s, |c| c == '\n', "\n")
}

/// Text for a model's prompt: hazards removed, newlines (and a CR) made spaces.
pub fn for_prompt(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hazard) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .filter_map(|c| match c {
                '\n' | '\r' => Some(' '),
                c if is_hazard(c) => None,
                c => Some(c),
            })
            .collect(),
    )
}

/// The first `max` characters of `s`, with `…` when anything was cut. Renders nothing: pass
/// the result through [`line`] or [`block`] (or HTML escaping) where it is shown.
///
/// ```
/// assert_eq!(shown::cut("абв", 2), "аб…");
/// assert_eq!(shown::cut("abc", 3), "abc");
/// ```
pub fn cut(s: &str, max: usize) -> Cow<'_, str> {
    match prefix_chars(s, max) {
        p if p.len() == s.len() => Cow::Borrowed(s),
        p => Cow::Owned(format!("{p}…")),
    }
}

/// The first `max` characters of `s`: a prefix, never splitting a character, unmarked. The
/// one cut by characters in Maven ([`cut`] marks it with `…`).
///
/// ```
/// assert_eq!(shown::prefix_chars("абв", 2), "аб");
/// assert_eq!(shown::prefix_chars("ab", 5), "ab");
/// ```
pub fn prefix_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => s.get(..end).unwrap_or(s),
        None => s,
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary: the
/// one cut by bytes in Maven.
///
/// ```
/// assert_eq!(shown::prefix_bytes("аб", 3), "а");
/// assert_eq!(shown::prefix_bytes("ab", 5), "ab");
/// ```
pub fn prefix_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let end = (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    s.get(..end).unwrap_or("")
}

/// A one-line field of at most `max` characters: [`line`] of its first `max` characters, and
/// its length when it is longer (`aaaa… (100000 characters)`).
pub fn capped(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => line(s),
        Some((end, _)) => {
            let total = s.chars().count();
            Cow::Owned(format!("{}… ({total} characters)", line(&s[..end])))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hostile_strings_are_shown_not_obeyed() {
        let cases = [
            (
                "\u{1b}[2J\u{1b}[31mYOU ARE HACKED",
                "\\e[2J\\e[31mYOU ARE HACKED",
            ),
            (
                "\u{1b}]8;;https://evil.example/\u{1b}\\docs\u{1b}]8;;\u{1b}\\",
                "\\e]8;;https://evil.example/\\e\\docs\\e]8;;\\e\\",
            ),
            ("title\u{9b}2J", "title\\u{9b}2J"),
            ("\u{1b}]52;c;cHduZWQ=\u{7}", "\\e]52;c;cHduZWQ=\\u{7}"),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
            ("x\u{2066}y\u{2069}", "x\\u{2066}y\\u{2069}"),
            ("a\r\nb", "a\\r⏎b"),
            ("tab\there", "tab\there"),
            ("del\u{7f}", "del\\u{7f}"),
            ("nul\u{0}", "nul\\0"),
            ("Привет, мир", "Привет, мир"),
        ];
        for (input, want) in cases {
            assert_eq!(line(input), want, "{input:?}");
        }
        assert_eq!(block("one\ntwo\u{1b}[K"), "one\ntwo\\e[K");
        assert_eq!(for_prompt("a\u{1b}[2Jb\nc\u{202e}d"), "a[2Jb cd");
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        assert!(matches!(line("plain text"), Cow::Borrowed(_)));
        assert!(matches!(block("two\nlines"), Cow::Borrowed(_)));
        assert!(matches!(for_prompt("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn long_names_are_capped_with_their_length() {
        let name = "n\n".repeat(50_000);
        let shown = capped(&name, 64);
        assert!(shown.ends_with("… (100000 characters)"), "{shown}");
        assert!(!shown.contains('\n'));
        assert_eq!(capped("short", 64), "short");
    }

    proptest! {
        #[test]
        fn nothing_hazardous_survives(s in "\\PC*|[\\x00-\\x1f\\x7f-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}a-z\n]*") {
            prop_assert!(!line(&s).chars().any(is_hazard));
            prop_assert!(!block(&s).chars().any(|c| is_hazard(c) && c != '\n'));
            prop_assert!(!for_prompt(&s).chars().any(is_hazard));
            prop_assert!(!capped(&s, 8).chars().any(is_hazard));
        }
    }
}
