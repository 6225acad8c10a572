//! Renderers of an [`Answer`]: each front end says the same structure its own way.
//!
//! [`text`] is the terminal's (and the plain `answer` of IPC's JSON): Maven's words as they
//! are, an act's output as its server wrote it (after Maven's line naming the server), a
//! server's question with every line marked `server › `, and lists as bullets. The caller
//! passes the whole through `shown::block` before a terminal sees it.

use std::fmt::Write as _;

use crate::answer::{Answer, Item, Lang, Part};
use crate::phrases;

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
    let lang = a.lang;
    let mut out: Vec<String> = Vec::new();
    for (i, p) in a.parts.iter().enumerate() {
        match p {
            Part::Maven { text } => out.push(spoken_text(text, lang)),
            Part::Exact { text } => out.push(shown::line(text).into_owned()),
            // Maven's words just before already said whose words follow ("… returned:").
            Part::Output { text, .. }
                if i.checked_sub(1).and_then(|j| a.parts.get(j)).is_some_and(
                    |prev| matches!(prev, Part::Maven { text: head } if head.ends_with(':')),
                ) =>
            {
                out.push(spoken_lines(text, lang));
            }
            Part::Output { server, text } => {
                let server = server.as_deref().map(shown::line);
                let who = phrases::output_says(a.lang, server.as_deref());
                out.push(format!("{who} {}", spoken_lines(text, lang)));
            }
            Part::Question { server, text } => {
                let who = phrases::server_asks(a.lang, &shown::line(server));
                out.push(format!("{who} {}", spoken_lines(text, lang)));
            }
            Part::List { items } => {
                let read: Vec<String> = items
                    .iter()
                    .take(SPOKEN_ITEMS)
                    .map(|i| spoken_text(&one_line(&i.text), lang))
                    .collect();
                let mut list = read.join("; ");
                let more = items.len().saturating_sub(SPOKEN_ITEMS);
                if more > 0 {
                    list.push_str(&phrases::and_more(a.lang, more));
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
fn spoken_lines(text: &str, lang: Lang) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut read: Vec<String> = lines
        .iter()
        .take(SPOKEN_LINES)
        .map(|l| {
            let l = spoken_text(l.trim(), lang);
            let cut = shown::cut(&l, SPOKEN_LINE).into_owned();
            cut.trim_end_matches(['.', '…']).to_owned()
        })
        .collect();
    let more = lines.len().saturating_sub(SPOKEN_LINES);
    if more > 0 {
        read.push(phrases::and_more_lines(lang, more));
    }
    format!("{}.", read.join(". "))
}

/// Text for a voice: addresses as "a link to HOST", bullets and quote marks dropped, control
/// characters gone (`shown::line`).
fn spoken_text(text: &str, lang: Lang) -> String {
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
                    phrases::link(lang, (!host.is_empty()).then_some(host))
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

#[path = "tests/render.rs"]
#[cfg(test)]
mod tests;
