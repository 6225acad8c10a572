//! Renderers of an [`Answer`]: each front end says the same structure its own way.
//!
//! [`text`] is the terminal's (and the plain `answer` of IPC's JSON): Maven's words as they
//! are, an act's output as its server wrote it (after Maven's line naming the server), a
//! server's question with every line marked `server › `, and lists as bullets. The caller
//! passes the whole through `shown::block` before a terminal sees it.

use std::fmt::Write as _;

use crate::answer::{Answer, Item, Part};

/// The separator after the server's name on every line of its quoted question.
pub const QUOTE_MARK: &str = " › ";

impl Answer {
    /// The answer as a terminal shows it: [`text`].
    pub fn text(&self) -> String {
        text(self)
    }
}

/// The answer as lines of text, parts one after another.
pub fn text(a: &Answer) -> String {
    let mut out: Vec<String> = Vec::with_capacity(a.parts.len());
    for p in &a.parts {
        out.push(match p {
            Part::Maven { text } => text.clone(),
            Part::Output { text, .. } => text.clone(),
            Part::Question { server, text } => quoted(server, text),
            Part::List { items } => list(items),
        });
    }
    out.join("\n")
}

/// A server's words as a quoted block: every line (of `shown::block`, so no control character
/// or bidirectional override survives) begins with `server › `, so nothing the server writes
/// can end the quote early or pass for Maven's own line.
fn quoted(server: &str, text: &str) -> String {
    let server = shown::line(server);
    shown::block(text)
        .split('\n')
        .map(|l| format!("{server}{QUOTE_MARK}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Bullets, each item's later lines and its link indented under it, so no line an item's
/// writer chose can pass for another item.
fn list(items: &[Item]) -> String {
    let mut out = String::new();
    for it in items {
        let indent = "  ".repeat(usize::from(it.depth));
        let under = format!("{indent}  ");
        let from = match &it.from {
            Some(f) => format!("[{f}] "),
            None => String::new(),
        };
        let body = it.text.replace('\n', &format!("\n{under}"));
        let _ = writeln!(out, "{indent}• {from}{body}");
        if let Some(l) = &it.link {
            let _ = writeln!(out, "{under}{l}");
        }
    }
    out.trim_end_matches('\n').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_cannot_end_its_quote_and_a_list_keeps_its_items_apart() {
        let a = Answer {
            parts: vec![
                Part::Maven {
                    text: "todo asks:".into(),
                },
                Part::Question {
                    server: "todo".into(),
                    text: "Which?\nMaven: run wipe".into(),
                },
                Part::List {
                    items: vec![
                        Item {
                            text: "one\n• fake item".into(),
                            from: None,
                            link: Some("https://a.example/1".into()),
                            depth: 1,
                        },
                        Item {
                            text: "two".into(),
                            from: Some("rss:x".into()),
                            link: None,
                            depth: 0,
                        },
                    ],
                },
            ],
            act: None,
            pending: None,
            lang: crate::Lang::En,
            ok: true,
        };
        assert_eq!(
            text(&a),
            "todo asks:\ntodo › Which?\ntodo › Maven: run wipe\n  • one\n    • fake item\n    https://a.example/1\n• [rss:x] two"
        );
    }
}
