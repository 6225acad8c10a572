//! The matcher: a set-of-states simulation of the program over the sentence's characters (a
//! Pike VM). Threads advance together one character at a time; two threads in the same state
//! (the same step, word-start flag, open list or wildcard, and context) have the same future,
//! so only the better one is kept: the one with the better score so far, or, scores equal, the
//! one hassil's depth-first search would have found first (kept by the order of the thread
//! list). The work per character is bounded by the program, never by the sentence: matching is
//! linear in the sentence's length for any templates.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use serde_json::Value as J;

use crate::compile::{Inst, Program, NO_SLOT};

const NONE: u32 = u32::MAX;

/// The sentence as matching sees it.
pub(crate) struct Input {
    /// Folded characters (lower case, ё as е).
    pub(crate) s: Vec<char>,
    /// The characters as said (same length).
    pub(crate) orig: Vec<char>,
}

impl Input {
    pub(crate) fn new(text: &str) -> Input {
        let orig: Vec<char> = text.chars().collect();
        let s = orig.iter().map(|&c| crate::text::fold(c)).collect();
        Input { s, orig }
    }
}

/// A slot's value as recorded while matching.
#[derive(Debug, Clone)]
pub(crate) enum SlotVal {
    /// A list value (index into `Program::values`) and the span said.
    Value(u32, u32, u32),
    /// A number, said in digits or in words.
    Number(f64),
    /// A wildcard's span.
    Wild(u32, u32),
}

#[derive(Debug)]
pub(crate) struct SlotNode {
    pub(crate) slot: u32,
    pub(crate) val: SlotVal,
    pub(crate) next: Option<Rc<SlotNode>>,
}

/// hassil's ranking, lowest first: fewer wildcards, more literal characters, fewer characters
/// taken by wildcards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Score {
    pub(crate) wilds: u32,
    pub(crate) neg_literal: i64,
    pub(crate) wild_len: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Frame {
    ret: u32,
    start: u32,
    sow: bool,
    slot: u32,
}

#[derive(Debug, Clone, Copy)]
struct Wild {
    slot: u32,
    start: u32,
    end: u32,
}

#[derive(Debug, Clone)]
struct Thread {
    pc: u32,
    sow: bool,
    frame: Option<Frame>,
    wild: Option<Wild>,
    ctx: u32,
    score: Score,
    slots: Option<Rc<SlotNode>>,
    template: u32,
    /// Inside number words or a stemmed word read at once: the reading (index into
    /// `Vm::spelled`), else `NONE`.
    wait: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    wait: u32,
    pc: u32,
    sow: bool,
    frame: Option<Frame>,
    wild: Option<(u32, bool)>,
    ctx: u32,
}

/// A multiply-rotate hash (as rustc's FxHasher) for the matcher's small integer keys (the
/// program's own and positions, never the sentence's text), where SipHash is slow.
#[derive(Default, Clone, Copy)]
pub(crate) struct Fx(u64);

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

impl Thread {
    fn key(&self) -> Key {
        Key {
            wait: self.wait,
            pc: self.pc,
            sow: self.sow,
            frame: self.frame,
            wild: self.wild.map(|w| (w.slot, w.start != NONE)),
            ctx: self.ctx,
        }
    }

    /// The score with an open wildcard's characters counted.
    fn effective(&self) -> Score {
        let mut s = self.score;
        if let Some(w) = self.wild {
            if w.start != NONE {
                s.wild_len += w.end - w.start;
            }
        }
        s
    }

    fn push_slot(&mut self, slot: u32, val: SlotVal) {
        if slot == NO_SLOT {
            return;
        }
        self.slots = Some(Rc::new(SlotNode {
            slot,
            val,
            next: self.slots.take(),
        }));
    }
}

/// A complete match of one template.
#[derive(Debug)]
pub(crate) struct Done {
    pub(crate) template: u32,
    pub(crate) rank: usize,
    pub(crate) score: Score,
    pub(crate) slots: Option<Rc<SlotNode>>,
    pub(crate) ctx: u32,
}

struct Vm<'a> {
    p: &'a Program,
    seen: &'a mut Scratch,
    input: &'a Input,
    steps: u64,
    ctxs: Vec<Vec<(String, J)>>,
    merged: FxMap<(u32, u32), u32>,
    stack: Vec<Item>,
    /// Numbers said in words, read where a thread entered a range: (range, position) to a run
    /// of `spelled`.
    spelled_at: FxMap<(u32, u32), (u32, u32)>,
    spelled: Vec<(u32, crate::numbers::Spelled)>,
    /// The sentence's words stemmed, by where they start: (end, stem), `None` when not a word.
    stemmed: FxMap<u32, Option<(u32, u32)>>,
    stemmer: Option<rust_stemmers::Stemmer>,
}

/// Work of the closure: a thread to follow, or a consuming thread to put in the list once the
/// threads of higher priority it leads to are in.
enum Item {
    Follow(Thread),
    Insert(Thread, Score),
}

struct List {
    threads: Vec<(Thread, bool)>,
}

impl List {
    fn new() -> List {
        List {
            threads: Vec::new(),
        }
    }
}

/// The states of one position: for each key the best score reached and the place of its
/// thread in the list (`usize::MAX` for a state that consumes nothing). A dense table indexed
/// by the step, each step's keys (usually one: other open lists, wildcards or contexts add
/// more) chained; cleared for each position by a new generation, never by a sweep.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    stamp: Vec<u32>,
    head: Vec<u32>,
    generation: u32,
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    key: Key,
    best: Score,
    idx: usize,
    next: u32,
}

impl Scratch {
    /// Ready for a program of `n` steps, empty.
    fn reset(&mut self, n: usize) {
        if self.stamp.len() != n {
            self.stamp = vec![0; n];
            self.head = vec![NONE; n];
            self.generation = 0;
        }
        self.clear();
    }

    fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.fill(0);
            self.generation = 1;
        }
        self.entries.clear();
    }

    fn find(&self, key: &Key) -> Option<usize> {
        let pc = key.pc as usize;
        if self.stamp.get(pc) != Some(&self.generation) {
            return None;
        }
        let mut e = self.head.get(pc).copied().unwrap_or(NONE);
        while let Some(entry) = self.entries.get(e as usize) {
            if entry.key == *key {
                return Some(e as usize);
            }
            e = entry.next;
        }
        None
    }

    fn get(&self, key: &Key) -> Option<(Score, usize)> {
        self.find(key)
            .and_then(|e| self.entries.get(e))
            .map(|e| (e.best, e.idx))
    }

    fn insert(&mut self, key: Key, (best, idx): (Score, usize)) {
        if let Some(e) = self.find(&key).and_then(|e| self.entries.get_mut(e)) {
            e.best = best;
            e.idx = idx;
            return;
        }
        let pc = key.pc as usize;
        let (Some(stamp), Some(head)) = (self.stamp.get_mut(pc), self.head.get_mut(pc)) else {
            return;
        };
        let next = if *stamp == self.generation {
            *head
        } else {
            NONE
        };
        *stamp = self.generation;
        *head = self.entries.len() as u32;
        self.entries.push(Entry {
            key,
            best,
            idx,
            next,
        });
    }
}

impl Vm<'_> {
    fn merge_ctx(&mut self, ctx: u32, value: u32) -> u32 {
        if let Some(&c) = self.merged.get(&(ctx, value)) {
            return c;
        }
        let extra = match self.p.values.get(value as usize) {
            Some(v) => &v.context,
            None => return ctx,
        };
        let mut m = self.ctxs.get(ctx as usize).cloned().unwrap_or_default();
        for (k, v) in extra {
            m.retain(|(mk, _)| mk != k);
            m.push((k.clone(), v.clone()));
        }
        let id = match self.ctxs.iter().position(|c| *c == m) {
            Some(i) => i as u32,
            None => {
                self.ctxs.push(m);
                (self.ctxs.len() - 1) as u32
            }
        };
        self.merged.insert((ctx, value), id);
        id
    }

    /// The word of the sentence at `start` stemmed: its end and the index of its stem among
    /// the program's, `u32::MAX` when no value has that stem; `None` when no word starts there.
    fn stem_at(&mut self, start: usize) -> Option<(u32, u32)> {
        if let Some(&r) = self.stemmed.get(&(start as u32)) {
            return r;
        }
        let s = &self.input.s;
        let end = s
            .get(start..)
            .and_then(|rest| rest.iter().position(|&c| c == ' '))
            .map(|k| start + k);
        let r = match (end, &self.stemmer) {
            (Some(end), Some(stemmer)) if end > start => {
                let word: String = s[start..end].iter().collect();
                self.steps += (end - start) as u64;
                crate::text::stem(stemmer, &word).map(|st| {
                    let id = self.p.stems.get(&st).copied().unwrap_or(u32::MAX);
                    (end as u32, id)
                })
            }
            _ => None,
        };
        self.stemmed.insert(start as u32, r);
        r
    }

    /// The readings of number words of `range` at `start`, as indices into `self.spelled`.
    fn spell(&mut self, range: u32, lex: u32, start: usize) -> (u32, u32) {
        if let Some(&r) = self.spelled_at.get(&(range, start as u32)) {
            return r;
        }
        let a = self.spelled.len() as u32;
        let (Some(r), Some((_, l))) = (
            self.p.ranges.get(range as usize),
            self.p.lexicons.get(lex as usize),
        ) else {
            return (a, a);
        };
        let mut found = Vec::new();
        let text = self.input.s.get(start..).unwrap_or_default();
        self.steps += l.spelled(text, |v| r.contains(v as f64), &mut found);
        for sp in found {
            self.spelled.push((start as u32 + sp.len, sp));
        }
        let b = self.spelled.len() as u32;
        self.spelled_at.insert((range, start as u32), (a, b));
        (a, b)
    }

    /// Adds a thread at `pos` and everything it reaches without reading a character.
    fn add(&mut self, list: &mut List, t: Thread, pos: usize) {
        let s = &self.input.s;
        self.stack.push(Item::Follow(t));
        while let Some(item) = self.stack.pop() {
            let mut t = match item {
                Item::Follow(t) => t,
                Item::Insert(t, eff) => {
                    let key = t.key();
                    if self.seen.get(&key).is_some_and(|(best, _)| best == eff) {
                        self.seen.insert(key, (eff, list.threads.len()));
                        list.threads.push((t, true));
                    }
                    continue;
                }
            };
            self.steps += 1;
            let key = t.key();
            let eff = t.effective();
            if let Some((best, idx)) = self.seen.get(&key) {
                if eff >= best {
                    continue;
                }
                if idx != usize::MAX {
                    if let Some(old) = list.threads.get_mut(idx) {
                        old.1 = false;
                    }
                }
            }
            let Some(inst) = self.p.insts.get(t.pc as usize) else {
                continue;
            };
            match inst {
                Inst::Char(_) | Inst::Digit | Inst::Match { .. } => {
                    self.seen.insert(key, (eff, list.threads.len()));
                    list.threads.push((t, true));
                }
                Inst::Skip => {
                    self.seen.insert(key, (eff, list.threads.len()));
                    let mut next = t.clone();
                    next.pc += 1;
                    list.threads.push((t, true));
                    self.stack.push(Item::Follow(next));
                }
                Inst::WildAny => {
                    // Closing here comes first: hassil tries the shortest wildcard first.
                    self.seen.insert(key, (eff, usize::MAX));
                    let content = t.wild.is_some_and(|w| w.start != NONE);
                    let next = content.then(|| {
                        let mut n = t.clone();
                        n.pc += 1;
                        n
                    });
                    self.stack.push(Item::Insert(t, eff));
                    if let Some(n) = next {
                        self.stack.push(Item::Follow(n));
                    }
                }
                Inst::Chunk {
                    full,
                    strip,
                    space_only,
                    end,
                } => {
                    self.seen.insert(key, (eff, usize::MAX));
                    let (full, strip, space_only, end) = (*full, *strip, *space_only, *end);
                    if !t.sow && space_only && pos >= s.len() {
                        let mut n = t.clone();
                        n.pc = end;
                        self.stack.push(Item::Follow(n));
                    }
                    // The chunk's first character must be the sentence's next one (after
                    // spaces, at a word start): a thread that would die at once is not made.
                    let (next, at) = if t.sow {
                        let q = s[pos.min(s.len())..]
                            .iter()
                            .position(|&c| c != ' ')
                            .map_or(s.len(), |k| pos + k);
                        (strip + 1, q)
                    } else {
                        (full, pos)
                    };
                    if let Some(&Inst::Char(x)) = self.p.insts.get(next as usize) {
                        let c = s.get(at).copied().unwrap_or('\0');
                        if !(c == x || (x == ' ' && (c == '-' || c == '_'))) {
                            continue;
                        }
                    }
                    t.pc = if t.sow { strip } else { full };
                    self.stack.push(Item::Follow(t));
                }
                Inst::ChunkEnd { sow, score } => {
                    self.seen.insert(key, (eff, usize::MAX));
                    t.sow = *sow;
                    t.score.neg_literal -= i64::from(*score);
                    t.pc += 1;
                    self.stack.push(Item::Follow(t));
                }
                Inst::Split(targets) => {
                    self.seen.insert(key, (eff, usize::MAX));
                    for &target in targets.iter().rev() {
                        let mut n = t.clone();
                        n.pc = target;
                        self.stack.push(Item::Follow(n));
                    }
                }
                Inst::Jmp(target) => {
                    self.seen.insert(key, (eff, usize::MAX));
                    t.pc = *target;
                    self.stack.push(Item::Follow(t));
                }
                Inst::Call { sub, slot, ret } => {
                    self.seen.insert(key, (eff, usize::MAX));
                    if t.frame.is_some() {
                        continue;
                    }
                    t.frame = Some(Frame {
                        ret: *ret,
                        start: pos as u32,
                        sow: t.sow,
                        slot: *slot,
                    });
                    t.pc = *sub;
                    self.stack.push(Item::Follow(t));
                }
                Inst::ValueEnd(v) => {
                    self.seen.insert(key, (eff, usize::MAX));
                    let v = *v;
                    let Some(f) = t.frame.take() else { continue };
                    t.push_slot(f.slot, SlotVal::Value(v, f.start, pos as u32));
                    t.ctx = self.merge_ctx(t.ctx, v);
                    t.sow = f.sow;
                    t.pc = f.ret;
                    self.stack.push(Item::Follow(t));
                }
                Inst::Stem { stem } => {
                    let stem = *stem;
                    if t.wait == NONE {
                        self.seen.insert(key, (eff, usize::MAX));
                        let start = if t.sow {
                            s[pos.min(s.len())..]
                                .iter()
                                .position(|&c| c != ' ')
                                .map_or(s.len(), |k| pos + k)
                        } else {
                            pos
                        };
                        let Some((end, got)) = self.stem_at(start) else {
                            continue;
                        };
                        if got != stem {
                            continue;
                        }
                        // The word's end, as a reading with no value.
                        t.wait = self.spelled.len() as u32;
                        self.spelled.push((
                            end,
                            crate::numbers::Spelled {
                                len: end - start as u32,
                                value: 0,
                                variant: 0,
                            },
                        ));
                        self.stack.push(Item::Follow(t));
                        continue;
                    }
                    let Some(&(end, _)) = self.spelled.get(t.wait as usize) else {
                        continue;
                    };
                    if (pos as u32) < end {
                        self.seen.insert(key, (eff, list.threads.len()));
                        list.threads.push((t, true));
                        continue;
                    }
                    self.seen.insert(key, (eff, usize::MAX));
                    // At a word's end: the value's next word may follow after spaces.
                    t.wait = NONE;
                    t.sow = true;
                    t.pc += 1;
                    self.stack.push(Item::Follow(t));
                }
                Inst::Words { range, lex } => {
                    let (range, lex) = (*range, *lex);
                    if t.wait == NONE {
                        self.seen.insert(key, (eff, usize::MAX));
                        let start = if t.sow {
                            s[pos.min(s.len())..]
                                .iter()
                                .position(|&c| c != ' ')
                                .map_or(s.len(), |k| pos + k)
                        } else {
                            pos
                        };
                        let (a, b) = self.spell(range, lex, start);
                        for w in (a..b).rev() {
                            let mut n = t.clone();
                            n.wait = w;
                            self.stack.push(Item::Follow(n));
                        }
                        continue;
                    }
                    let Some(&(end, sp)) = self.spelled.get(t.wait as usize) else {
                        continue;
                    };
                    if (pos as u32) < end {
                        // Reading on: one character a step, as the spelled-out words would.
                        self.seen.insert(key, (eff, list.threads.len()));
                        list.threads.push((t, true));
                        continue;
                    }
                    self.seen.insert(key, (eff, usize::MAX));
                    let Some(f) = t.frame.take() else { continue };
                    let value = match self.p.ranges.get(range as usize).and_then(|r| r.multiplier) {
                        Some(m) => sp.value as f64 * m,
                        None => sp.value as f64,
                    };
                    t.push_slot(f.slot, SlotVal::Number(value));
                    t.score.neg_literal -= i64::from(sp.len);
                    t.wait = NONE;
                    t.sow = false;
                    t.pc = f.ret;
                    self.stack.push(Item::Follow(t));
                }
                Inst::DigitsEnd { range } => {
                    self.seen.insert(key, (eff, usize::MAX));
                    let Some(r) = self.p.ranges.get(*range as usize) else {
                        continue;
                    };
                    let Some(f) = t.frame.take() else { continue };
                    // Greedy, as the regular expression is: no digit may follow.
                    if s.get(pos).is_some_and(char::is_ascii_digit) {
                        continue;
                    }
                    let said: String = self.input.orig[f.start as usize..pos].iter().collect();
                    if r.fractions != 0
                        && !said.contains(['.', ','])
                        && s.get(pos).is_some_and(|c| matches!(c, '.' | ','))
                        && s.get(pos + 1).is_some_and(char::is_ascii_digit)
                    {
                        continue;
                    }
                    let Ok(n) = said.trim().replace(',', ".").parse::<f64>() else {
                        continue;
                    };
                    if !r.contains(n) {
                        continue;
                    }
                    let value = match r.multiplier {
                        Some(m) => n * m,
                        None => n,
                    };
                    t.push_slot(f.slot, SlotVal::Number(value));
                    t.sow = f.sow;
                    t.pc = f.ret;
                    self.stack.push(Item::Follow(t));
                }
                Inst::WildOpen { slot } => {
                    self.seen.insert(key, (eff, usize::MAX));
                    if t.wild.is_some() {
                        continue;
                    }
                    t.wild = Some(Wild {
                        slot: *slot,
                        start: NONE,
                        end: NONE,
                    });
                    t.pc += 1;
                    self.stack.push(Item::Follow(t));
                }
                Inst::WildClose => {
                    self.seen.insert(key, (eff, usize::MAX));
                    let Some(w) = t.wild.take() else { continue };
                    if w.start == NONE {
                        continue;
                    }
                    t.score.wilds += 1;
                    t.score.wild_len += w.end - w.start;
                    t.push_slot(w.slot, SlotVal::Wild(w.start, w.end));
                    t.sow = true;
                    t.pc += 1;
                    self.stack.push(Item::Follow(t));
                }
            }
        }
    }

    /// Moves the threads of `clist` over the character at `pos` into `nlist` (emptied first),
    /// leaving `clist` empty.
    fn step(&mut self, clist: &mut List, nlist: &mut List, pos: usize) {
        nlist.threads.clear();
        self.seen.clear();
        let Some(&c) = self.input.s.get(pos) else {
            clist.threads.clear();
            return;
        };
        for (mut t, alive) in clist.threads.drain(..) {
            if !alive {
                continue;
            }
            self.steps += 1;
            let Some(inst) = self.p.insts.get(t.pc as usize) else {
                continue;
            };
            let ok = match inst {
                Inst::Char(x) => {
                    let ok = c == *x || (*x == ' ' && (c == '-' || c == '_'));
                    t.pc += 1;
                    ok
                }
                Inst::Skip | Inst::Match { .. } => c == ' ',
                Inst::Digit => {
                    t.pc += 1;
                    c.is_ascii_digit()
                }
                // The characters were read when the thread entered the words.
                Inst::Words { .. } | Inst::Stem { .. } => t.wait != NONE,
                Inst::WildAny => {
                    if let Some(w) = &mut t.wild {
                        if c != ' ' {
                            if w.start == NONE {
                                w.start = pos as u32;
                            }
                            w.end = pos as u32 + 1;
                        }
                    }
                    true
                }
                _ => false,
            };
            if ok {
                self.add(nlist, t, pos + 1);
            }
        }
    }
}

/// Runs the templates `templates` (in hassil's order) over `input`; returns every complete
/// match in priority order, the contexts they reference, and the steps taken.
pub(crate) fn run(
    p: &Program,
    input: &Input,
    templates: &[u32],
    ctx0: &[(String, J)],
    scratch: &mut Scratch,
) -> Run {
    scratch.reset(p.insts.len());
    let mut vm = Vm {
        p,
        seen: scratch,
        input,
        steps: 0,
        ctxs: vec![ctx0.to_vec()],
        merged: FxMap::default(),
        stack: Vec::new(),
        spelled_at: FxMap::default(),
        spelled: Vec::new(),
        stemmed: FxMap::default(),
        stemmer: p.stemmer.map(rust_stemmers::Stemmer::create),
    };
    let mut list = List::new();
    for &ti in templates {
        let Some(meta) = p.templates.get(ti as usize) else {
            continue;
        };
        let t = Thread {
            pc: meta.entry,
            sow: true,
            frame: None,
            wild: None,
            ctx: 0,
            score: Score::default(),
            slots: None,
            template: ti,
            wait: NONE,
        };
        vm.add(&mut list, t, 0);
    }
    let mut next = List::new();
    for pos in 0..input.s.len() {
        if list.threads.is_empty() {
            break;
        }
        vm.step(&mut list, &mut next, pos);
        std::mem::swap(&mut list, &mut next);
    }
    let mut done = Vec::new();
    for (rank, (t, alive)) in list.threads.into_iter().enumerate() {
        if !alive {
            continue;
        }
        if let Some(Inst::Match { template }) = p.insts.get(t.pc as usize) {
            debug_assert_eq!(*template, t.template);
            done.push(Done {
                template: *template,
                rank,
                score: t.score,
                slots: t.slots,
                ctx: t.ctx,
            });
        }
    }
    Run {
        done,
        ctxs: vm.ctxs,
        steps: vm.steps,
    }
}

/// What one run found.
pub(crate) struct Run {
    /// The complete matches, in priority order.
    pub(crate) done: Vec<Done>,
    /// The contexts they name.
    pub(crate) ctxs: Vec<Vec<(String, J)>>,
    /// Steps taken.
    pub(crate) steps: u64,
}
