//! An answer cut into sentences, the unit a streamed answer is sent in (`handled-chunk`) and
//! spoken in (`synthesize-chunk`, or one `synthesize` each).
//!
//! [`sentences`] cuts after a sentence's end (`.`, `!`, `?`, `…`, `;` or a line's end, with the
//! closing quotes and brackets after it) where white space follows, so "3.5", "maven.toml" and
//! "e.g.," stay whole. The pieces are slices of the text that cover it exactly, each with the
//! white space after it: joined, they are the text again. At most [`MAX_SENTENCES`]: the last
//! holds the rest.

/// The most pieces [`sentences`] cuts a text into; the last holds the rest.
pub const MAX_SENTENCES: usize = 64;

/// `text` cut after each sentence's end; the pieces joined are `text`. Empty for an empty text.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if out.len() + 1 == MAX_SENTENCES {
            break;
        }
        let ends = matches!(c, '.' | '!' | '?' | '…' | ';' | '。' | '！' | '？');
        if !ends && c != '\n' {
            continue;
        }
        // The closing marks and further ends after it: "yes, orange." or "?!" or ".)".
        while let Some(&(_, d)) = chars.peek() {
            if matches!(
                d,
                '.' | '!' | '?' | '…' | '"' | '\'' | ')' | ']' | '»' | '”' | '’'
            ) {
                chars.next();
            } else {
                break;
            }
        }
        // A sentence ends only where white space (or the text's end) follows.
        let Some(&(j, d)) = chars.peek() else {
            break;
        };
        if !d.is_whitespace() && c != '\n' {
            continue;
        }
        let mut next = j;
        while let Some(&(k, w)) = chars.peek() {
            if w.is_whitespace() {
                next = k + w.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        out.push(&text[start..next]);
        start = next;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_cut_after_each_sentence_and_joins_back_whole() {
        let table: [(&str, &[&str]); 9] = [
            ("", &[]),
            ("Done.", &["Done."]),
            (
                "About to run clear done. To run it, say: yes, orange.",
                &["About to run clear done. ", "To run it, say: yes, orange."],
            ),
            (
                "It is 3.5 degrees in maven.toml; fine!  Really?\nYes…",
                &[
                    "It is 3.5 degrees in maven.toml; ",
                    "fine!  ",
                    "Really?\n",
                    "Yes…",
                ],
            ),
            (
                "He said \"stop.\" Then left.",
                &["He said \"stop.\" ", "Then left."],
            ),
            ("Wait?! No.", &["Wait?! ", "No."]),
            ("Line one\nline two", &["Line one\n", "line two"]),
            ("Trailing space. ", &["Trailing space. "]),
            (
                "Готово. Чтобы выполнить, скажите: да, апельсин.",
                &["Готово. ", "Чтобы выполнить, скажите: да, апельсин."],
            ),
        ];
        for (text, want) in table {
            let got = sentences(text);
            assert_eq!(got, want, "{text:?}");
            assert_eq!(got.concat(), text);
        }
    }

    #[test]
    fn a_text_of_many_sentences_is_cut_into_at_most_the_bound() {
        let text = "Yes. ".repeat(1000);
        let got = sentences(&text);
        assert_eq!(got.len(), MAX_SENTENCES);
        assert_eq!(got.concat(), text);
        assert_eq!(got[0], "Yes. ");
    }
}
