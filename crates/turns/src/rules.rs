//! The `rules` router (T-2): deterministic, no model. Built-in intents in English and
//! Russian, and enabled acts by their name or spoken form.

pub use crate::answer::Lang;

/// What a turn should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// New feed items since the last digest.
    FeedsDigest(Lang),
    /// Notes matching a query.
    NotesSearch(String, Lang),
    /// What Maven can do.
    Help(Lang),
    /// An answer to a pending confirmation.
    Confirm(bool),
    /// Run an enabled act with the rest of the utterance as its positional tail.
    RunAct {
        /// The act's row name.
        name: String,
        /// The rest of the utterance, as typed.
        tail: String,
    },
    /// Call an enabled act with the named arguments a model chose (checked against its schema
    /// before anything runs or is asked).
    CallAct {
        /// The act's row name.
        name: String,
        /// The arguments, as the model wrote them.
        arguments: serde_json::Map<String, serde_json::Value>,
    },
    /// Say this (the llm router's plain answer).
    Say(String),
    /// Nothing fits.
    CannotHelp(Lang),
}

/// An act the router may choose: its row name and tool name.
#[derive(Debug, Clone)]
pub struct ActName {
    /// The row's name (`todo_list_tasks`).
    pub name: String,
    /// The tool's own name on its server (`list_tasks`).
    pub tool: String,
}

/// Lowercases, trims, collapses spaces and drops closing punctuation.
pub fn normalise(text: &str) -> String {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    words
        .join(" ")
        .trim_end_matches(['?', '!', '.', ',', '…'])
        .trim()
        .to_string()
}

/// The language a sentence is written in: Russian when it has a Cyrillic letter.
pub fn lang_of(text: &str) -> Lang {
    if text.chars().any(|c| ('\u{0400}'..='\u{04FF}').contains(&c)) {
        Lang::Ru
    } else {
        Lang::En
    }
}

/// `yes` / `no` in either language, if the utterance is exactly that.
pub fn yes_no(text: &str) -> Option<bool> {
    crate::phrases::yes_no(&normalise(text))
}

/// Routes one utterance. `acts` are the enabled acts only.
pub fn route(text: &str, acts: &[ActName]) -> Decision {
    route_in(text, lang_of(text), acts)
}

/// Routes one utterance of a turn whose language is decided: `lang`.
pub fn route_in(text: &str, lang: Lang, acts: &[ActName]) -> Decision {
    let n = normalise(text);
    if let Some(yes) = yes_no(&n) {
        return Decision::Confirm(yes);
    }
    if crate::phrases::is_digest(&n) {
        return Decision::FeedsDigest(lang);
    }
    if crate::phrases::is_help(&n) {
        return Decision::Help(lang);
    }
    for p in crate::phrases::notes_starts() {
        if let Some(q) = n.strip_prefix(p) {
            let q = q.trim();
            if !q.is_empty() {
                return Decision::NotesSearch(q.to_string(), lang);
            }
        }
    }
    if let Some((name, tail)) = match_act(text, acts) {
        return Decision::RunAct { name, tail };
    }
    Decision::CannotHelp(lang)
}

/// The enabled act the utterance starts with (by name or spoken form, whole words, longest
/// match first), and the rest of the utterance as typed.
pub fn match_act(text: &str, acts: &[ActName]) -> Option<(String, String)> {
    let trimmed = text.trim();
    let lower = trimmed.to_lowercase();
    let mut best: Option<(usize, &ActName, bool)> = None;
    for act in acts {
        let spoken_row = act.name.replace('_', " ");
        let spoken_tool = act.tool.replace(['_', '-', '.'], " ").to_lowercase();
        for (form, by_tool) in [
            (act.name.to_lowercase(), false),
            (spoken_row, false),
            (spoken_tool, true),
        ] {
            if form.is_empty() || !lower.starts_with(&form) {
                continue;
            }
            let rest = &lower[form.len()..];
            if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
                continue;
            }
            if best.is_none_or(|(len, _, _)| form.len() > len) {
                best = Some((form.len(), act, by_tool));
            }
        }
    }
    let Some((len, act, by_tool)) = best else {
        return match_joined(trimmed, acts);
    };
    // A bare tool name ("list tasks") only counts when no other enabled act shares it.
    if by_tool {
        let tool_form = act.tool.replace(['_', '-', '.'], " ").to_lowercase();
        let same = acts
            .iter()
            .filter(|a| a.tool.replace(['_', '-', '.'], " ").to_lowercase() == tool_form)
            .count();
        if same > 1 {
            return None;
        }
    }
    // `len` counts bytes of the lowercased text; lowercasing may change byte lengths outside
    // ASCII, so cut the original at the same number of characters.
    let chars = lower[..len].chars().count();
    let tail: String = trimmed.chars().skip(chars).collect();
    Some((act.name.clone(), tail.trim().to_string()))
}

/// [`match_act`] with the spaces of the sentence's first words ignored, for the splits and
/// joins a recogniser makes ("to do list tasks" for `todo_list_tasks`, "todolist" for
/// `todo_list`): the act whose name, spaces and underscores ignored, is exactly the first words
/// run together, the longest such; the rest of the words as its tail. A bare tool name counts
/// only when no other enabled act shares it, as in [`match_act`].
fn match_joined(text: &str, acts: &[ActName]) -> Option<(String, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '_' | '-' | '.'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let mut best: Option<(usize, &ActName, bool)> = None;
    for act in acts {
        for (form, by_tool) in [(squash(&act.name), false), (squash(&act.tool), true)] {
            if form.is_empty() {
                continue;
            }
            let mut joined = String::new();
            for (k, w) in words.iter().enumerate().take(12) {
                joined.push_str(&squash(w));
                if joined.len() > form.len() {
                    break;
                }
                if joined == form && best.is_none_or(|(n, _, _)| k + 1 > n) {
                    best = Some((k + 1, act, by_tool));
                }
            }
        }
    }
    let (n, act, by_tool) = best?;
    if by_tool {
        let shared = acts
            .iter()
            .filter(|a| squash(&a.tool) == squash(&act.tool))
            .count();
        if shared > 1 {
            return None;
        }
    }
    let tail = words.get(n..).unwrap_or_default().join(" ");
    Some((act.name.clone(), tail))
}

#[path = "tests/rules.rs"]
#[cfg(test)]
mod tests;
