//! Sentence templates in Home Assistant's format (hassil 3.x), matched without a model.
//!
//! # The format
//!
//! A sentence file (YAML, Home Assistant's `custom_sentences/<lang>/*.yaml`, or the compiled JSON
//! that the `home-assistant-intents` package ships) holds `language`, `intents` (each a list of
//! `data` blocks: `sentences`, fixed `slots`, `requires_context`, `excludes_context`, local
//! `lists` and `expansion_rules`, `metadata`, `required_keywords`), `lists`, `expansion_rules`
//! and `skip_words`. A template is words with:
//!
//! - `(a|b)` alternatives, `[a]` optionals, `(a;b;c)` permutations (any order);
//! - `{list}` or `{list:slot}` list references (`{@name}` captures for a response only, no
//!   slot; `{1..10:slot}` a range when no list has that name);
//! - `<rule>` expansion rules, inlined;
//! - `\` before a character makes it literal.
//!
//! A list is `values` (plain text, or `in` (a template) with `out` — any JSON value — and a
//! `context`), a `range` (`from`, `to`, `step`, `fractions`, `multiplier`, `digits`, `words`:
//! numbers as digits and, for English and Russian, as words: "twenty one", "двадцать один"), or
//! `wildcard: true` (any words, as said). A range's value is an integer when whole (`3`, as
//! hassil's Python int), else a number (`2.5`).
//!
//! A Maven extension, which hassil ignores: a list of `values` with `stem: true` also matches
//! each word of a value's plain text (`in` when it is not a template) by its Snowball stem in
//! the file's language (Russian, English and the other languages Snowball has), so the value
//! "лондон" matches "лондоне" and "cat" matches "cats"; the slot is the value's `out`, as for
//! the words written.
//!
//! # Matching
//!
//! Text is normalised as hassil does: whitespace runs made one space, NFC, `’` as `'`,
//! punctuation at the edges of words removed; characters compare lower-cased, `ё` as `е`. Skip
//! words are removed as whole words (the text with them is tried first, as hassil does). A
//! value's `context` joins the caller's [`Context`]; a block's `requires_context` and
//! `excludes_context` are checked against it, and filter the list values a block may match.
//!
//! When several templates match, the most specific wins, as hassil's `recognize_best` ranks:
//! fewer wildcards, then more literal characters matched, then fewer characters taken by
//! wildcards, then the intent's name, then the order of the data (intents, blocks, sentences
//! with wildcards and more text first, then the rest) and of hassil's search. The same input
//! always gives the same answer.
//!
//! Templates compile into one automaton of character steps, simulated with a set of states (see
//! `vm`): the work per character is bounded by the templates, never by the sentence, so
//! matching takes time linear in the sentence for any template set, where hassil backtracks.
//! [`Sentences::match_counted`] returns the steps taken, which the tests bound.
//!
//! # Bounds
//!
//! Each is refused with `FILE:LINE:COL` (or the key path of a JSON value) and why:
//! [`MAX_FILE_BYTES`], [`MAX_LIST_VALUES`], [`MAX_NESTING`], [`MAX_PERMUTATION`],
//! [`MAX_TEMPLATE_SIZE`], [`MAX_TOTAL_SIZE`], [`MAX_RANGE_NUMBERS`], a cycle of expansion rules,
//! a rule or list nobody defines. YAML anchors, aliases and tags are refused: sentence files
//! need none, and aliases are how a small file becomes a huge tree.
//!
//! The crate does no IO and does not panic on any input.

#![warn(clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap};

use serde_json::Value as J;

mod compile;
mod error;
mod limits;
mod load;
mod numbers;
mod template;
mod text;
mod tree;
mod vm;

pub use error::{Error, Location};

pub use limits::{
    MAX_FILE_BYTES, MAX_LIST_VALUES, MAX_NESTING, MAX_PERMUTATION, MAX_RANGE_NUMBERS,
    MAX_TEMPLATE_SIZE, MAX_TOTAL_SIZE,
};

/// `text` as the matcher sees it (hassil's `normalize_for_matching`: whitespace, NFC,
/// punctuation at the edges of words removed), before case is folded. A caller that wants a
/// wildcard's words exactly as written finds the span of its text that normalises to them.
pub fn normalize(text: &str) -> String {
    text::normalize_for_matching(text)
}

/// What the caller knows about the turn (for Maven: the language and the front end), checked by
/// `requires_context` and `excludes_context` together with what the matched values add.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context(Vec<(String, J)>);

impl Context {
    /// No context.
    pub fn new() -> Context {
        Context::default()
    }

    /// The context with `key` set to `value`.
    pub fn with(mut self, key: &str, value: impl Into<J>) -> Context {
        self.0.retain(|(k, _)| k != key);
        self.0.push((key.to_owned(), value.into()));
        self
    }
}

/// A template and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The intent it serves.
    pub intent: String,
    /// The template as written.
    pub text: String,
    /// Where (file and line, or the key path of a JSON value).
    pub at: Location,
}

/// One way a sentence matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    /// The intent.
    pub intent: String,
    /// Each slot's value: a list value's `out` (or the words said), a number (an integer when
    /// whole), a wildcard's
    /// words as said, a block's fixed slots, context values a `requires_context` copies.
    pub slots: BTreeMap<String, J>,
    /// The template that matched.
    pub template: Template,
    /// How many wildcards took words.
    pub wildcards: usize,
    /// How many characters wildcards took.
    pub wildcard_chars: usize,
    /// How many literal characters of the template matched.
    pub literal_chars: usize,
    /// The block's `metadata`.
    pub metadata: Option<J>,
    /// The context after matching (the caller's and the matched values').
    pub context: BTreeMap<String, J>,
}

/// Sentence data of one language, compiled for matching.
#[derive(Debug, Clone, Default)]
pub struct Sentences {
    data: load::Data,
    runtime: HashMap<String, load::ListDef>,
    program: compile::Program,
    scratch: Pool,
}

/// The matcher's tables, kept between calls (sized by the program, so not made anew for each
/// sentence); one per concurrent caller.
#[derive(Default)]
struct Pool(std::sync::Mutex<Vec<vm::Scratch>>);

impl Clone for Pool {
    fn clone(&self) -> Pool {
        Pool::default()
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pool")
    }
}

impl Pool {
    fn take(&self) -> vm::Scratch {
        self.0
            .lock()
            .ok()
            .and_then(|mut v| v.pop())
            .unwrap_or_default()
    }

    fn give(&self, s: vm::Scratch) {
        if let Ok(mut v) = self.0.lock() {
            if v.len() < 8 {
                v.push(s);
            }
        }
    }
}

fn file_loc(file: &str) -> Location {
    Location {
        file: file.to_owned(),
        line: 0,
        col: 0,
        path: String::new(),
    }
}

impl Sentences {
    /// No sentences.
    pub fn new() -> Sentences {
        Sentences::default()
    }

    /// Sentence data from a JSON value in hassil's shape (Home Assistant's
    /// `home_assistant_intents/data/<lang>.json`); `file` names it in errors.
    pub fn from_json(file: &str, value: &J) -> Result<Sentences, Error> {
        let mut s = Sentences::new();
        s.add_json(file, value)?;
        Ok(s)
    }

    /// Adds (merges) sentence data from a JSON value. On an error nothing changes.
    pub fn add_json(&mut self, file: &str, value: &J) -> Result<(), Error> {
        let node = tree::Node::from_json(file, value)?;
        self.add_node(&node)
    }

    /// Adds (merges) a YAML sentence file, as Home Assistant's custom sentences are written. On
    /// an error nothing changes.
    pub fn add_yaml(&mut self, file: &str, text: &str) -> Result<(), Error> {
        if text.len() > MAX_FILE_BYTES {
            return Err(Error::FileTooLarge {
                at: file_loc(file),
                size: text.len(),
                max: MAX_FILE_BYTES,
            });
        }
        let node = tree::Node::from_yaml(file, text)?;
        self.add_node(&node)
    }

    /// Adds (merges) several YAML sentence files, `(file, text)`, in order, and compiles once:
    /// what [`Sentences::add_yaml`] on each does, without compiling the data again after each
    /// file. A template may use the rules and lists of any of the files, as hassil's merged
    /// data does. On an error nothing changes.
    pub fn add_yaml_files(&mut self, files: &[(&str, &str)]) -> Result<(), Error> {
        let mut data = self.data.clone();
        for (file, text) in files {
            if text.len() > MAX_FILE_BYTES {
                return Err(Error::FileTooLarge {
                    at: file_loc(file),
                    size: text.len(),
                    max: MAX_FILE_BYTES,
                });
            }
            let node = tree::Node::from_yaml(file, text)?;
            data.merge(&node)?;
        }
        let program = compile::compile(&data, &self.runtime)?;
        self.data = data;
        self.program = program;
        Ok(())
    }

    fn add_node(&mut self, node: &tree::Node) -> Result<(), Error> {
        let mut data = self.data.clone();
        data.merge(node)?;
        let program = compile::compile(&data, &self.runtime)?;
        self.data = data;
        self.program = program;
        Ok(())
    }

    /// Sets a list the data names but does not hold (Home Assistant fills `area`, `name` and
    /// `floor` from the house), as hassil's `TextSlotList.from_strings`: each value matches
    /// itself and is its own output. It takes precedence over a list of the data of that name.
    pub fn set_list(&mut self, name: &str, values: &[String]) -> Result<(), Error> {
        let at = Location {
            file: format!("list {name}"),
            line: 0,
            col: 0,
            path: String::new(),
        };
        if values.len() > MAX_LIST_VALUES {
            return Err(Error::ListTooLong {
                at,
                list: name.to_owned(),
                max: MAX_LIST_VALUES,
            });
        }
        let list = load::strings_list(values, &at)?;
        let mut runtime = self.runtime.clone();
        runtime.insert(name.to_owned(), list);
        let program = compile::compile(&self.data, &runtime)?;
        self.runtime = runtime;
        self.program = program;
        Ok(())
    }

    /// The lists templates name that neither the data nor [`Sentences::set_list`] gives: such
    /// templates never match until the list is set.
    pub fn missing_lists(&self) -> &[String] {
        &self.program.missing_lists
    }

    /// The language of the data, when a file named one.
    pub fn language(&self) -> Option<&str> {
        self.data.language.as_deref()
    }

    /// The intents, in the order the data gives them.
    pub fn intents(&self) -> Vec<&str> {
        self.data.intents.iter().map(|i| i.name.as_str()).collect()
    }

    /// The templates that serve `intent`, with the file and place of each.
    pub fn templates(&self, intent: &str) -> Vec<Template> {
        self.program
            .templates
            .iter()
            .filter(|t| self.intent_name(t.intent) == intent)
            .map(|t| self.template_of(t))
            .collect()
    }

    fn intent_name(&self, i: u32) -> &str {
        self.data
            .intents
            .get(i as usize)
            .map_or("", |x| x.name.as_str())
    }

    fn template_of(&self, t: &compile::TemplateMeta) -> Template {
        Template {
            intent: self.intent_name(t.intent).to_owned(),
            text: t.text.clone(),
            at: t.at.clone(),
        }
    }

    /// The best match of `text`, as hassil's `recognize_best` ranks them, or `None`.
    pub fn match_best(&self, text: &str, context: &Context) -> Option<Match> {
        self.match_all(text, context).into_iter().next()
    }

    /// Every match of `text`, best first.
    pub fn match_all(&self, text: &str, context: &Context) -> Vec<Match> {
        self.match_counted(text, context).0
    }

    /// Every match of `text`, best first, and the steps the matcher took (threads moved or
    /// added): linear in the sentence's length for any templates.
    pub fn match_counted(&self, text: &str, context: &Context) -> (Vec<Match>, u64) {
        let p = &self.program;
        let with_skip = text::normalize_for_matching(text);
        let no_skip = text::remove_skip_words(&with_skip, &p.skip_words, text::Ends::Both);
        let had_skip = no_skip != with_skip;
        let keywords: Vec<&str> = no_skip.split_whitespace().collect();
        let haystack: String = format!("{with_skip}\n{no_skip}")
            .chars()
            .map(text::fold)
            .collect();
        let mut at_end: Option<String> = None;
        let mut at_start: Option<String> = None;
        // Whether each of the templates' required words is in the sentence, found out when a
        // template first asks: 0 not yet, 1 yes, 2 no.
        let mut present: Vec<u8> = vec![0; p.fragments.len()];
        // Which texts each template is tried on, in order: each text once, with its templates
        // (in order) and which of a template's texts it is.
        let mut runs: Vec<(String, Vec<u32>, Vec<u8>)> = Vec::new();
        let add_run =
            |runs: &mut Vec<(String, Vec<u32>, Vec<u8>)>, text: &str, ti: u32, ci: u8| match runs
                .iter_mut()
                .find(|(t, _, _)| t == text)
            {
                Some(r) => {
                    r.1.push(ti);
                    r.2.push(ci);
                }
                None => runs.push((text.to_owned(), vec![ti], vec![ci])),
            };
        for (ti, t) in p.templates.iter().enumerate() {
            let ti = ti as u32;
            let Some(block) = self
                .data
                .intents
                .get(t.intent as usize)
                .and_then(|i| i.data.get(t.data as usize))
            else {
                continue;
            };
            let mut has = |f: u32| -> bool {
                match present.get_mut(f as usize) {
                    Some(known @ 0) => {
                        let yes = p
                            .fragments
                            .get(f as usize)
                            .is_some_and(|w| haystack.contains(w.as_str()));
                        *known = if yes { 1 } else { 2 };
                        yes
                    }
                    Some(known) => *known == 1,
                    None => false,
                }
            };
            if !t
                .required
                .iter()
                .all(|clause| clause.iter().any(|&f| has(f)))
            {
                continue;
            }
            if let Some(kw) = &block.required_keywords {
                if !kw.iter().any(|k| keywords.contains(&k.as_str())) {
                    continue;
                }
            }
            if !context.0.is_empty() {
                if !block.requires.is_empty()
                    && !load::required_ok(&block.requires, &context.0, true)
                {
                    continue;
                }
                if !block.excludes.is_empty() && !load::excluded_ok(&block.excludes, &context.0) {
                    continue;
                }
            }
            let primary: &str = match t.kind {
                compile::Kind::WildOnly => &with_skip,
                compile::Kind::WildStart => at_end.get_or_insert_with(|| {
                    text::remove_skip_words(&with_skip, &p.skip_words, text::Ends::End)
                }),
                compile::Kind::WildEnd => at_start.get_or_insert_with(|| {
                    text::remove_skip_words(&with_skip, &p.skip_words, text::Ends::Start)
                }),
                compile::Kind::Plain => &no_skip,
            };
            if had_skip && primary == no_skip {
                add_run(&mut runs, &with_skip, ti, 0);
                add_run(&mut runs, primary, ti, 1);
            } else {
                add_run(&mut runs, primary, ti, 0);
            }
        }
        let mut steps = 0u64;
        let mut scratch = self.scratch.take();
        let mut found: Vec<(vm::Score, &str, u32, u8, usize, Match)> = Vec::new();
        for (text, templates, cands) in &runs {
            let input = vm::Input::new(&format!("{text} "));
            let vm::Run {
                done,
                ctxs,
                steps: n,
            } = vm::run(p, &input, templates, &context.0, &mut scratch);
            steps += n;
            for d in done {
                // A run's templates are in order.
                let ci = templates
                    .binary_search(&d.template)
                    .ok()
                    .and_then(|i| cands.get(i))
                    .copied()
                    .unwrap_or(0);
                if let Some(m) = self.finish(&d, &ctxs, &input) {
                    let name = self
                        .program
                        .templates
                        .get(d.template as usize)
                        .map_or("", |t| self.intent_name(t.intent));
                    found.push((d.score, name, d.template, ci, d.rank, m));
                }
            }
        }
        self.scratch.give(scratch);
        found.sort_by(|a, b| (a.0, a.1, a.2, a.3, a.4).cmp(&(b.0, b.1, b.2, b.3, b.4)));
        (found.into_iter().map(|f| f.5).collect(), steps)
    }

    fn finish(&self, d: &vm::Done, ctxs: &[Vec<(String, J)>], input: &vm::Input) -> Option<Match> {
        let p = &self.program;
        let t = p.templates.get(d.template as usize)?;
        let block = self
            .data
            .intents
            .get(t.intent as usize)?
            .data
            .get(t.data as usize)?;
        let ctx = ctxs.get(d.ctx as usize)?;
        if !block.excludes.is_empty() && !load::excluded_ok(&block.excludes, ctx) {
            return None;
        }
        let mut from_context: Vec<(String, J)> = Vec::new();
        for (k, want) in &block.requires {
            let (copy_to, want) = match want {
                J::Object(o) => (
                    match o.get("slot") {
                        Some(J::String(s)) => Some(s.clone()),
                        Some(J::Bool(true)) => Some(k.clone()),
                        _ => None,
                    },
                    o.get("value").cloned().unwrap_or(J::Null),
                ),
                other => (None, other.clone()),
            };
            let actual = ctx.iter().rev().find(|(ck, _)| ck == k).map(|(_, v)| v);
            let actual = match actual {
                Some(J::Object(o)) => o.get("value").cloned(),
                Some(v) => Some(v.clone()),
                None => None,
            };
            let ok = match (&want, &actual) {
                (J::Null, Some(a)) => !a.is_null(),
                (J::Null, None) => false,
                (J::Array(options), Some(a)) => options.contains(a) || want == *a,
                (w, Some(a)) => w == a,
                (_, None) => false,
            };
            if !ok {
                return None;
            }
            if let (Some(slot), Some(a)) = (copy_to, actual) {
                from_context.push((slot, a));
            }
        }
        let mut slots: BTreeMap<String, J> = BTreeMap::new();
        let mut node = d.slots.as_deref();
        // Newest first: an earlier entity of the same name is overwritten by a later one.
        while let Some(n) = node {
            let name = p.slot_names.get(n.slot as usize)?;
            if !slots.contains_key(name) {
                let said = |a: u32, b: u32| -> String {
                    input
                        .orig
                        .get(a as usize..b as usize)
                        .map(|c| c.iter().collect())
                        .unwrap_or_default()
                };
                let v = match &n.val {
                    vm::SlotVal::Value(v, a, b) => {
                        match p.values.get(*v as usize).and_then(|x| x.out.clone()) {
                            Some(out) => out,
                            None => J::String(said(*a, *b)),
                        }
                    }
                    vm::SlotVal::Number(f) => number(*f),
                    vm::SlotVal::Wild(a, b) => J::String(said(*a, *b).trim().to_owned()),
                };
                slots.insert(name.clone(), v);
            }
            node = n.next.as_deref();
        }
        let matched: Vec<String> = slots.keys().cloned().collect();
        for (k, v) in &block.slots {
            if !matched.contains(k) {
                slots.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in from_context {
            if !matched.contains(&k) {
                slots.insert(k, v);
            }
        }
        Some(Match {
            intent: self.intent_name(t.intent).to_owned(),
            slots,
            template: self.template_of(t),
            wildcards: d.score.wilds as usize,
            wildcard_chars: d.score.wild_len as usize,
            literal_chars: usize::try_from(-d.score.neg_literal).unwrap_or(0),
            metadata: block.metadata.clone(),
            context: ctx.iter().cloned().collect(),
        })
    }
}

/// A range's value as JSON: a whole number as an integer (`3`, as hassil's Python int), else a
/// number (`2.5`).
fn number(f: f64) -> J {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        J::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(J::Null, J::Number)
    }
}

/// Entry points for the fuzz targets (`fuzz/`); not part of the API.
#[doc(hidden)]
pub mod fuzzing {
    /// Parses `text` as one template, as a YAML sentence file, and as a template inside a
    /// file, then matches `text` against what loaded; never panics.
    pub fn template_and_file(text: &str) {
        let _ = crate::template::parse_sentence(text);
        let mut s = crate::Sentences::new();
        if let Err(e) = s.add_yaml("fuzz.yaml", text) {
            let _ = e.to_string();
        }
        let _ = s.match_all(text, &crate::Context::new());
        let quoted = serde_json::Value::String(text.to_owned());
        let file = serde_json::json!({
            "language": "en",
            "intents": {"X": {"data": [{"sentences": [quoted]}]}},
            "lists": {"l": {"values": ["a", "b c"]}, "n": {"range": {"from": 0, "to": 20}},
                      "w": {"wildcard": true}},
        });
        if let Ok(s) = crate::Sentences::from_json("fuzz.json", &file) {
            let _ = s.match_all(text, &crate::Context::new());
            let _ = s.match_all("a b c twenty one 7", &crate::Context::new());
        }
    }
}
