//! Named arguments checked against a tool's input schema, before anything runs or is asked.
//!
//! A model fills named arguments; a server wrote the schema. Both are someone else's words, so
//! the check is strict where it can be and bounded everywhere: every required property present,
//! no property the schema does not declare, each value of its declared type (and within its
//! enum, const, bounds, lengths and the formats Maven can check: date-time, date, email, uri,
//! uuid), nested objects and arrays checked the same way, local `$ref`s followed a bounded
//! number of times, and the whole at most [`MAX_ARGS_BYTES`] and [`MAX_DEPTH`] deep. What a
//! schema leaves open (no `type`, a format Maven does not know) is accepted as the schema
//! allows, and what it cannot follow (a `$ref` outside the schema, too deep) is refused, never
//! guessed.

use serde_json::{Map, Value};

/// Largest arguments, serialised, in bytes.
pub const MAX_ARGS_BYTES: usize = 16 * 1024;
/// Deepest nesting of arguments (objects and arrays).
pub const MAX_DEPTH: usize = 16;
/// How many local `$ref`s are followed for one value.
const REF_DEPTH: usize = 8;

/// Why arguments do not fit a tool's schema: the argument (a path such as
/// `entities[0].name`) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{tool}: {}{problem}", if .path.is_empty() { String::new() } else { format!("argument {}: ", .path) })]
pub struct ArgError {
    /// The row.
    pub tool: String,
    /// Which argument (empty: the arguments as a whole).
    pub path: String,
    /// What is wrong, in words.
    pub problem: String,
}

/// Checks `args` against `schema` (a tool's `inputSchema`), for the row `tool`.
pub fn validate(tool: &str, schema: &Value, args: &Map<String, Value>) -> Result<(), ArgError> {
    let fail = |path: &str, problem: String| ArgError {
        tool: tool.to_owned(),
        path: path.to_owned(),
        problem,
    };
    let size = serde_json::to_vec(args)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if size > MAX_ARGS_BYTES {
        return Err(fail(
            "",
            format!("the arguments are {size} bytes, more than the {MAX_ARGS_BYTES} allowed"),
        ));
    }
    let root = Value::Object(args.clone());
    // The top level never takes a property the schema does not declare.
    check(schema, schema, &root, "", 0, true).map_err(|(path, problem)| fail(&path, problem))
}

type Fault = (String, String);

fn at(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The schema node `node` stands for: itself, or what its local `$ref` points to.
fn resolve<'a>(root: &'a Value, mut node: &'a Value, path: &str) -> Result<&'a Value, Fault> {
    for _ in 0..=REF_DEPTH {
        let Some(r) = node.get("$ref") else {
            return Ok(node);
        };
        let pointer = r
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .ok_or_else(|| {
                (
                    path.to_owned(),
                    "its schema refers outside itself, which Maven does not follow".to_owned(),
                )
            })?;
        node = if pointer.is_empty() {
            root
        } else {
            root.pointer(pointer).ok_or_else(|| {
                (
                    path.to_owned(),
                    format!("its schema refers to {pointer:?}, which it does not have"),
                )
            })?
        };
    }
    Err((
        path.to_owned(),
        "its schema's references go too deep".to_owned(),
    ))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => false,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    shown::cut(&s, 60).into_owned()
}

fn check(
    root: &Value,
    node: &Value,
    v: &Value,
    path: &str,
    depth: usize,
    top: bool,
) -> Result<(), Fault> {
    let bad = |problem: String| Err((path.to_owned(), problem));
    if depth > MAX_DEPTH {
        return bad(format!("nested more than {MAX_DEPTH} deep"));
    }
    let node = resolve(root, node, path)?;
    // A schema that is `true` (or `{}`) takes anything; `false` takes nothing.
    match node {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return bad("the tool takes no value here".to_owned()),
        Value::Object(_) => {}
        _ => return bad("its schema here is not a schema".to_owned()),
    }
    // Combinations.
    if let Some(all) = node.get("allOf").and_then(Value::as_array) {
        for s in all {
            check(root, s, v, path, depth + 1, false)?;
        }
    }
    for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
        if let Some(any) = node.get(key).and_then(Value::as_array) {
            let fits = any
                .iter()
                .filter(|s| check(root, s, v, path, depth + 1, false).is_ok())
                .count();
            if fits == 0 || (exactly_one && fits > 1) {
                return bad(format!(
                    "{} does not fit {} of the forms its schema allows",
                    short(v),
                    if exactly_one { "exactly one" } else { "any" }
                ));
            }
        }
    }
    // Type.
    match node.get("type") {
        None => {}
        Some(Value::String(t)) if !is_type(v, t) => {
            return bad(format!("must be {}, not {}", article(t), kind(v)));
        }
        Some(Value::String(_)) => {}
        Some(Value::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            if !names.iter().any(|t| is_type(v, t)) {
                return bad(format!(
                    "must be {}, not {}",
                    names
                        .iter()
                        .map(|t| article(t))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    kind(v)
                ));
            }
        }
        Some(_) => return bad("its schema's type is not a type".to_owned()),
    }
    if let Some(e) = node.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            let choices: Vec<String> = e.iter().take(12).map(short).collect();
            return bad(format!("{} is not one of {}", short(v), choices.join(", ")));
        }
    }
    if let Some(c) = node.get("const") {
        if c != v {
            return bad(format!("must be {}", short(c)));
        }
    }
    match v {
        Value::String(s) => string(node, s).or_else(bad),
        Value::Number(n) => number(node, n.as_f64().unwrap_or(f64::NAN)).or_else(bad),
        Value::Array(items) => {
            let n = items.len();
            if let Some(min) = node.get("minItems").and_then(Value::as_u64) {
                if (n as u64) < min {
                    return bad(format!("has {n} items, fewer than {min}"));
                }
            }
            if let Some(max) = node.get("maxItems").and_then(Value::as_u64) {
                if (n as u64) > max {
                    return bad(format!("has {n} items, more than {max}"));
                }
            }
            if let Some(item) = node.get("items") {
                for (i, it) in items.iter().enumerate() {
                    check(root, item, it, &format!("{path}[{i}]"), depth + 1, false)?;
                }
            }
            Ok(())
        }
        Value::Object(map) => {
            let props = node.get("properties").and_then(Value::as_object);
            if let Some(req) = node.get("required").and_then(Value::as_array) {
                for r in req.iter().filter_map(Value::as_str) {
                    if !map.contains_key(r) {
                        return Err((at(path, r), "is required and not set".to_owned()));
                    }
                }
            }
            // Undeclared properties: never at the top, and not where the schema declares its
            // properties without opening the object to others.
            let open = matches!(node.get("additionalProperties"), Some(Value::Bool(true)))
                || matches!(node.get("additionalProperties"), Some(Value::Object(_)));
            for (k, val) in map {
                let p = at(path, k);
                match props.and_then(|p| p.get(k)) {
                    Some(s) => check(root, s, val, &p, depth + 1, false)?,
                    None if top || (props.is_some() && !open) => {
                        return Err((p, "is not an argument the tool declares".to_owned()))
                    }
                    None => {
                        if let Some(extra @ Value::Object(_)) = node.get("additionalProperties") {
                            check(root, extra, val, &p, depth + 1, false)?;
                        }
                    }
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn article(t: &str) -> String {
    match t {
        "integer" | "array" | "object" => format!("an {t}"),
        "null" => "null".to_owned(),
        t => format!("a {t}"),
    }
}

fn string(node: &Value, s: &str) -> Result<(), String> {
    let n = s.chars().count();
    if let Some(min) = node.get("minLength").and_then(Value::as_u64) {
        if (n as u64) < min {
            return Err(format!("is {n} characters, fewer than {min}"));
        }
    }
    if let Some(max) = node.get("maxLength").and_then(Value::as_u64) {
        if (n as u64) > max {
            return Err(format!("is {n} characters, more than {max}"));
        }
    }
    let ok = match node.get("format").and_then(Value::as_str) {
        Some("date-time") => {
            time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok()
        }
        Some("date") => time::Date::parse(
            s,
            &time::macros::format_description!("[year]-[month]-[day]"),
        )
        .is_ok(),
        Some("email") => {
            matches!(s.split_once('@'), Some((a, b)) if !a.is_empty() && b.contains('.') && !s.contains(char::is_whitespace))
        }
        Some("uri") => {
            matches!(s.split_once(':'), Some((scheme, _)) if !scheme.is_empty()
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic()))
                && !s.contains(char::is_whitespace)
        }
        Some("uuid") => {
            let parts: Vec<&str> = s.split('-').collect();
            parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
                && parts
                    .iter()
                    .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{:?} is not a valid {}",
            shown::cut(s, 60),
            node.get("format")
                .and_then(Value::as_str)
                .unwrap_or("value")
        ))
    }
}

fn number(node: &Value, x: f64) -> Result<(), String> {
    let bound = |k: &str| node.get(k).and_then(Value::as_f64);
    if let Some(m) = bound("minimum") {
        if x < m {
            return Err(format!("is {x}, less than {m}"));
        }
    }
    if let Some(m) = bound("maximum") {
        if x > m {
            return Err(format!("is {x}, more than {m}"));
        }
    }
    if let Some(m) = bound("exclusiveMinimum") {
        if x <= m {
            return Err(format!("is {x}, not more than {m}"));
        }
    }
    if let Some(m) = bound("exclusiveMaximum") {
        if x >= m {
            return Err(format!("is {x}, not less than {m}"));
        }
    }
    Ok(())
}

/// The optional properties `args` leaves unset, in the schema's order: what the owner is told
/// was not set.
pub fn unset(schema: &Value, args: &Map<String, Value>) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .filter(|k| !args.contains_key(k.as_str()) && !required.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn memory() -> Value {
        json!({
            "type": "object",
            "properties": {
                "entities": {"type": "array", "maxItems": 3, "items": {"$ref": "#/$defs/entity"}},
                "note": {"type": "string", "maxLength": 10},
                "kind": {"enum": ["person", "place"]},
                "when": {"type": "string", "format": "date-time"},
                "count": {"type": "integer", "minimum": 1}
            },
            "required": ["entities"],
            "$defs": {"entity": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "observations": {"type": "array", "items": {"type": "string"}}},
                "required": ["name"]
            }}
        })
    }

    fn check(args: Value) -> Result<(), String> {
        let Value::Object(m) = args else { panic!() };
        validate("memory_create_entities", &memory(), &m).map_err(|e| e.to_string())
    }

    #[test]
    fn named_arguments_fit_the_schema_or_the_answer_names_the_argument_and_the_fault() {
        assert_eq!(
            check(json!({"entities": [{"name": "Anna", "observations": ["likes tea"]}]})),
            Ok(())
        );
        for (args, want) in [
            (json!({}), "memory_create_entities: argument entities: is required and not set"),
            (
                json!({"entities": [{"name": "Anna"}], "delete_all": true}),
                "memory_create_entities: argument delete_all: is not an argument the tool declares",
            ),
            (
                json!({"entities": "Anna"}),
                "memory_create_entities: argument entities: must be an array, not a string",
            ),
            (
                json!({"entities": [{"observations": []}]}),
                "memory_create_entities: argument entities[0].name: is required and not set",
            ),
            (
                json!({"entities": [{"name": "A", "age": 3}]}),
                "memory_create_entities: argument entities[0].age: is not an argument the tool declares",
            ),
            (
                json!({"entities": [{"name": "A"}, {"name": "B"}, {"name": "C"}, {"name": "D"}]}),
                "memory_create_entities: argument entities: has 4 items, more than 3",
            ),
            (
                json!({"entities": [], "note": "much too long"}),
                "memory_create_entities: argument note: is 13 characters, more than 10",
            ),
            (
                json!({"entities": [], "kind": "thing"}),
                "memory_create_entities: argument kind: \"thing\" is not one of \"person\", \"place\"",
            ),
            (
                json!({"entities": [], "when": "yesterday"}),
                "memory_create_entities: argument when: \"yesterday\" is not a valid date-time",
            ),
            (
                json!({"entities": [], "count": 0}),
                "memory_create_entities: argument count: is 0, less than 1",
            ),
            (
                json!({"entities": [], "count": 1.5}),
                "memory_create_entities: argument count: must be an integer, not a number",
            ),
        ] {
            assert_eq!(check(args.clone()), Err(want.to_owned()), "{args}");
        }
        assert_eq!(
            check(json!({"entities": [], "when": "2026-12-03T10:00:00Z", "count": 2})),
            Ok(())
        );
    }

    #[test]
    fn arguments_are_bounded_in_size_and_depth_and_foreign_refs_are_not_followed() {
        let big = json!({"entities": [{"name": "x".repeat(MAX_ARGS_BYTES)}]});
        assert!(check(big)
            .unwrap_err()
            .contains("bytes, more than the 16384 allowed"));
        let mut deep = json!(1);
        for _ in 0..40 {
            deep = json!([deep]);
        }
        let schema = json!({"type": "object", "properties": {"d": {}}});
        let Value::Object(m) = json!({"d": deep}) else {
            panic!()
        };
        assert!(
            validate("t", &schema, &m).is_ok(),
            "an open schema takes any value"
        );
        let nested = json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/n"}},
            "$defs": {"n": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/n"}}}});
        assert!(validate("t", &nested, &m)
            .unwrap_err()
            .problem
            .contains("nested more than 16 deep"));
        let foreign =
            json!({"type": "object", "properties": {"x": {"$ref": "https://evil.example/s.json"}}});
        let Value::Object(m) = json!({"x": 1}) else {
            panic!()
        };
        assert_eq!(
            validate("t", &foreign, &m).unwrap_err().problem,
            "its schema refers outside itself, which Maven does not follow"
        );
    }

    #[test]
    fn unset_names_the_optional_properties_left_out() {
        let Value::Object(m) = json!({"entities": [], "note": "x"}) else {
            panic!()
        };
        assert_eq!(unset(&memory(), &m), ["kind", "when", "count"]);
    }
}
