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
    match normalise(text).as_str() {
        "yes" | "y" | "yes please" | "да" | "д" | "давай" => Some(true),
        "no" | "n" | "нет" | "н" | "не надо" | "cancel" | "отмена" => Some(false),
        _ => None,
    }
}

const DIGEST: &[&str] = &[
    "what's new in my feeds",
    "whats new in my feeds",
    "what is new in my feeds",
    "what's new in the feeds",
    "what's new",
    "whats new",
    "news",
    "feeds",
    "my feeds",
    "что нового в лентах",
    "что нового в моих лентах",
    "что нового",
    "новости",
    "ленты",
];

const HELP: &[&str] = &[
    "help",
    "what can you do",
    "what can you do for me",
    "помощь",
    "что ты умеешь",
    "что ты можешь",
];

const NOTES: &[&str] = &[
    "notes about ",
    "notes on ",
    "notes mentioning ",
    "search notes for ",
    "search notes ",
    "find notes about ",
    "заметки про ",
    "заметки о ",
    "заметки об ",
    "найди заметки про ",
];

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
    if DIGEST.contains(&n.as_str()) {
        return Decision::FeedsDigest(lang);
    }
    if HELP.contains(&n.as_str()) {
        return Decision::Help(lang);
    }
    for p in NOTES {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn acts() -> Vec<ActName> {
        vec![
            ActName {
                name: "vikunja_list_tasks".into(),
                tool: "list_tasks".into(),
            },
            ActName {
                name: "vikunja_update_task".into(),
                tool: "update_task".into(),
            },
            ActName {
                name: "uptime".into(),
                tool: "uptime".into(),
            },
        ]
    }

    #[test]
    fn utterances_route_to_decisions() {
        use Decision::*;
        let run = |n: &str, t: &str| RunAct {
            name: n.into(),
            tail: t.into(),
        };
        let table: Vec<(&str, Decision)> = vec![
            ("what's new in my feeds?", FeedsDigest(Lang::En)),
            ("  What's new in my  feeds  ", FeedsDigest(Lang::En)),
            ("news", FeedsDigest(Lang::En)),
            ("что нового в лентах?", FeedsDigest(Lang::Ru)),
            ("Что нового", FeedsDigest(Lang::Ru)),
            ("notes about rust", NotesSearch("rust".into(), Lang::En)),
            ("заметки про погоду", NotesSearch("погоду".into(), Lang::Ru)),
            ("what can you do?", Help(Lang::En)),
            ("что ты умеешь?", Help(Lang::Ru)),
            ("yes", Confirm(true)),
            ("Y", Confirm(true)),
            ("да", Confirm(true)),
            ("no", Confirm(false)),
            ("нет", Confirm(false)),
            (
                "vikunja list tasks inbox",
                run("vikunja_list_tasks", "inbox"),
            ),
            (
                "vikunja_list_tasks Inbox Two",
                run("vikunja_list_tasks", "Inbox Two"),
            ),
            ("list tasks inbox", run("vikunja_list_tasks", "inbox")),
            ("update task 3", run("vikunja_update_task", "3")),
            ("uptime", run("uptime", "")),
            ("uptimes", CannotHelp(Lang::En)),
            ("vikunja", CannotHelp(Lang::En)),
            ("please delete everything", CannotHelp(Lang::En)),
            ("сделай что-нибудь", CannotHelp(Lang::Ru)),
            ("notes about", CannotHelp(Lang::En)),
        ];
        for (text, want) in table {
            assert_eq!(route(text, &acts()), want, "{text:?}");
        }
    }

    #[test]
    fn only_enabled_acts_are_matched() {
        assert_eq!(
            route("vikunja list tasks inbox", &[]),
            Decision::CannotHelp(Lang::En)
        );
    }

    #[test]
    fn a_tool_name_shared_by_two_servers_needs_the_server() {
        let acts = vec![
            ActName {
                name: "a_list".into(),
                tool: "list".into(),
            },
            ActName {
                name: "b_list".into(),
                tool: "list".into(),
            },
        ];
        assert_eq!(match_act("list x", &acts), None);
        assert_eq!(
            match_act("b list x", &acts),
            Some(("b_list".into(), "x".into()))
        );
    }
}
