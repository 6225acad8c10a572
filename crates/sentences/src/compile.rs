//! Templates compiled into one program of character steps (a Thompson automaton): text as
//! characters, alternatives and optionals as splits, permutations spelled out, rules inlined,
//! lists, ranges and number words as shared subroutines. Bounded by [`crate::limits::MAX_TEMPLATE_SIZE`]
//! per template and [`crate::limits::MAX_TOTAL_SIZE`] in all; rule cycles are refused.

use std::collections::HashMap;

use serde_json::Value as J;

use crate::error::{Error, Location};
use crate::limits::{MAX_PERMUTATION, MAX_TEMPLATE_SIZE, MAX_TOTAL_SIZE};
use crate::load::{excluded_ok, required_ok, Data, DataDef, ListDef, RangeDef, RuleDef};
use crate::numbers;
use crate::template::{list_names, text_chunk_count, Expr, ListRef};
use crate::text::fold;

/// No slot (a capture, or a range's own value).
pub(crate) const NO_SLOT: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub(crate) enum Inst {
    /// Consume this (folded) character; a space also takes `-` and `_` (hassil's break-words).
    Char(char),
    /// Consume spaces (staying here), or go on.
    Skip,
    /// A literal chunk: at a word start go to `strip` (leading spaces of text and input
    /// skipped), else to `full`; a chunk of spaces only may be skipped at the end of the input.
    Chunk {
        full: u32,
        strip: u32,
        space_only: bool,
        end: u32,
    },
    /// The end of a chunk: the word-start flag it leaves and the literal characters it counts.
    ChunkEnd {
        sow: bool,
        score: u32,
    },
    Split(Vec<u32>),
    Jmp(u32),
    /// Enter a list, range or number-word subroutine, coming back to `ret`.
    Call {
        sub: u32,
        slot: u32,
        ret: u32,
    },
    /// One word of a value of a `stem: true` list: any word of the sentence whose Snowball
    /// stem is `Program::stems[stem]`, read at once, then one character a step to its end.
    Stem {
        stem: u32,
    },
    /// A list value matched: its index in `Program::values`.
    ValueEnd(u32),
    /// A number of the range said in words: read at once where a thread enters (see
    /// `numbers::Lexicon`), then one character a step to the end of the words.
    Words {
        range: u32,
        lex: u32,
    },
    Digit,
    /// Digits matched: check greediness and the range, record the number.
    DigitsEnd {
        range: u32,
    },
    WildOpen {
        slot: u32,
    },
    WildAny,
    WildClose,
    Match {
        template: u32,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct ValueOut {
    /// `None`: the words said.
    pub(crate) out: Option<J>,
    pub(crate) context: Vec<(String, J)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Plain,
    /// The sentence is one wildcard.
    WildOnly,
    /// Starts with a wildcard (skip words removed at the end only).
    WildStart,
    /// Ends with a wildcard (skip words removed at the start only).
    WildEnd,
}

#[derive(Debug, Clone)]
pub(crate) struct TemplateMeta {
    pub(crate) intent: u32,
    pub(crate) data: u32,
    pub(crate) entry: u32,
    pub(crate) kind: Kind,
    pub(crate) text: String,
    pub(crate) at: Location,
    /// Words a matching sentence must contain: one of each clause (hassil's
    /// `get_required_clauses`), folded, as indices into `Program::fragments`. A sound filter:
    /// it skips only templates that cannot match.
    pub(crate) required: Vec<Vec<u32>>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Program {
    pub(crate) insts: Vec<Inst>,
    /// Templates in hassil's order: intents, their data blocks, sentences (wildcard ones with
    /// more text first).
    pub(crate) templates: Vec<TemplateMeta>,
    pub(crate) values: Vec<ValueOut>,
    pub(crate) ranges: Vec<RangeDef>,
    /// The number words of each language a range is said in.
    pub(crate) lexicons: Vec<(String, &'static numbers::Lexicon)>,
    pub(crate) slot_names: Vec<String>,
    /// The stemmer of the language, when Snowball has one.
    pub(crate) stemmer: Option<rust_stemmers::Algorithm>,
    /// The stems of the words of `stem: true` lists' values, each with its number.
    pub(crate) stems: HashMap<String, u32>,
    /// The templates' required words, each once.
    pub(crate) fragments: Vec<String>,
    pub(crate) skip_words: Vec<Vec<char>>,
    pub(crate) language: String,
    /// Lists templates name that neither the data nor the caller gives.
    pub(crate) missing_lists: Vec<String>,
}

/// A subroutine's list: its name, where it was found, and the block it is filtered for.
type SubKey = (String, u8, Option<(u32, u32)>);

struct Builder<'a> {
    data: &'a Data,
    runtime: &'a HashMap<String, ListDef>,
    p: Program,
    slot_ids: HashMap<String, u32>,
    fragment_ids: HashMap<String, u32>,
    subs: HashMap<SubKey, u32>,
    range_subs: HashMap<SubKey, u32>,
    pending: Vec<(u32, Pending)>,
}

enum Pending {
    List(
        Vec<crate::load::ValueDef>,
        Option<(u32, u32)>,
        Location,
        bool,
    ),
    Range(RangeDef),
}

/// Where a template is being compiled: its data block, for local rules and lists.
struct Scope<'a, 'b> {
    block: Option<&'a DataDef>,
    block_id: Option<(u32, u32)>,
    at: &'b Location,
    start: usize,
    in_value: bool,
    rules: Vec<String>,
}

impl<'a> Builder<'a> {
    fn pc(&self) -> u32 {
        self.p.insts.len() as u32
    }

    fn push(&mut self, i: Inst, s: &Scope<'_, '_>) -> Result<u32, Error> {
        let pc = self.pc();
        if self.p.insts.len().saturating_sub(s.start) > MAX_TEMPLATE_SIZE {
            return Err(Error::TooLarge {
                at: s.at.clone(),
                max: MAX_TEMPLATE_SIZE,
                why: "rules inlined and permutations spelled out".to_owned(),
            });
        }
        if self.p.insts.len() > MAX_TOTAL_SIZE {
            return Err(Error::TotalTooLarge {
                at: s.at.clone(),
                max: MAX_TOTAL_SIZE,
            });
        }
        self.p.insts.push(i);
        Ok(pc)
    }

    fn set(&mut self, pc: u32, i: Inst) {
        if let Some(slot) = self.p.insts.get_mut(pc as usize) {
            *slot = i;
        }
    }

    /// The Snowball stems of a value's words, interned, when the language has a stemmer and
    /// every word has a stem.
    fn stems_of(&mut self, text: &str) -> Option<Vec<u32>> {
        let algorithm = self.p.stemmer?;
        let stemmer = rust_stemmers::Stemmer::create(algorithm);
        let mut out = Vec::new();
        for word in text.split_whitespace() {
            let folded: String = word.chars().map(fold).collect();
            let stem = crate::text::stem(&stemmer, &folded)?;
            let next = self.p.stems.len() as u32;
            let id = *self.p.stems.entry(stem).or_insert(next);
            out.push(id);
        }
        (!out.is_empty()).then_some(out)
    }

    fn fragment(&mut self, f: String) -> u32 {
        if let Some(&id) = self.fragment_ids.get(&f) {
            return id;
        }
        let id = self.p.fragments.len() as u32;
        self.p.fragments.push(f.clone());
        self.fragment_ids.insert(f, id);
        id
    }

    fn slot(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.slot_ids.get(name) {
            return id;
        }
        let id = self.p.slot_names.len() as u32;
        self.p.slot_names.push(name.to_owned());
        self.slot_ids.insert(name.to_owned(), id);
        id
    }

    fn chunk(&mut self, text: &str, count: bool, s: &Scope<'_, '_>) -> Result<(), Error> {
        if text.is_empty() {
            return Ok(());
        }
        let folded: Vec<char> = text.chars().map(fold).collect();
        let stripped: Vec<char> = text.trim_start().chars().map(fold).collect();
        let score = if count {
            text.trim().chars().count() as u32
        } else {
            0
        };
        let sow = text.ends_with([' ', '\'']);
        let space_only = text.chars().all(|c| c.is_whitespace());
        let head = self.push(Inst::Jmp(0), s)?;
        let full = self.pc();
        for &c in &folded {
            self.push(Inst::Char(c), s)?;
        }
        let jmp = self.push(Inst::Jmp(0), s)?;
        let strip = self.push(Inst::Skip, s)?;
        for &c in &stripped {
            self.push(Inst::Char(c), s)?;
        }
        let end = self.push(Inst::ChunkEnd { sow, score }, s)?;
        self.set(jmp, Inst::Jmp(end));
        self.set(
            head,
            Inst::Chunk {
                full,
                strip,
                space_only,
                end: end + 1,
            },
        );
        Ok(())
    }

    fn alt(&mut self, items: &[Expr], count: bool, s: &mut Scope<'a, '_>) -> Result<(), Error> {
        let split = self.push(Inst::Split(Vec::new()), s)?;
        let mut entries = Vec::with_capacity(items.len());
        let mut jumps = Vec::with_capacity(items.len());
        for item in items {
            entries.push(self.pc());
            self.expr(item, count, s)?;
            jumps.push(self.push(Inst::Jmp(0), s)?);
        }
        let end = self.pc();
        for j in jumps {
            self.set(j, Inst::Jmp(end));
        }
        self.set(split, Inst::Split(entries));
        Ok(())
    }

    fn perm(&mut self, items: &[&Expr], count: bool, s: &mut Scope<'a, '_>) -> Result<(), Error> {
        if items.len() == 1 {
            return self.expr(items[0], count, s);
        }
        let split = self.push(Inst::Split(Vec::new()), s)?;
        let mut entries = Vec::new();
        let mut jumps = Vec::new();
        for i in 0..items.len() {
            entries.push(self.pc());
            self.expr(items[i], count, s)?;
            let rest: Vec<&Expr> = items
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, e)| *e)
                .collect();
            self.perm(&rest, count, s)?;
            jumps.push(self.push(Inst::Jmp(0), s)?);
        }
        let end = self.pc();
        for j in jumps {
            self.set(j, Inst::Jmp(end));
        }
        self.set(split, Inst::Split(entries));
        Ok(())
    }

    fn find_list(&self, name: &str, s: &Scope<'a, '_>) -> Option<(&'a ListDef, u8)> {
        if let Some(l) = s.block.and_then(|b| b.lists.get(name)) {
            // Local lists are keyed by their block.
            return Some((l, 2));
        }
        if let Some(l) = self.runtime.get(name) {
            return Some((l, 1));
        }
        self.data.lists.get(name).map(|l| (l, 0))
    }

    fn list(&mut self, l: &ListRef, s: &mut Scope<'a, '_>) -> Result<(), Error> {
        if s.in_value {
            return Err(Error::Template {
                at: s.at.clone(),
                template: format!("{{{}}}", l.list),
                why: "a list value may not name a list".to_owned(),
            });
        }
        let slot = if l.capture {
            NO_SLOT
        } else {
            self.slot(&l.slot)
        };
        let found = self.find_list(&l.list, s);
        let inline;
        let (def, source) = match found {
            Some(x) => x,
            None => match l.inline_range {
                Some((from, to, step)) if from <= to && step > 0 => {
                    inline = ListDef::Range(RangeDef {
                        from,
                        to,
                        step,
                        fractions: 0,
                        multiplier: None,
                        digits: true,
                        words: true,
                        words_language: None,
                    });
                    (&inline, 3)
                }
                _ => {
                    // hassil fails such a template when it is tried; here it never matches,
                    // and the list is named for the caller to report.
                    if !self.p.missing_lists.contains(&l.list) {
                        self.p.missing_lists.push(l.list.clone());
                    }
                    self.push(Inst::Split(Vec::new()), s)?;
                    return Ok(());
                }
            },
        };
        match def {
            ListDef::Wildcard => {
                self.push(Inst::WildOpen { slot }, s)?;
                self.push(Inst::WildAny, s)?;
                self.push(Inst::WildClose, s)?;
            }
            ListDef::Text(values, at, stem) => {
                // Values are filtered by the block's context, so a block with context gets its
                // own copy of the list; a local list is its block's own.
                let filtered = s
                    .block
                    .is_some_and(|b| !b.requires.is_empty() || !b.excludes.is_empty());
                let key_block = if filtered || source == 2 {
                    s.block_id
                } else {
                    None
                };
                let key = (l.list.clone(), source, key_block);
                let sub = match self.subs.get(&key) {
                    Some(&sub) => sub,
                    None => {
                        let kept: Vec<crate::load::ValueDef> = values
                            .iter()
                            .filter(|v| match s.block {
                                Some(b) => {
                                    (b.requires.is_empty()
                                        || required_ok(&b.requires, &v.context, true))
                                        && (b.excludes.is_empty()
                                            || excluded_ok(&b.excludes, &v.context))
                                }
                                None => true,
                            })
                            .cloned()
                            .collect();
                        // A placeholder until the subroutine is laid out after the templates.
                        let sub = self.pending.len() as u32;
                        self.pending
                            .push((u32::MAX, Pending::List(kept, s.block_id, at.clone(), *stem)));
                        let id = u32::MAX - 1 - sub;
                        self.subs.insert(key, id);
                        id
                    }
                };
                let ret = self.pc() + 1;
                self.push(Inst::Call { sub, slot, ret }, s)?;
            }
            ListDef::Range(r) => {
                let key = (
                    l.list.clone(),
                    source,
                    if source == 2 { s.block_id } else { None },
                );
                let sub = match self.range_subs.get(&key) {
                    Some(&sub) => sub,
                    None => {
                        let sub = self.pending.len() as u32;
                        self.pending.push((u32::MAX, Pending::Range(r.clone())));
                        let id = u32::MAX - 1 - sub;
                        self.range_subs.insert(key, id);
                        id
                    }
                };
                let ret = self.pc() + 1;
                self.push(Inst::Call { sub, slot, ret }, s)?;
            }
        }
        Ok(())
    }

    fn rule(&mut self, name: &str, count: bool, s: &mut Scope<'a, '_>) -> Result<(), Error> {
        let body: Option<&'a RuleDef> = s
            .block
            .and_then(|b| b.rules.get(name))
            .or_else(|| self.data.rules.get(name));
        let Some(body) = body else {
            return Err(Error::MissingRule {
                at: s.at.clone(),
                rule: name.to_owned(),
            });
        };
        if s.rules.iter().any(|r| r == name) {
            let mut cycle: Vec<String> = s
                .rules
                .iter()
                .skip_while(|r| *r != name)
                .map(|r| format!("<{r}>"))
                .collect();
            cycle.push(format!("<{name}>"));
            return Err(Error::RuleCycle {
                at: body.at.clone(),
                cycle: cycle.join(" -> "),
            });
        }
        if s.rules.len() >= crate::limits::MAX_NESTING {
            return Err(Error::TooDeep {
                at: s.at.clone(),
                max: crate::limits::MAX_NESTING,
            });
        }
        s.rules.push(name.to_owned());
        let r = self.expr(&body.expr, count, s);
        s.rules.pop();
        r
    }

    fn expr(&mut self, e: &Expr, count: bool, s: &mut Scope<'a, '_>) -> Result<(), Error> {
        match e {
            Expr::Text(t) => self.chunk(t, count, s),
            Expr::Seq(items) => {
                for i in items {
                    self.expr(i, count, s)?;
                }
                Ok(())
            }
            Expr::Alt(items) => self.alt(items, count, s),
            Expr::Perm(items) => {
                if items.len() > MAX_PERMUTATION {
                    return Err(Error::TooLarge {
                        at: s.at.clone(),
                        max: MAX_TEMPLATE_SIZE,
                        why: format!(
                            "a permutation of {} items; at most {MAX_PERMUTATION}",
                            items.len()
                        ),
                    });
                }
                let refs: Vec<&Expr> = items.iter().collect();
                self.perm(&refs, count, s)
            }
            Expr::List(l) => self.list(l, s),
            Expr::Rule(r) => self.rule(r, count, s),
        }
    }

    /// Lays out the subroutines the templates called, and points the calls at them.
    fn subroutines(&mut self) -> Result<(), Error> {
        let mut i = 0;
        while i < self.pending.len() {
            let entry = self.pc();
            let job = std::mem::replace(&mut self.pending[i].1, Pending::Range(empty_range()));
            self.pending[i].0 = entry;
            match job {
                Pending::List(values, block_id, at, stem) => {
                    let block = block_id.and_then(|(it, d)| {
                        self.data
                            .intents
                            .get(it as usize)
                            .and_then(|x| x.data.get(d as usize))
                    });
                    let mut s = Scope {
                        block,
                        block_id,
                        at: &at,
                        start: usize::MAX,
                        in_value: true,
                        rules: Vec::new(),
                    };
                    let split = self.push(Inst::Split(Vec::new()), &s)?;
                    let mut entries = Vec::new();
                    for v in &values {
                        if matches!(&v.input, Expr::Text(t) if t.trim().is_empty()) {
                            continue;
                        }
                        entries.push(self.pc());
                        let by_stem = match (&v.input, stem) {
                            (Expr::Text(t), true) => self.stems_of(t),
                            _ => None,
                        };
                        let alt = match by_stem {
                            Some(_) => Some(self.push(Inst::Split(Vec::new()), &s)?),
                            None => None,
                        };
                        let exact = self.pc();
                        self.expr(&v.input, false, &mut s)?;
                        if let (Some(alt), Some(stems)) = (alt, by_stem) {
                            let jmp = self.push(Inst::Jmp(0), &s)?;
                            let by = self.pc();
                            for stem in stems {
                                self.push(Inst::Stem { stem }, &s)?;
                            }
                            let end = self.pc();
                            self.set(jmp, Inst::Jmp(end));
                            self.set(alt, Inst::Split(vec![exact, by]));
                        }
                        let id = self.p.values.len() as u32;
                        self.p.values.push(ValueOut {
                            out: v.out.clone(),
                            context: v.context.clone(),
                        });
                        self.push(Inst::ValueEnd(id), &s)?;
                    }
                    self.set(split, Inst::Split(entries));
                }
                Pending::Range(r) => {
                    let at = Location {
                        file: String::new(),
                        line: 0,
                        col: 0,
                        path: String::new(),
                    };
                    let s = Scope {
                        block: None,
                        block_id: None,
                        at: &at,
                        start: usize::MAX,
                        in_value: true,
                        rules: Vec::new(),
                    };
                    let id = self.p.ranges.len() as u32;
                    self.p.ranges.push(r.clone());
                    let split = self.push(Inst::Split(Vec::new()), &s)?;
                    let mut entries = Vec::new();
                    if r.digits {
                        entries.push(self.pc());
                        self.push(Inst::Skip, &s)?;
                        let minus = self.push(Inst::Split(Vec::new()), &s)?;
                        let ch = self.push(Inst::Char('-'), &s)?;
                        let first = self.push(Inst::Digit, &s)?;
                        self.set(minus, Inst::Split(vec![ch, first]));
                        let lp = self.push(Inst::Split(Vec::new()), &s)?;
                        let more = self.push(Inst::Digit, &s)?;
                        self.push(Inst::Jmp(lp), &s)?;
                        let mut after = vec![more];
                        if r.fractions != 0 {
                            let sep = self.push(Inst::Split(Vec::new()), &s)?;
                            let dot = self.push(Inst::Char('.'), &s)?;
                            let j1 = self.push(Inst::Jmp(0), &s)?;
                            let comma = self.push(Inst::Char(','), &s)?;
                            let fd = self.push(Inst::Digit, &s)?;
                            self.set(j1, Inst::Jmp(fd));
                            self.set(sep, Inst::Split(vec![dot, comma]));
                            let fl = self.push(Inst::Split(Vec::new()), &s)?;
                            let fmore = self.push(Inst::Digit, &s)?;
                            self.push(Inst::Jmp(fl), &s)?;
                            let fend = self.push(Inst::DigitsEnd { range: id }, &s)?;
                            self.set(fl, Inst::Split(vec![fmore, fend]));
                            after.push(sep);
                        }
                        let end = self.push(Inst::DigitsEnd { range: id }, &s)?;
                        after.push(end);
                        self.set(lp, Inst::Split(after));
                    }
                    let lang = r
                        .words_language
                        .clone()
                        .unwrap_or_else(|| self.p.language.clone());
                    if r.words && r.fractions == 0 {
                        let lex = match self.p.lexicons.iter().position(|l| l.0 == lang) {
                            Some(x) => x,
                            None => {
                                self.p
                                    .lexicons
                                    .push((lang.clone(), numbers::Lexicon::of(&lang)));
                                self.p.lexicons.len() - 1
                            }
                        };
                        if self.p.lexicons.get(lex).is_some_and(|l| !l.1.is_empty()) {
                            entries.push(self.push(
                                Inst::Words {
                                    range: id,
                                    lex: lex as u32,
                                },
                                &s,
                            )?);
                        }
                    }
                    self.set(split, Inst::Split(entries));
                }
            }
            i += 1;
        }
        // Point the calls at the subroutines.
        let table: Vec<u32> = self.pending.iter().map(|(e, _)| *e).collect();
        for inst in &mut self.p.insts {
            if let Inst::Call { sub, .. } = inst {
                let idx = (u32::MAX - 1 - *sub) as usize;
                if let Some(&e) = table.get(idx) {
                    *sub = e;
                }
            }
        }
        Ok(())
    }
}

fn empty_range() -> RangeDef {
    RangeDef {
        from: 0,
        to: 0,
        step: 1,
        fractions: 0,
        multiplier: None,
        digits: true,
        words: false,
        words_language: None,
    }
}

fn is_wild(e: &Expr, data: &Data, runtime: &HashMap<String, ListDef>, block: &DataDef) -> bool {
    // hassil looks the list up among the global and the caller's lists.
    let Expr::List(l) = e else { return false };
    let _ = block;
    let found = runtime.get(&l.list).or_else(|| data.lists.get(&l.list));
    matches!(found, Some(ListDef::Wildcard))
}

/// Compiles the data (and the caller's lists) into a program.
pub(crate) fn compile(data: &Data, runtime: &HashMap<String, ListDef>) -> Result<Program, Error> {
    let mut b = Builder {
        data,
        runtime,
        p: Program {
            language: data.language.clone().unwrap_or_default(),
            stemmer: data.language.as_deref().and_then(crate::text::stemmer_of),
            skip_words: crate::text::skip_word_table(&data.skip_words),
            ..Program::default()
        },
        slot_ids: HashMap::new(),
        fragment_ids: HashMap::new(),
        subs: HashMap::new(),
        range_subs: HashMap::new(),
        pending: Vec::new(),
    };
    let wildcard_lists: Vec<&str> = data
        .lists
        .iter()
        .filter(|(_, l)| matches!(l, ListDef::Wildcard))
        .map(|(n, _)| n.as_str())
        .collect();
    let mut memo: HashMap<String, Vec<Vec<String>>> = HashMap::new();
    for (ii, intent) in data.intents.iter().enumerate() {
        for (di, block) in intent.data.iter().enumerate() {
            // hassil's order: sentences with wildcards and more text first, others after.
            let mut order: Vec<(i64, usize)> = block
                .sentences
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let mut names = Vec::new();
                    list_names(&s.expr, &mut names);
                    let wild = names.iter().any(|n| wildcard_lists.contains(n));
                    (
                        if wild {
                            -(text_chunk_count(&s.expr) as i64)
                        } else {
                            0
                        },
                        i,
                    )
                })
                .collect();
            order.sort();
            for (_, si) in order {
                let sentence = &block.sentences[si];
                let kind = match &sentence.expr {
                    Expr::Seq(items)
                        if items.len() == 1 && is_wild(&items[0], data, runtime, block) =>
                    {
                        Kind::WildOnly
                    }
                    Expr::Seq(items)
                        if items.len() > 1 && is_wild(&items[0], data, runtime, block) =>
                    {
                        Kind::WildStart
                    }
                    Expr::Seq(items)
                        if items.len() > 1
                            && items
                                .last()
                                .is_some_and(|l| is_wild(l, data, runtime, block)) =>
                    {
                        Kind::WildEnd
                    }
                    _ => Kind::Plain,
                };
                let entry = b.pc();
                let mut s = Scope {
                    block: Some(block),
                    block_id: Some((ii as u32, di as u32)),
                    at: &sentence.at,
                    start: entry as usize,
                    in_value: false,
                    rules: Vec::new(),
                };
                b.expr(&sentence.expr, true, &mut s)?;
                let template = b.p.templates.len() as u32;
                b.push(Inst::Match { template }, &s)?;
                let required: Vec<Vec<u32>> = required(&sentence.expr, data, block, 0, &mut memo)
                    .into_iter()
                    .map(|clause| clause.into_iter().map(|f| b.fragment(f)).collect())
                    .collect();
                b.p.templates.push(TemplateMeta {
                    intent: ii as u32,
                    data: di as u32,
                    entry,
                    kind,
                    text: sentence.text.clone(),
                    at: sentence.at.clone(),
                    required,
                });
            }
        }
    }
    b.subroutines()?;
    Ok(b.p)
}

/// hassil's `_required_clauses`: literal words any match must contain, in conjunctive form.
///
/// `memo` holds what the data's shared rules require (a block's own rules are not kept): any
/// clause found is a sound filter, so a rule's clauses found once serve every use.
fn required(
    e: &Expr,
    data: &Data,
    block: &DataDef,
    depth: usize,
    memo: &mut HashMap<String, Vec<Vec<String>>>,
) -> Vec<Vec<String>> {
    if depth > 24 {
        return Vec::new();
    }
    let add = |out: &mut Vec<Vec<String>>, c: Vec<String>| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    match e {
        Expr::Text(t) => {
            let mut out = Vec::new();
            for piece in t.split_whitespace() {
                if !piece
                    .chars()
                    .any(|c| ".。,，?¿？؟!¡！;；:：’…—–―".contains(c))
                {
                    add(&mut out, vec![piece.chars().map(fold).collect()]);
                }
            }
            out
        }
        Expr::Alt(items) => {
            let optional = matches!(items.last(), Some(Expr::Text(t)) if t.is_empty());
            if optional || items.is_empty() {
                return Vec::new();
            }
            let mut merged: Vec<String> = Vec::new();
            for item in items {
                let branch = required(item, data, block, depth + 1, memo);
                let Some(smallest) = branch.iter().min_by_key(|c| c.len()) else {
                    return Vec::new();
                };
                for f in smallest {
                    if !merged.contains(f) {
                        merged.push(f.clone());
                    }
                }
            }
            vec![merged]
        }
        Expr::Seq(items) | Expr::Perm(items) => {
            let mut out = Vec::new();
            for item in items {
                for c in required(item, data, block, depth + 1, memo) {
                    add(&mut out, c);
                }
            }
            out
        }
        Expr::Rule(r) => match block.rules.get(r).or_else(|| data.rules.get(r)) {
            Some(body) => {
                let shared = !block.rules.contains_key(r);
                if shared {
                    if let Some(c) = memo.get(r) {
                        return c.clone();
                    }
                }
                let c = required(&body.expr, data, block, depth + 1, memo);
                if shared {
                    memo.insert(r.clone(), c.clone());
                }
                c
            }
            None => Vec::new(),
        },
        Expr::List(_) => Vec::new(),
    }
}
