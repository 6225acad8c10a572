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
            Part::Maven { text } | Part::Exact { text } => text.clone(),
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

/// How many lines of a server's words, and items of a list, are read aloud.
const SPOKEN_LINES: usize = 3;
const SPOKEN_ITEMS: usize = 5;
/// Longest line read aloud, in characters.
const SPOKEN_LINE: usize = 200;

/// The answer as it is meant to be heard: a server's words announced as the server's ("todo
/// says: …"), a long result cut with "and N more" rather than read to the end, a list read as
/// a list, an address never spelled out ("a link to example.org"), in the answer's language.
pub fn speech(a: &Answer) -> String {
    let ru = a.lang == crate::Lang::Ru;
    let mut out: Vec<String> = Vec::new();
    for (i, p) in a.parts.iter().enumerate() {
        match p {
            Part::Maven { text } => out.push(spoken_text(text, ru)),
            Part::Exact { text } => out.push(shown::line(text).into_owned()),
            // Maven's words just before already said whose words follow ("… returned:").
            Part::Output { text, .. }
                if i.checked_sub(1).and_then(|j| a.parts.get(j)).is_some_and(
                    |prev| matches!(prev, Part::Maven { text: head } if head.ends_with(':')),
                ) =>
            {
                out.push(spoken_lines(text, ru));
            }
            Part::Output { server, text } => {
                let who = match (server, ru) {
                    (Some(s), false) => format!("{} says:", shown::line(s)),
                    (Some(s), true) => format!("{} отвечает:", shown::line(s)),
                    (None, false) => "The command says:".to_owned(),
                    (None, true) => "Команда отвечает:".to_owned(),
                };
                out.push(format!("{who} {}", spoken_lines(text, ru)));
            }
            Part::Question { server, text } => {
                let who = if ru {
                    format!("{} спрашивает:", shown::line(server))
                } else {
                    format!("{} asks:", shown::line(server))
                };
                out.push(format!("{who} {}", spoken_lines(text, ru)));
            }
            Part::List { items } => {
                let read: Vec<String> = items
                    .iter()
                    .take(SPOKEN_ITEMS)
                    .map(|i| spoken_text(&one_line(&i.text), ru))
                    .collect();
                let mut list = read.join("; ");
                let more = items.len().saturating_sub(SPOKEN_ITEMS);
                if more > 0 {
                    list.push_str(&if ru {
                        format!("; и ещё {more}")
                    } else {
                        format!("; and {more} more")
                    });
                }
                if !list.is_empty() {
                    out.push(format!("{list}."));
                }
            }
        }
    }
    out.retain(|s| !s.trim().is_empty());
    out.join(" ")
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Some lines of a text read aloud: the first few non-empty ones, each cut, then how many more.
fn spoken_lines(text: &str, ru: bool) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut read: Vec<String> = lines
        .iter()
        .take(SPOKEN_LINES)
        .map(|l| {
            let l = spoken_text(l.trim(), ru);
            let cut = shown::cut(&l, SPOKEN_LINE).into_owned();
            cut.trim_end_matches(['.', '…']).to_owned()
        })
        .collect();
    let more = lines.len().saturating_sub(SPOKEN_LINES);
    if more > 0 {
        read.push(if ru {
            format!("и ещё строк: {more}")
        } else {
            format!("and {more} more lines")
        });
    }
    format!("{}.", read.join(". "))
}

/// Text for a voice: addresses as "a link to HOST", bullets and quote marks dropped, control
/// characters gone (`shown::line`).
fn spoken_text(text: &str, ru: bool) -> String {
    let words: Vec<String> = shown::line(text)
        .split_whitespace()
        .filter(|w| !matches!(*w, "•" | "›" | "-" | "*"))
        .map(|w| {
            let bare = w.trim_matches(|c: char| matches!(c, '(' | ')' | '<' | '>' | ',' | '"'));
            match bare
                .strip_prefix("https://")
                .or_else(|| bare.strip_prefix("http://"))
            {
                Some(rest) => {
                    let host = rest.split(['/', '?', '#', ':']).next().unwrap_or("");
                    let host = host.strip_prefix("www.").unwrap_or(host);
                    match (host.is_empty(), ru) {
                        (true, false) => "a link".to_owned(),
                        (true, true) => "ссылка".to_owned(),
                        (false, false) => format!("a link to {host}"),
                        (false, true) => format!("ссылка на {host}"),
                    }
                }
                // A name is read as words ("todo_list_tasks": "todo list tasks"), and
                // quote marks are not read at all.
                None => w
                    .chars()
                    .filter(|c| !matches!(c, '"' | '«' | '»' | '`'))
                    .map(|c| if c == '_' { ' ' } else { c })
                    .collect(),
            }
        })
        .filter(|w: &String| !w.is_empty())
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_meant_to_be_heard_names_whose_words_it_reads_and_cuts_them() {
        let result = (1..=9)
            .map(|i| format!("{i}. task {i} https://todo.example/t/{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let a = Answer {
            parts: vec![
                Part::Maven {
                    text: "todo_list_tasks ran; the MCP server \"todo\" returned:".into(),
                },
                Part::Output {
                    server: Some("todo".into()),
                    text: result,
                },
            ],
            act: None,
            pending: None,
            lang: crate::Lang::En,
            ok: true,
            understood: true,
        };
        assert_eq!(
            speech(&a),
            "todo list tasks ran; the MCP server todo returned: 1. task 1 a link to todo.example. 2. task 2 a link to todo.example. 3. task 3 a link to todo.example. and 6 more lines."
        );
        let list = Answer {
            parts: vec![
                Part::Maven {
                    text: "lwn (7 new):".into(),
                },
                Part::List {
                    items: (1..=7)
                        .map(|i| Item {
                            text: format!("Item {i}\nsecond line"),
                            from: None,
                            link: Some(format!("https://lwn.net/{i}")),
                            depth: 1,
                        })
                        .collect(),
                },
            ],
            act: None,
            pending: None,
            lang: crate::Lang::Ru,
            ok: true,
            understood: true,
        };
        assert_eq!(
            speech(&list),
            "lwn (7 new): Item 1 second line; Item 2 second line; Item 3 second line; Item 4 second line; Item 5 second line; и ещё 2."
        );
    }

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
            understood: true,
        };
        assert_eq!(
            text(&a),
            "todo asks:\ntodo › Which?\ntodo › Maven: run wipe\n  • one\n    • fake item\n    https://a.example/1\n• [rss:x] two"
        );
    }
}
