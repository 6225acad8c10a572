//! hassil's data model (`intents.py`'s `Intents.from_dict`), read from a [`Node`] tree:
//! `language`, `intents.NAME.data[].{sentences, slots, requires_context, excludes_context,
//! expansion_rules, lists, metadata, required_keywords}`, `lists`, `expansion_rules`,
//! `skip_words`. Files merge as hassil's `merge_dict` merges them: an intent's data blocks and a
//! text list's values add up, anything else is replaced.

use std::collections::HashMap;

use serde_json::Value as J;

use crate::error::{Error, Location};
use crate::limits::{MAX_LIST_VALUES, MAX_RANGE_NUMBERS};
use crate::template::{is_template, parse_sentence, Expr, ParseError};
use crate::text::normalize_text;
use crate::tree::{Node, V};

#[derive(Debug, Clone, Default)]
pub(crate) struct Data {
    pub(crate) language: Option<String>,
    pub(crate) intents: Vec<IntentDef>,
    pub(crate) lists: HashMap<String, ListDef>,
    pub(crate) rules: HashMap<String, RuleDef>,
    pub(crate) skip_words: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct IntentDef {
    pub(crate) name: String,
    pub(crate) data: Vec<DataDef>,
}

#[derive(Debug, Clone)]
pub(crate) struct Sentence {
    pub(crate) text: String,
    pub(crate) expr: Expr,
    pub(crate) at: Location,
}

#[derive(Debug, Clone)]
pub(crate) struct DataDef {
    pub(crate) sentences: Vec<Sentence>,
    pub(crate) slots: Vec<(String, J)>,
    pub(crate) requires: Vec<(String, J)>,
    pub(crate) excludes: Vec<(String, J)>,
    pub(crate) rules: HashMap<String, RuleDef>,
    pub(crate) lists: HashMap<String, ListDef>,
    pub(crate) metadata: Option<J>,
    pub(crate) required_keywords: Option<Vec<String>>,
}

#[derive(Debug, Clone)]
pub(crate) struct RuleDef {
    pub(crate) expr: Expr,
    pub(crate) at: Location,
}

#[derive(Debug, Clone)]
pub(crate) enum ListDef {
    /// Values, where the list is, and whether its words also match by stem (`stem: true`).
    Text(Vec<ValueDef>, Location, bool),
    Range(RangeDef),
    Wildcard,
}

#[derive(Debug, Clone)]
pub(crate) struct ValueDef {
    pub(crate) input: Expr,
    pub(crate) out: Option<J>,
    pub(crate) context: Vec<(String, J)>,
}

#[derive(Debug, Clone)]
pub(crate) struct RangeDef {
    pub(crate) from: i64,
    pub(crate) to: i64,
    pub(crate) step: i64,
    /// 0: none, 2: halves, 10: tenths.
    pub(crate) fractions: u8,
    pub(crate) multiplier: Option<f64>,
    pub(crate) digits: bool,
    pub(crate) words: bool,
    pub(crate) words_language: Option<String>,
}

impl RangeDef {
    /// The numbers of the range, as hassil's `get_numbers` lists them.
    #[cfg(test)]
    pub(crate) fn numbers(&self) -> impl Iterator<Item = f64> + '_ {
        let steps = (self.to - self.from) / self.step;
        (0..=steps).flat_map(move |i| {
            let n = (self.from + i * self.step) as f64;
            let k = if self.fractions == 0 {
                1
            } else {
                self.fractions
            };
            let fr: Vec<f64> = match self.fractions {
                2 => vec![n, n + 0.5],
                10 => (0..10).map(|j| n + f64::from(j) / 10.0).collect(),
                _ => vec![n],
            };
            debug_assert!(fr.len() == usize::from(k));
            fr.into_iter()
        })
    }

    /// Whether `v` is one of [`RangeDef::numbers`], without listing them.
    pub(crate) fn contains(&self, v: f64) -> bool {
        if self.step == 1 && self.fractions == 0 {
            return (self.from as f64) <= v && v <= (self.to as f64);
        }
        let d = v - self.from as f64;
        let step = self.step as f64;
        let i = (d / step).floor();
        if i < 0.0 || i > ((self.to - self.from) / self.step) as f64 {
            return false;
        }
        let k = f64::from(self.fractions.max(1));
        let j = (d - i * step) * k;
        let jr = j.round();
        (j - jr).abs() < 1e-9 * k && jr >= 0.0 && jr < k
    }
}

fn shape(at: &Location, why: impl Into<String>) -> Error {
    Error::Shape {
        at: at.clone(),
        why: why.into(),
    }
}

fn map<'a>(n: &'a Node, what: &str) -> Result<&'a [(String, Node)], Error> {
    match &n.v {
        V::Map(m) => Ok(m),
        V::Null => Ok(&[]),
        _ => Err(shape(&n.at, format!("{what} must be a mapping"))),
    }
}

fn seq<'a>(n: &'a Node, what: &str) -> Result<&'a [Node], Error> {
    match &n.v {
        V::Seq(s) => Ok(s),
        V::Null => Ok(&[]),
        _ => Err(shape(&n.at, format!("{what} must be a list"))),
    }
}

fn string(n: &Node, what: &str) -> Result<String, Error> {
    match &n.v {
        V::Str(s) => Ok(s.clone()),
        V::Int(i) => Ok(i.to_string()),
        V::Float(f) => Ok(f.to_string()),
        V::Bool(b) => Ok(b.to_string()),
        _ => Err(shape(&n.at, format!("{what} must be text"))),
    }
}

fn int(n: &Node, what: &str) -> Result<i64, Error> {
    match &n.v {
        V::Int(i) => Ok(*i),
        V::Str(s) => s
            .trim()
            .parse()
            .map_err(|_| shape(&n.at, format!("{what} must be a whole number"))),
        _ => Err(shape(&n.at, format!("{what} must be a whole number"))),
    }
}

fn truthy(n: &Node) -> bool {
    match &n.v {
        V::Null => false,
        V::Bool(b) => *b,
        V::Int(i) => *i != 0,
        V::Float(f) => *f != 0.0,
        V::Str(s) => !s.is_empty(),
        V::Seq(s) => !s.is_empty(),
        V::Map(m) => !m.is_empty(),
    }
}

fn get<'a>(m: &'a [(String, Node)], k: &str) -> Option<&'a Node> {
    m.iter().find(|(key, _)| key == k).map(|(_, v)| v)
}

fn cut(s: &str) -> String {
    s.chars().take(200).collect()
}

/// Parses a template at `at`, its errors placed there.
pub(crate) fn template(text: &str, at: &Location) -> Result<Expr, Error> {
    parse_sentence(text).map_err(|e| match e {
        ParseError::TooDeep => Error::TooDeep {
            at: at.clone(),
            max: crate::limits::MAX_NESTING,
        },
        ParseError::Syntax(why, offset) => Error::Template {
            at: at.clone(),
            template: cut(text),
            why: format!("{why} (character {})", offset + 1),
        },
    })
}

fn pairs(n: &Node, what: &str) -> Result<Vec<(String, J)>, Error> {
    Ok(map(n, what)?
        .iter()
        .map(|(k, v)| (k.clone(), v.to_json()))
        .collect())
}

fn rules(n: &Node) -> Result<HashMap<String, RuleDef>, Error> {
    let mut out = HashMap::new();
    for (name, body) in map(n, "expansion_rules")? {
        let text = string(body, "an expansion rule")?;
        out.insert(
            name.clone(),
            RuleDef {
                expr: template(&text, &body.at)?,
                at: body.at.clone(),
            },
        );
    }
    Ok(out)
}

pub(crate) fn list(name: &str, n: &Node) -> Result<ListDef, Error> {
    let m = map(n, "a list")?;
    if let Some(values) = get(m, "values") {
        let values = seq(values, "a list's values")?;
        if values.len() > MAX_LIST_VALUES {
            return Err(Error::ListTooLong {
                at: n.at.clone(),
                list: name.to_owned(),
                max: MAX_LIST_VALUES,
            });
        }
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            out.push(value(v)?);
        }
        // A Maven extension that hassil ignores: the words of the values also match any word
        // of the same Snowball stem ("лондон" matches "лондоне").
        let stem = get(m, "stem").is_some_and(truthy);
        return Ok(ListDef::Text(out, n.at.clone(), stem));
    }
    if let Some(r) = get(m, "range") {
        let rm = map(r, "a range")?;
        let need = |k: &str| get(rm, k).ok_or_else(|| shape(&r.at, format!("a range needs '{k}'")));
        let from = int(need("from")?, "from")?;
        let to = int(need("to")?, "to")?;
        let step = match get(rm, "step") {
            Some(s) => int(s, "step")?,
            None => 1,
        };
        let bad = |why: String| Error::Range {
            at: r.at.clone(),
            list: name.to_owned(),
            why,
        };
        if from > to {
            return Err(bad(format!("from {from} is greater than to {to}")));
        }
        if step <= 0 {
            return Err(bad("step must be positive".to_owned()));
        }
        if from.abs() >= 1_000_000_000_000 || to.abs() >= 1_000_000_000_000 {
            return Err(bad("numbers must be below 10^12".to_owned()));
        }
        let fractions = match get(rm, "fractions")
            .map(|f| string(f, "fractions"))
            .transpose()?
        {
            None => 0,
            Some(f) if f == "halves" => 2,
            Some(f) if f == "tenths" => 10,
            Some(f) => return Err(bad(format!("fractions '{f}' is neither halves nor tenths"))),
        };
        let count = (to - from) / step + 1;
        if count.saturating_mul(i64::from(fractions.max(1))) > MAX_RANGE_NUMBERS as i64 {
            return Err(bad(format!("more than {MAX_RANGE_NUMBERS} numbers")));
        }
        let multiplier = match get(rm, "multiplier").map(|x| &x.v) {
            None | Some(V::Null) => None,
            Some(V::Int(i)) => Some(*i as f64),
            Some(V::Float(f)) => Some(*f),
            Some(_) => return Err(bad("multiplier must be a number".to_owned())),
        };
        let digits = get(rm, "digits").is_none_or(truthy);
        let words = get(rm, "words").is_none_or(truthy);
        if !digits && !words {
            return Err(bad("must have digits, words, or both".to_owned()));
        }
        let words_language = get(rm, "words_language")
            .map(|w| string(w, "words_language"))
            .transpose()?;
        return Ok(ListDef::Range(RangeDef {
            from,
            to,
            step,
            fractions,
            multiplier,
            digits,
            words,
            words_language,
        }));
    }
    if get(m, "wildcard").is_some_and(truthy) {
        return Ok(ListDef::Wildcard);
    }
    Err(shape(
        &n.at,
        format!("list '{name}' has no values, range or wildcard"),
    ))
}

fn value(v: &Node) -> Result<ValueDef, Error> {
    match &v.v {
        V::Map(m) => {
            let input = get(m, "in").ok_or_else(|| shape(&v.at, "a list value needs 'in'"))?;
            let text = string(input, "a value's 'in'")?;
            let expr = if is_template(&text) {
                template(&text, &input.at)?
            } else {
                Expr::Text(normalize_text(&text))
            };
            Ok(ValueDef {
                input: expr,
                out: get(m, "out").map(Node::to_json),
                context: match get(m, "context") {
                    Some(c) => pairs(c, "a value's context")?,
                    None => Vec::new(),
                },
            })
        }
        _ => {
            let text = string(v, "a list value")?;
            if is_template(&text) {
                Ok(ValueDef {
                    input: template(&text, &v.at)?,
                    out: None,
                    context: Vec::new(),
                })
            } else {
                Ok(ValueDef {
                    input: Expr::Text(normalize_text(&text)),
                    out: Some(J::String(text)),
                    context: Vec::new(),
                })
            }
        }
    }
}

/// A list of plain strings, as hassil's `TextSlotList.from_strings` makes one.
pub(crate) fn strings_list(values: &[String], at: &Location) -> Result<ListDef, Error> {
    let mut out = Vec::with_capacity(values.len());
    for s in values {
        out.push(ValueDef {
            input: if is_template(s) {
                template(s, at)?
            } else {
                Expr::Text(normalize_text(s))
            },
            out: Some(J::String(s.clone())),
            context: Vec::new(),
        });
    }
    Ok(ListDef::Text(out, at.clone(), false))
}

impl Data {
    /// Merges one file's tree into the data.
    pub(crate) fn merge(&mut self, root: &Node) -> Result<(), Error> {
        let m = map(root, "a sentence file")?;
        if let Some(l) = get(m, "language") {
            let lang = string(l, "language")?;
            match &self.language {
                Some(old) if *old != lang => {
                    return Err(Error::Language {
                        at: l.at.clone(),
                        expected: old.clone(),
                        found: lang,
                    })
                }
                _ => self.language = Some(lang),
            }
        }
        if let Some(intents) = get(m, "intents") {
            for (name, intent) in map(intents, "intents")? {
                let im = map(intent, "an intent")?;
                let mut blocks = Vec::new();
                if let Some(data) = get(im, "data") {
                    for d in seq(data, "an intent's data")? {
                        blocks.push(data_def(d)?);
                    }
                }
                match self.intents.iter_mut().find(|i| i.name == *name) {
                    Some(i) => i.data.extend(blocks),
                    None => self.intents.push(IntentDef {
                        name: name.clone(),
                        data: blocks,
                    }),
                }
            }
        }
        if let Some(lists) = get(m, "lists") {
            for (name, l) in map(lists, "lists")? {
                let new = list(name, l)?;
                match (self.lists.get_mut(name), new) {
                    (Some(ListDef::Text(old, at, stem)), ListDef::Text(more, _, more_stem)) => {
                        old.extend(more);
                        *stem |= more_stem;
                        if old.len() > MAX_LIST_VALUES {
                            return Err(Error::ListTooLong {
                                at: at.clone(),
                                list: name.clone(),
                                max: MAX_LIST_VALUES,
                            });
                        }
                    }
                    (_, new) => {
                        self.lists.insert(name.clone(), new);
                    }
                }
            }
        }
        if let Some(r) = get(m, "expansion_rules") {
            self.rules.extend(rules(r)?);
        }
        if let Some(s) = get(m, "skip_words") {
            for w in seq(s, "skip_words")? {
                self.skip_words.push(string(w, "a skip word")?);
            }
        }
        Ok(())
    }
}

fn data_def(d: &Node) -> Result<DataDef, Error> {
    let m = map(d, "an intent's data block")?;
    let mut sentences = Vec::new();
    if let Some(s) = get(m, "sentences") {
        for t in seq(s, "sentences")? {
            let text = string(t, "a sentence")?;
            sentences.push(Sentence {
                expr: template(&text, &t.at)?,
                text,
                at: t.at.clone(),
            });
        }
    }
    let mut lists = HashMap::new();
    if let Some(l) = get(m, "lists") {
        for (name, body) in map(l, "lists")? {
            lists.insert(name.clone(), list(name, body)?);
        }
    }
    Ok(DataDef {
        sentences,
        slots: match get(m, "slots") {
            Some(s) => pairs(s, "slots")?,
            None => Vec::new(),
        },
        requires: match get(m, "requires_context") {
            Some(s) => pairs(s, "requires_context")?,
            None => Vec::new(),
        },
        excludes: match get(m, "excludes_context") {
            Some(s) => pairs(s, "excludes_context")?,
            None => Vec::new(),
        },
        rules: match get(m, "expansion_rules") {
            Some(r) => rules(r)?,
            None => HashMap::new(),
        },
        lists,
        metadata: get(m, "metadata").map(Node::to_json),
        required_keywords: match get(m, "required_keywords") {
            Some(k) => Some(
                seq(k, "required_keywords")?
                    .iter()
                    .map(|w| string(w, "a keyword"))
                    .collect::<Result<_, _>>()?,
            ),
            None => None,
        },
    })
}

/// hassil's `check_required_context`.
pub(crate) fn required_ok(
    required: &[(String, J)],
    actual: &[(String, J)],
    allow_missing: bool,
) -> bool {
    for (k, want) in required {
        let Some((_, have)) = actual.iter().rev().find(|(ak, _)| ak == k) else {
            if allow_missing {
                continue;
            }
            return false;
        };
        let want = unpack(want);
        let have = unpack(have);
        match want {
            Some(J::Array(options)) if !options.iter().any(|o| Some(o) == have) => return false,
            Some(J::Array(_)) | None => {}
            Some(w) if Some(w) != have => return false,
            Some(_) => {}
        }
    }
    true
}

/// hassil's `check_excluded_context`.
pub(crate) fn excluded_ok(excluded: &[(String, J)], actual: &[(String, J)]) -> bool {
    for (k, not) in excluded {
        let Some((_, have)) = actual.iter().rev().find(|(ak, _)| ak == k) else {
            continue;
        };
        let not = unpack(not);
        let have = unpack(have);
        match not {
            Some(J::Array(options)) => {
                if options.iter().any(|o| Some(o) == have) {
                    return false;
                }
            }
            other => {
                if other == have {
                    return false;
                }
            }
        }
    }
    true
}

/// A context value `{value: X, ...}` is X.
pub(crate) fn unpack(v: &J) -> Option<&J> {
    match v {
        J::Object(o) => o.get("value"),
        J::Null => None,
        other => Some(other),
    }
}

#[cfg(test)]
mod range_tests {
    use super::RangeDef;

    #[test]
    fn contains_agrees_with_the_numbers_listed() {
        for (from, to, step, fractions) in
            [(-5, 20, 3, 0), (0, 10, 1, 2), (1, 9, 2, 10), (0, 100, 7, 2)]
        {
            let r = RangeDef {
                from,
                to,
                step,
                fractions,
                multiplier: None,
                digits: true,
                words: false,
                words_language: None,
            };
            let listed: Vec<f64> = r.numbers().collect();
            for t in -200..=300 {
                let v = f64::from(t) / 10.0;
                let want = listed.iter().any(|n| (n - v).abs() < 1e-9);
                assert_eq!(
                    r.contains(v),
                    want,
                    "{from}..{to} step {step} /{fractions}: {v}"
                );
            }
        }
    }
}
