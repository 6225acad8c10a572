//! Sentences routed to acts without a model: templates in Home Assistant's format (hassil's,
//! matched by the `sentences` crate), from two places, in this order:
//!
//! 1. **The owner's files** (`$XDG_CONFIG_HOME/maven/sentences/<lang>/*.yaml`, the layout of Home
//!    Assistant's `custom_sentences/<lang>/`, and the files or folders `"sentences"` names). An
//!    intent is an act's row name (`time_get_current_time`); a slot is a property of that act's
//!    input schema.
//! 2. **The phrasebook** that ships with Maven ([`PHRASEBOOK`]): English and Russian phrases for
//!    the demo's server and the servers people install first. An intent is
//!    `SERVERINFO::TOOL` — the server's `serverInfo.name` and the tool's name — so a phrase
//!    serves whatever name the owner gave the server, and only a server that says it is that
//!    one.
//!
//! Then the rules router's name rule, and a model when one is configured.
//!
//! A slot's name may be a path into the arguments (`entities[0].name`, `a.b`): the value is put
//! there, so a template can fill a schema that wants an object or a list. A match is used only
//! when its act exists, every slot's first step is a property of the act's input schema, and
//! the arguments fit the schema (the validator the executor asks again); a slot's words become
//! the type the schema names for them when they read as one (digits for an integer,
//! "true"/"false" for a boolean, one string in a list of strings). A match that does not fit
//! gives way to the next one: "open /home/anna/todo.md" is no URL for a fetch.
//!
//! The arguments of a match are words the owner said, each in a slot a template names, or a
//! list's value for those words: never a guess ([`allowlist::Args::Said`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use store::ToolRow;

use crate::answer::Lang;

/// The phrasebook: each file's name, its language and its text.
pub const PHRASEBOOK: &[(&str, Lang, &str)] = &[
    (
        "phrasebook/en/time.yaml",
        Lang::En,
        include_str!("../phrasebook/en/time.yaml"),
    ),
    (
        "phrasebook/en/filesystem.yaml",
        Lang::En,
        include_str!("../phrasebook/en/filesystem.yaml"),
    ),
    (
        "phrasebook/en/memory.yaml",
        Lang::En,
        include_str!("../phrasebook/en/memory.yaml"),
    ),
    (
        "phrasebook/en/fetch.yaml",
        Lang::En,
        include_str!("../phrasebook/en/fetch.yaml"),
    ),
    (
        "phrasebook/en/git.yaml",
        Lang::En,
        include_str!("../phrasebook/en/git.yaml"),
    ),
    (
        "phrasebook/en/everything.yaml",
        Lang::En,
        include_str!("../phrasebook/en/everything.yaml"),
    ),
    (
        "phrasebook/en/todo.yaml",
        Lang::En,
        include_str!("../phrasebook/en/todo.yaml"),
    ),
    (
        "phrasebook/ru/time.yaml",
        Lang::Ru,
        include_str!("../phrasebook/ru/time.yaml"),
    ),
    (
        "phrasebook/ru/filesystem.yaml",
        Lang::Ru,
        include_str!("../phrasebook/ru/filesystem.yaml"),
    ),
    (
        "phrasebook/ru/memory.yaml",
        Lang::Ru,
        include_str!("../phrasebook/ru/memory.yaml"),
    ),
    (
        "phrasebook/ru/fetch.yaml",
        Lang::Ru,
        include_str!("../phrasebook/ru/fetch.yaml"),
    ),
    (
        "phrasebook/ru/git.yaml",
        Lang::Ru,
        include_str!("../phrasebook/ru/git.yaml"),
    ),
    (
        "phrasebook/ru/everything.yaml",
        Lang::Ru,
        include_str!("../phrasebook/ru/everything.yaml"),
    ),
    (
        "phrasebook/ru/todo.yaml",
        Lang::Ru,
        include_str!("../phrasebook/ru/todo.yaml"),
    ),
];

/// Where a template comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The owner's files.
    Owner,
    /// The phrasebook.
    Phrasebook,
}

/// A sentence file of the owner's: its name (shown in errors) and text, and the language its
/// folder names (`sentences/<lang>/`), when it does; a file's own `language` key wins.
#[derive(Debug, Clone)]
pub struct SentenceFile {
    /// The file's path, as errors name it.
    pub name: String,
    /// Its text.
    pub text: String,
    /// The language of its folder, if any.
    pub lang: Option<Lang>,
}

/// Why the owner's sentence files cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    /// The file does not parse, or breaks a bound (the error names `FILE:LINE:COL`).
    #[error("{0}")]
    File(#[from] sentences::Error),
    /// The file names no language, and no folder names one.
    #[error("{file}: no language: put it under sentences/en/ or sentences/ru/, or add `language: en` (or ru)")]
    NoLanguage {
        /// The file.
        file: String,
    },
    /// A language Maven does not speak.
    #[error("{file}: language {lang:?}: Maven's sentences are English (en) or Russian (ru)")]
    Language {
        /// The file.
        file: String,
        /// What it named.
        lang: String,
    },
}

/// The sentence data of one origin and language.
#[derive(Debug, Clone, Default)]
struct Group {
    en: sentences::Sentences,
    ru: sentences::Sentences,
}

impl Group {
    fn of(&self, lang: Lang) -> &sentences::Sentences {
        match lang {
            Lang::En => &self.en,
            Lang::Ru => &self.ru,
        }
    }

    fn add(&mut self, file: &str, text: &str, lang: Option<Lang>) -> Result<(), LoadError> {
        let mut probe = sentences::Sentences::new();
        probe.add_yaml(file, text)?;
        let lang = match probe.language() {
            Some("en") => Lang::En,
            Some("ru") => Lang::Ru,
            Some(other) => {
                return Err(LoadError::Language {
                    file: file.to_owned(),
                    lang: other.to_owned(),
                })
            }
            None => lang.ok_or_else(|| LoadError::NoLanguage {
                file: file.to_owned(),
            })?,
        };
        match lang {
            Lang::En => self.en.add_yaml(file, text)?,
            Lang::Ru => self.ru.add_yaml(file, text)?,
        }
        Ok(())
    }
}

/// A sentence matched to an act.
#[derive(Debug, Clone, PartialEq)]
pub struct Routed {
    /// The act's row name.
    pub act: String,
    /// Its arguments, from the template's slots.
    pub arguments: Map<String, Value>,
    /// The template that matched.
    pub template: sentences::Template,
    /// Where the template comes from.
    pub origin: Origin,
}

/// Every template Maven routes by: the owner's, then the phrasebook's.
#[derive(Debug, Clone)]
pub struct Templates {
    owner: Group,
    book: Group,
}

/// The `serverInfo.name` of each configured server (by the name the owner gave it), when it
/// is known: what the phrasebook's intents are keyed by.
pub type ServerNames = std::sync::Arc<dyn Fn() -> BTreeMap<String, String> + Send + Sync>;

impl Templates {
    /// The phrasebook alone (compiled once per process).
    pub fn phrasebook() -> Templates {
        static BOOK: std::sync::OnceLock<Group> = std::sync::OnceLock::new();
        Templates {
            owner: Group::default(),
            book: BOOK.get_or_init(Self::compile_phrasebook).clone(),
        }
    }

    fn compile_phrasebook() -> Group {
        let mut book = Group::default();
        for (file, lang, text) in PHRASEBOOK {
            if let Err(e) = book.add(file, text, Some(*lang)) {
                // Tested: every file of the phrasebook loads (`the_phrasebook_loads`).
                tracing::error!(error = %e, "a phrasebook file does not load; it is left out");
            }
        }
        book
    }

    /// The owner's files, then the phrasebook. Every file that does not load is an error
    /// (naming its file, line and column); none of the owner's files is used then.
    pub fn load(files: &[SentenceFile]) -> Result<Templates, Vec<LoadError>> {
        let mut t = Templates::phrasebook();
        let mut errors = Vec::new();
        for f in files {
            if let Err(e) = t.owner.add(&f.name, &f.text, f.lang) {
                errors.push(e);
            }
        }
        if errors.is_empty() {
            Ok(t)
        } else {
            Err(errors)
        }
    }

    /// `files` alone, without the phrasebook (what `maven sentences match --file` matches).
    pub fn only(files: &[SentenceFile]) -> Result<Templates, Vec<LoadError>> {
        let mut t = Templates {
            owner: Group::default(),
            book: Group::default(),
        };
        let errors: Vec<LoadError> = files
            .iter()
            .filter_map(|f| t.owner.add(&f.name, &f.text, f.lang).err())
            .collect();
        if errors.is_empty() {
            Ok(t)
        } else {
            Err(errors)
        }
    }

    /// The best match of `text` by the matcher alone (no act looked up): the owner's templates
    /// first, then the phrasebook's; in `lang` (else the language of the text first, then the
    /// other).
    pub fn match_sentence(
        &self,
        text: &str,
        lang: Option<Lang>,
        front: &str,
    ) -> Option<(Origin, Lang, sentences::Match)> {
        let first = lang.unwrap_or_else(|| crate::rules::lang_of(text));
        let langs: Vec<Lang> = match lang {
            Some(l) => vec![l],
            None => vec![first, other(first)],
        };
        for (origin, group) in [
            (Origin::Owner, &self.owner),
            (Origin::Phrasebook, &self.book),
        ] {
            for &l in &langs {
                let context = sentences::Context::new()
                    .with("language", code(l))
                    .with("front", front);
                if let Some(mut m) = group.of(l).match_best(text, &context) {
                    m.slots = m
                        .slots
                        .iter()
                        .map(|(k, v)| (k.clone(), as_written(text, v)))
                        .collect();
                    return Some((origin, l, m));
                }
            }
        }
        None
    }

    /// Every intent with its templates: the owner's, then the phrasebook's.
    pub fn all(&self) -> Vec<(Origin, Lang, sentences::Template)> {
        let mut out = Vec::new();
        for (origin, group) in [
            (Origin::Owner, &self.owner),
            (Origin::Phrasebook, &self.book),
        ] {
            for l in [Lang::En, Lang::Ru] {
                let s = group.of(l);
                for i in s.intents() {
                    for t in s.templates(i) {
                        out.push((origin, l, t));
                    }
                }
            }
        }
        out
    }

    /// The owner's intents that name no act among `rows` (a warning: acts come and go).
    pub fn unknown_intents(&self, rows: &[ToolRow]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in [&self.owner.en, &self.owner.ru] {
            for i in s.intents() {
                if !rows.iter().any(|r| r.name == i) && !out.iter().any(|o| o == i) {
                    out.push(i.to_owned());
                }
            }
        }
        out
    }

    /// The templates that serve `row` (its server's `serverInfo.name` is `server_name`), the
    /// owner's first, each with its language.
    pub fn serving(
        &self,
        row: &ToolRow,
        server_name: Option<&str>,
    ) -> Vec<(Origin, Lang, sentences::Template)> {
        let mut out = Vec::new();
        for lang in [Lang::En, Lang::Ru] {
            for t in self.owner.of(lang).templates(&row.name) {
                out.push((Origin::Owner, lang, t));
            }
        }
        if let Some(server) = server_name {
            let intent = format!("{server}::{}", row.tool);
            for lang in [Lang::En, Lang::Ru] {
                for t in self.book.of(lang).templates(&intent) {
                    out.push((Origin::Phrasebook, lang, t));
                }
            }
        }
        out
    }

    /// The best match of `text` to an act of `rows`: the owner's templates first, then the
    /// phrasebook's; in the language of the sentence first, then the other. `names` gives each
    /// server's `serverInfo.name`; `front` is the front end (`typed`, `voice`), given to the
    /// templates' `requires_context` with the language.
    pub fn route(
        &self,
        text: &str,
        lang: Lang,
        front: &str,
        rows: &[ToolRow],
        names: &BTreeMap<String, String>,
    ) -> Option<Routed> {
        let other = match lang {
            Lang::En => Lang::Ru,
            Lang::Ru => Lang::En,
        };
        for (origin, group) in [
            (Origin::Owner, &self.owner),
            (Origin::Phrasebook, &self.book),
        ] {
            for l in [lang, other] {
                let context = sentences::Context::new()
                    .with("language", code(l))
                    .with("front", front);
                for m in group.of(l).match_all(text, &context) {
                    let row = match origin {
                        Origin::Owner => rows.iter().find(|r| r.name == m.intent),
                        Origin::Phrasebook => {
                            m.intent.rsplit_once("::").and_then(|(server, tool)| {
                                rows.iter().find(|r| {
                                    r.tool == tool
                                        && names.get(&r.server).map(String::as_str) == Some(server)
                                })
                            })
                        }
                    };
                    let Some(row) = row else {
                        continue;
                    };
                    let slots: BTreeMap<String, Value> = m
                        .slots
                        .iter()
                        .map(|(k, v)| (k.clone(), as_written(text, v)))
                        .collect();
                    match arguments(&row.input_schema, &slots) {
                        // Words the schema refuses (a path where it wants a URL) are not what
                        // this template meant: the next match is tried.
                        Ok(arguments)
                            if allowlist::run::schema::validate(
                                &row.name,
                                &row.input_schema,
                                &arguments,
                            )
                            .is_err() =>
                        {
                            tracing::debug!(act = %row.name, template = %m.template.at, "a template's words do not fit its act's schema; the next match is tried");
                        }
                        Ok(arguments) => {
                            return Some(Routed {
                                act: row.name.clone(),
                                arguments,
                                template: m.template,
                                origin,
                            })
                        }
                        Err(slot) => tracing::warn!(
                            act = %row.name,
                            template = %m.template.at,
                            slot = %slot,
                            "a template's slot is not a property of its act's input schema; the match is not used"
                        ),
                    }
                }
            }
        }
        None
    }
}

/// A template as one plain sentence for `help`: each alternative's first choice, optionals left
/// out, permutations in their written order, a list as `{name}`, rules as `<rule>`.
pub fn sample(template: &str) -> String {
    fn group(chars: &[char], i: &mut usize, out: &mut String, optional: bool, depth: usize) {
        let mut first = true;
        let mut inner = String::new();
        while let Some(&c) = chars.get(*i) {
            *i += 1;
            match c {
                '\\' => {
                    if let Some(&n) = chars.get(*i) {
                        *i += 1;
                        if first {
                            inner.push(n);
                        }
                    }
                }
                '(' | '[' if depth < 32 => {
                    let mut sub = String::new();
                    group(chars, i, &mut sub, c == '[', depth + 1);
                    if first {
                        inner.push_str(&sub);
                    }
                }
                ')' | ']' => break,
                '|' => first = false,
                ';' => inner.push(' '),
                '{' => {
                    let mut name = String::new();
                    while let Some(&n) = chars.get(*i) {
                        *i += 1;
                        if n == '}' {
                            break;
                        }
                        name.push(n);
                    }
                    if first {
                        let list = name.split(':').next().unwrap_or("");
                        inner.push_str(&format!("{{{list}}}"));
                    }
                }
                c if first => inner.push(c),
                _ => {}
            }
        }
        if !optional {
            out.push_str(&inner);
        }
    }
    let chars: Vec<char> = template.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let before = i;
        group(&chars, &mut i, &mut out, false, 0);
        if i == before {
            i += 1;
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The longest sentence whose words are looked for as written.
const MAX_WRITTEN: usize = 2000;

/// A slot's value as the owner wrote it: the matcher takes words without the punctuation at
/// their edges (hassil's normalisation makes `https://x` `https//x`); a string that is not in
/// `text` as it is, but that a span of whole words of `text` normalises to, is that span. Any
/// other value (a list's, a number) is kept.
fn as_written(text: &str, value: &Value) -> Value {
    let Value::String(v) = value else {
        return value.clone();
    };
    if text.contains(v.as_str()) || text.len() > MAX_WRITTEN {
        return value.clone();
    }
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            text.char_indices()
                .filter(|(_, c)| c.is_whitespace())
                .map(|(i, c)| i + c.len_utf8()),
        )
        .collect();
    let ends: Vec<usize> = text
        .char_indices()
        .filter(|(_, c)| c.is_whitespace())
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let want = v.to_lowercase();
    for &a in &starts {
        for &b in ends.iter().filter(|&&b| b > a) {
            let Some(span) = text.get(a..b) else {
                continue;
            };
            if sentences::normalize(span).to_lowercase() == want {
                // The span without the punctuation a sentence ends with, when it still reads
                // the same ("fetch https://x.org." takes https://x.org).
                let bare = span.trim_end_matches(['?', '!', ',', ';', '.']);
                let span = if !bare.is_empty() && sentences::normalize(bare).to_lowercase() == want
                {
                    bare
                } else {
                    span
                };
                return Value::String(span.to_owned());
            }
        }
    }
    value.clone()
}

impl Templates {
    /// Which template routes `text` and to what, or why none does, in words: what `maven say
    /// --explain` prints.
    pub fn explain(
        &self,
        text: &str,
        lang: Lang,
        front: &str,
        rows: &[ToolRow],
        names: &BTreeMap<String, String>,
    ) -> String {
        use crate::phrases::en;
        if let Some(r) = self.route(text, lang, front, rows, names) {
            return en::template_matched(
                origin_words(r.origin),
                &r.template.text,
                &r.template.at.to_string(),
                &r.act,
                &Value::Object(r.arguments).to_string(),
            );
        }
        let Some((origin, _, m)) = self.match_sentence(text, None, front) else {
            return en::no_template();
        };
        let why = match origin {
            Origin::Owner => match rows.iter().find(|r| r.name == m.intent) {
                None => en::names_no_act(&m.intent),
                Some(row) => match arguments(&row.input_schema, &m.slots) {
                    Err(slot) => en::slot_not_in_schema(&slot, &row.name),
                    Ok(_) => en::not_used(),
                },
            },
            Origin::Phrasebook => match m.intent.rsplit_once("::") {
                Some((server, tool)) => {
                    let known: Vec<&str> = names
                        .iter()
                        .filter(|(_, v)| v.as_str() == server)
                        .map(|(k, _)| k.as_str())
                        .collect();
                    if known.is_empty() {
                        en::no_server_is(server)
                    } else {
                        en::no_act_for_tool(&known.join(", "), tool)
                    }
                }
                None => en::names_no_server(),
            },
        };
        en::matched_but(
            origin_words(origin),
            &m.template.text,
            &m.template.at.to_string(),
            &m.intent,
            &why,
        )
    }
}

fn origin_words(o: Origin) -> &'static str {
    crate::phrases::en::whose(o == Origin::Owner)
}

fn other(l: Lang) -> Lang {
    match l {
        Lang::En => Lang::Ru,
        Lang::Ru => Lang::En,
    }
}

/// The language's code, as sentence files write it.
pub fn code(l: Lang) -> &'static str {
    match l {
        Lang::En => "en",
        Lang::Ru => "ru",
    }
}

/// One step of a slot's path: a property, or an index into a list.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The most steps a slot's path may have, and the largest index it may name.
const MAX_PATH_STEPS: usize = 8;
const MAX_INDEX: usize = 64;

/// `a.b[0].c` as steps; `None` when it is not a path (an empty key, an index too large, too
/// deep, brackets that do not close).
fn path(slot: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    for part in slot.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && steps.is_empty() {
            return None;
        }
        if !key.is_empty() {
            steps.push(Step::Key(key.to_owned()));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let (n, after) = r.split_once(']')?;
            let n: usize = n.parse().ok().filter(|n| *n <= MAX_INDEX)?;
            steps.push(Step::Index(n));
            rest = after;
        }
        if !rest.is_empty() {
            return None;
        }
    }
    (steps.len() <= MAX_PATH_STEPS && !steps.is_empty()).then_some(steps)
}

/// Puts `value` at `steps` inside `at`, making the objects and lists on the way.
fn put(at: &mut Value, steps: &[Step], value: Value) {
    let Some((first, rest)) = steps.split_first() else {
        *at = value;
        return;
    };
    match first {
        Step::Key(k) => {
            if !at.is_object() {
                *at = Value::Object(Map::new());
            }
            if let Value::Object(m) = at {
                put(m.entry(k.clone()).or_insert(Value::Null), rest, value);
            }
        }
        Step::Index(i) => {
            if !at.is_array() {
                *at = Value::Array(Vec::new());
            }
            if let Value::Array(a) = at {
                while a.len() <= *i {
                    a.push(Value::Null);
                }
                if let Some(slot) = a.get_mut(*i) {
                    put(slot, rest, value);
                }
            }
        }
    }
}

/// The words of a slot as the type its schema names for them, when they read as one.
fn typed(schema: Option<&Value>, value: Value) -> Value {
    let kind = schema.and_then(|s| s.get("type")).and_then(Value::as_str);
    match (kind, value) {
        (Some("integer"), Value::String(s)) => match s.trim().parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::String(s),
        },
        (Some("number"), Value::String(s)) => match s.trim().parse::<f64>() {
            Ok(n) if n.is_finite() => serde_json::Number::from_f64(n)
                .map(Value::Number)
                .unwrap_or(Value::String(s)),
            _ => Value::String(s),
        },
        (Some("boolean"), Value::String(s)) => {
            match crate::phrases::boolean(s.trim().to_lowercase().as_str()) {
                Some(b) => Value::Bool(b),
                None => Value::String(s),
            }
        }
        (Some("array"), Value::String(s)) => Value::Array(vec![Value::String(s)]),
        // A range gives numbers; a whole one is written as an integer (3, not 3.0).
        (Some("integer" | "number") | None, Value::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => Value::Number(n),
        },
        (_, v) => v,
    }
}

/// A match's slots as the act's arguments; `Err(slot)` when a slot's first step is not a
/// property of `schema`.
fn arguments(
    schema: &Value,
    slots: &BTreeMap<String, Value>,
) -> Result<Map<String, Value>, String> {
    let props = schema.get("properties").and_then(Value::as_object);
    let mut out = Value::Object(Map::new());
    for (slot, value) in slots {
        let steps = path(slot).ok_or_else(|| slot.clone())?;
        let Some(Step::Key(first)) = steps.first() else {
            return Err(slot.clone());
        };
        let Some(prop) = props.and_then(|p| p.get(first)) else {
            return Err(slot.clone());
        };
        let value = if steps.len() == 1 {
            typed(Some(prop), value.clone())
        } else {
            value.clone()
        };
        put(&mut out, &steps, value);
    }
    Ok(match out {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

#[path = "tests/templates.rs"]
#[cfg(test)]
mod tests;
