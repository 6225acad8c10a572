//! The generic reader: a JSON value walked by hand, each problem reported with its path.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::{Problem, ProblemKind, Secret};

/// A short rendering of a value for error messages: its JSON, cut at 60 characters.
pub(crate) fn describe(v: &Value) -> String {
    let s = v.to_string();
    if mcp::tools::cap_chars(&s, 60).len() < s.len() {
        format!("{}...", mcp::tools::cap_chars(&s, 57))
    } else {
        s
    }
}

/// Writes a duration back in the config's own notation, in the largest unit that is exact.
pub(crate) fn show_duration(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("\"{}{unit}\"", ms / size);
        }
    }
    format!("\"{ms}ms\"")
}

/// Validates a name used in paths, sources and allowlist rows.
pub(crate) fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// Parses a duration written as a string: "500ms", "30s", "5m", "1h", "1d" (C-6).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (num, unit) = s.split_at(split);
    if num.is_empty() || num.len() > 12 {
        return None;
    }
    let n: u64 = num.parse().ok()?;
    let ms = match unit {
        "ms" => n,
        "s" => n.checked_mul(1_000)?,
        "m" => n.checked_mul(60_000)?,
        "h" => n.checked_mul(3_600_000)?,
        "d" => n.checked_mul(86_400_000)?,
        _ => return None,
    };
    Some(Duration::from_millis(ms))
}

pub(crate) struct Validator<'a> {
    pub(crate) problems: &'a mut Vec<Problem>,
    pub(crate) env: &'a dyn Fn(&str) -> Option<String>,
}

/// One JSON object being read, with the keys it may have.
pub(crate) struct Obj<'v> {
    pub(crate) path: String,
    pub(crate) map: &'v Map<String, Value>,
    /// Whether `${ENV}` references must resolve (the block is enabled).
    pub(crate) enabled: bool,
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl Validator<'_> {
    pub(crate) fn problem(&mut self, path: &str, kind: ProblemKind) {
        self.problems.push(Problem {
            path: path.to_string(),
            kind,
        });
    }

    /// A value of the wrong JSON type.
    pub(crate) fn wrong_type(&mut self, path: &str, expected: &'static str, found: &Value) {
        self.problem(
            path,
            ProblemKind::WrongType {
                expected,
                found: describe(found),
            },
        );
    }

    /// A value of the right JSON type that is not acceptable.
    pub(crate) fn bad_value(
        &mut self,
        path: &str,
        expected: impl Into<String>,
        value: impl Into<String>,
    ) {
        self.problem(
            path,
            ProblemKind::BadValue {
                value: value.into(),
                expected: expected.into(),
            },
        );
    }

    /// Reads `value` as an object and reports keys outside `allowed`.
    pub(crate) fn object<'v>(
        &mut self,
        path: &str,
        value: &'v Value,
        allowed: &'static [&'static str],
        enabled: bool,
    ) -> Option<Obj<'v>> {
        let Value::Object(map) = value else {
            self.wrong_type(path, "an object", value);
            return None;
        };
        Some(self.keys(path, map, allowed, enabled))
    }

    pub(crate) fn keys<'v>(
        &mut self,
        path: &str,
        map: &'v Map<String, Value>,
        allowed: &'static [&'static str],
        enabled: bool,
    ) -> Obj<'v> {
        for k in map.keys() {
            if !allowed.contains(&k.as_str()) {
                self.problem(
                    &join(path, k),
                    ProblemKind::UnknownKey { expected: allowed },
                );
            }
        }
        Obj {
            path: path.to_string(),
            map,
            enabled,
        }
    }

    /// Expands `${NAME}` references in a string.
    pub(crate) fn expand(&mut self, path: &str, s: &str, enabled: bool) -> Option<String> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(end) = after.find('}') else {
                self.problem(path, ProblemKind::UnterminatedReference);
                return None;
            };
            let name = &after[..end];
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                self.problem(
                    path,
                    ProblemKind::BadReference {
                        name: name.to_string(),
                    },
                );
                return None;
            }
            match (self.env)(name) {
                Some(v) => out.push_str(&v),
                None if enabled => {
                    self.problem(
                        path,
                        ProblemKind::Unresolved {
                            var: name.to_string(),
                        },
                    );
                    return None;
                }
                // A disabled block keeps its reference unexpanded; it is never used.
                None => out.push_str(&rest[i..i + 2 + end + 1]),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Some(out)
    }

    pub(crate) fn string(&mut self, o: &Obj<'_>, key: &str) -> Option<String> {
        let v = o.map.get(key)?;
        let path = join(&o.path, key);
        match v {
            Value::String(s) => self.expand(&path, s, o.enabled),
            _ => {
                self.wrong_type(&path, "a string", v);
                None
            }
        }
    }

    pub(crate) fn nonempty_string(&mut self, o: &Obj<'_>, key: &str) -> Option<String> {
        let s = self.string(o, key)?;
        if s.trim().is_empty() {
            self.bad_value(&join(&o.path, key), "a non-empty string", "\"\"");
            return None;
        }
        Some(s)
    }

    pub(crate) fn boolean(&mut self, o: &Obj<'_>, key: &str, default: bool) -> bool {
        match o.map.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                self.wrong_type(&join(&o.path, key), "true or false", v);
                default
            }
        }
    }

    pub(crate) fn positive(&mut self, o: &Obj<'_>, key: &str) -> Option<u64> {
        let v = o.map.get(key)?;
        match v.as_u64() {
            Some(n) if n > 0 => Some(n),
            _ if v.is_number() => {
                self.bad_value(&join(&o.path, key), "a positive integer", describe(v));
                None
            }
            _ => {
                self.wrong_type(&join(&o.path, key), "a positive integer", v);
                None
            }
        }
    }

    pub(crate) fn duration(&mut self, o: &Obj<'_>, key: &str) -> Option<Duration> {
        let v = o.map.get(key)?;
        let path = join(&o.path, key);
        match v {
            Value::String(s) => match parse_duration(s) {
                Some(d) => Some(d),
                None => {
                    self.bad_value(
                        &path,
                        "a duration such as \"500ms\", \"30s\", \"5m\", \"1h\" or \"1d\"",
                        describe(v),
                    );
                    None
                }
            },
            _ => {
                self.wrong_type(&path, "a duration string such as \"30s\"", v);
                None
            }
        }
    }

    pub(crate) fn positive_duration(
        &mut self,
        o: &Obj<'_>,
        key: &str,
        default: Duration,
    ) -> Duration {
        match self.duration(o, key) {
            Some(d) if d.is_zero() => {
                self.bad_value(&join(&o.path, key), "a duration above zero", "\"0\"");
                default
            }
            Some(d) => d,
            None => default,
        }
    }

    pub(crate) fn string_list(&mut self, o: &Obj<'_>, key: &str) -> Vec<String> {
        let Some(v) = o.map.get(key) else {
            return Vec::new();
        };
        let path = join(&o.path, key);
        let Value::Array(items) = v else {
            self.wrong_type(&path, "a list of strings", v);
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = format!("{path}[{i}]");
            match item {
                Value::String(s) => {
                    if let Some(s) = self.expand(&p, s, o.enabled) {
                        out.push(s);
                    }
                }
                _ => self.wrong_type(&p, "a string", item),
            }
        }
        out
    }

    pub(crate) fn secret_map(&mut self, o: &Obj<'_>, key: &str) -> BTreeMap<String, Secret> {
        let Some(v) = o.map.get(key) else {
            return BTreeMap::new();
        };
        let path = join(&o.path, key);
        let Value::Object(m) = v else {
            self.wrong_type(&path, "an object of strings", v);
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for (k, item) in m {
            let p = join(&path, k);
            match item {
                Value::String(s) => {
                    if let Some(s) = self.expand(&p, s, o.enabled) {
                        out.insert(k.clone(), Secret(s));
                    }
                }
                _ => self.wrong_type(&p, "a string", item),
            }
        }
        out
    }

    pub(crate) fn http_url(&mut self, o: &Obj<'_>, key: &str) -> Option<String> {
        let s = self.string(o, key)?;
        let path = join(&o.path, key);
        match url::Url::parse(&s) {
            Ok(u) if (u.scheme() == "http" || u.scheme() == "https") && u.host().is_some() => {
                Some(s)
            }
            Ok(_) => {
                self.problem(
                    &path,
                    ProblemKind::NotHttpUrl {
                        url: s,
                        reason: None,
                    },
                );
                None
            }
            Err(e) => {
                self.problem(
                    &path,
                    ProblemKind::NotHttpUrl {
                        url: s,
                        reason: Some(e.to_string()),
                    },
                );
                None
            }
        }
    }
}
