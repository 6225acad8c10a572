//! The data tree both loaders build, every node with its place: YAML events from
//! `saphyr-parser` (anchors, aliases, tags and several documents refused), or a JSON value (its
//! place a path of keys).

use saphyr_parser::{Event, Parser, ScalarStyle};

use crate::error::{Error, Location};
use crate::limits::MAX_NESTING;

/// A value with its place.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) v: V,
    pub(crate) at: Location,
}

/// A value.
#[derive(Debug, Clone)]
pub(crate) enum V {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

/// How deep a data file may nest (mappings and sequences); sentence files need five.
const MAX_DATA_DEPTH: usize = MAX_NESTING * 2;

impl Node {
    /// The value as JSON (for slot values, contexts and metadata).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.v {
            V::Null => J::Null,
            V::Bool(b) => J::Bool(*b),
            V::Int(i) => J::from(*i),
            V::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            V::Str(s) => J::String(s.clone()),
            V::Seq(v) => J::Array(v.iter().map(Node::to_json).collect()),
            V::Map(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }

    /// Builds the tree of a JSON value, each node's place its path.
    pub(crate) fn from_json(file: &str, v: &serde_json::Value) -> Result<Node, Error> {
        fn go(file: &str, path: &str, v: &serde_json::Value, depth: usize) -> Result<Node, Error> {
            let at = Location {
                file: file.to_owned(),
                line: 0,
                col: 0,
                path: path.to_owned(),
            };
            if depth > MAX_DATA_DEPTH {
                return Err(Error::Shape {
                    at,
                    why: format!("nested deeper than {MAX_DATA_DEPTH}"),
                });
            }
            use serde_json::Value as J;
            let v = match v {
                J::Null => V::Null,
                J::Bool(b) => V::Bool(*b),
                J::Number(n) => match n.as_i64() {
                    Some(i) => V::Int(i),
                    None => V::Float(n.as_f64().unwrap_or(0.0)),
                },
                J::String(s) => V::Str(s.clone()),
                J::Array(a) => V::Seq(
                    a.iter()
                        .enumerate()
                        .map(|(i, x)| go(file, &format!("{path}[{i}]"), x, depth + 1))
                        .collect::<Result<_, _>>()?,
                ),
                J::Object(o) => V::Map(
                    o.iter()
                        .map(|(k, x)| {
                            let p = if path.is_empty() {
                                k.clone()
                            } else {
                                format!("{path}.{k}")
                            };
                            Ok((k.clone(), go(file, &p, x, depth + 1)?))
                        })
                        .collect::<Result<_, Error>>()?,
                ),
            };
            Ok(Node { v, at })
        }
        go(file, "", v, 0)
    }

    /// Parses YAML text into a tree.
    pub(crate) fn from_yaml(file: &str, text: &str) -> Result<Node, Error> {
        let loc = |line: usize, col: usize| Location {
            file: file.to_owned(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col + 1).unwrap_or(u32::MAX),
            path: String::new(),
        };
        enum Open {
            Seq(Location, Vec<Node>),
            Map(Location, Vec<(String, Node)>, Option<(String, Location)>),
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut root: Option<Node> = None;
        let mut documents = 0usize;
        let mut parser = Parser::new_from_str(text);
        while let Some(ev) = parser.next_event() {
            let (ev, span) = ev.map_err(|e| Error::Yaml {
                at: loc(e.marker().line(), e.marker().col()),
                why: e.info().to_owned(),
            })?;
            let at = loc(span.start.line(), span.start.col());
            let node = match ev {
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => continue,
                Event::StreamEnd => break,
                Event::DocumentStart(_) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(Error::YamlFeature {
                            at,
                            what: "several documents",
                        });
                    }
                    continue;
                }
                Event::Alias(_) => {
                    return Err(Error::YamlFeature {
                        at,
                        what: "aliases",
                    })
                }
                Event::Scalar(value, style, anchor, tag) => {
                    if anchor != 0 {
                        return Err(Error::YamlFeature {
                            at,
                            what: "anchors",
                        });
                    }
                    if tag.is_some() {
                        return Err(Error::YamlFeature { at, what: "tags" });
                    }
                    let v = if style == ScalarStyle::Plain {
                        plain_scalar(&value)
                    } else {
                        V::Str(value.into_owned())
                    };
                    Node { v, at }
                }
                Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                    if anchor != 0 {
                        return Err(Error::YamlFeature {
                            at,
                            what: "anchors",
                        });
                    }
                    if tag.is_some() {
                        return Err(Error::YamlFeature { at, what: "tags" });
                    }
                    if stack.len() >= MAX_DATA_DEPTH {
                        return Err(Error::Shape {
                            at,
                            why: format!("nested deeper than {MAX_DATA_DEPTH}"),
                        });
                    }
                    stack.push(if matches!(ev, Event::MappingStart(..)) {
                        Open::Map(at, Vec::new(), None)
                    } else {
                        Open::Seq(at, Vec::new())
                    });
                    continue;
                }
                Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                    Some(Open::Seq(at, items)) => Node {
                        v: V::Seq(items),
                        at,
                    },
                    Some(Open::Map(at, items, _)) => Node {
                        v: V::Map(items),
                        at,
                    },
                    None => continue,
                },
            };
            // Attach the finished node to its parent.
            match stack.last_mut() {
                None => root = Some(node),
                Some(Open::Seq(_, items)) => items.push(node),
                Some(Open::Map(_, items, pending)) => match pending.take() {
                    None => {
                        let key = match node.v {
                            V::Str(s) => s,
                            V::Int(i) => i.to_string(),
                            V::Bool(b) => b.to_string(),
                            V::Null => "null".to_owned(),
                            V::Float(f) => f.to_string(),
                            V::Seq(_) | V::Map(_) => {
                                return Err(Error::Shape {
                                    at: node.at,
                                    why: "a key must be text".to_owned(),
                                })
                            }
                        };
                        if items.iter().any(|(k, _)| *k == key) {
                            return Err(Error::DuplicateKey { at: node.at, key });
                        }
                        *pending = Some((key, node.at));
                    }
                    Some((k, _)) => items.push((k, node)),
                },
            }
        }
        Ok(root.unwrap_or(Node {
            v: V::Null,
            at: loc(1, 0),
        }))
    }
}

/// YAML 1.2 core schema resolution of a plain scalar.
fn plain_scalar(s: &str) -> V {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return V::Null,
        "true" | "True" | "TRUE" => return V::Bool(true),
        "false" | "False" | "FALSE" => return V::Bool(false),
        _ => {}
    }
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
        if let Ok(i) = s.parse::<i64>() {
            return V::Int(i);
        }
    }
    let looks_float = digits.chars().any(|c| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'));
    if looks_float {
        if let Ok(f) = s.parse::<f64>() {
            return V::Float(f);
        }
    }
    V::Str(s.to_owned())
}
