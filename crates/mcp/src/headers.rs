//! Request metadata headers of the modern Streamable HTTP transport: the values of `Mcp-Name`
//! and `Mcp-Param-*` (plain when they are safe header text, else the Base64 sentinel
//! `=?base64?…?=`), and the `x-mcp-header` declarations of a tool's `inputSchema`, which are
//! either all valid (and say which argument goes into which header) or make the tool unusable.

use base64::Engine as _;
use serde_json::{Map, Value};

/// Longest header name part (`Mcp-Param-{name}`) accepted from a schema.
const NAME_CAP: usize = 64;
/// Deepest schema walked looking for declarations.
const DEPTH_CAP: usize = 64;
/// Most declarations one tool may make.
const DECLARATIONS_CAP: usize = 32;
/// Largest integer JavaScript represents exactly (2^53 - 1).
const SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One valid `x-mcp-header` declaration: the argument at `path` (a chain of `properties`
/// keys) goes into `Mcp-Param-{name}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The chain of property names from the schema root.
    pub path: Vec<String>,
    /// The `{name}` of `Mcp-Param-{name}`.
    pub name: String,
}

/// A header value: as it is when it is visible ASCII or inner spaces, else the Base64 sentinel
/// of its UTF-8 (also for a value that looks like the sentinel itself).
pub fn encode_value(v: &str) -> String {
    let sentinel = v.starts_with("=?base64?") && v.ends_with("?=");
    let plain = v.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !v.starts_with(' ')
        && !v.ends_with(' ')
        && !sentinel;
    if plain {
        return v.to_owned();
    }
    format!(
        "=?base64?{}?=",
        base64::engine::general_purpose::STANDARD.encode(v.as_bytes())
    )
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The declarations of one `inputSchema`, or why they make the tool invalid.
pub fn declarations(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut out = Vec::new();
    walk(schema, Some(Vec::new()), 0, &mut out)?;
    let mut seen: Vec<String> = Vec::with_capacity(out.len());
    for d in &out {
        let lower = d.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!(
                "x-mcp-header {:?} is declared twice (names are case-insensitive)",
                d.name
            ));
        }
        seen.push(lower);
    }
    Ok(out)
}

/// `path` is `Some` while the node is reached from the root through `properties` keys only.
fn walk(
    node: &Value,
    path: Option<Vec<String>>,
    depth: usize,
    out: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    if depth > DEPTH_CAP {
        return Err(format!(
            "the schema is nested deeper than {DEPTH_CAP} levels"
        ));
    }
    match node {
        Value::Object(m) => {
            if let Some(decl) = m.get("x-mcp-header") {
                out.push(declaration(m, decl, path.as_deref())?);
                if out.len() > DECLARATIONS_CAP {
                    return Err(format!(
                        "more than {DECLARATIONS_CAP} x-mcp-header declarations"
                    ));
                }
            }
            for (k, v) in m {
                if k == "properties" {
                    if let Value::Object(props) = v {
                        for (name, sub) in props {
                            let next = path.as_ref().map(|p| {
                                let mut p = p.clone();
                                p.push(name.clone());
                                p
                            });
                            walk(sub, next, depth + 1, out)?;
                        }
                        continue;
                    }
                }
                walk(v, None, depth + 1, out)?;
            }
            Ok(())
        }
        Value::Array(a) => {
            for v in a {
                walk(v, None, depth + 1, out)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn declaration(
    schema: &Map<String, Value>,
    decl: &Value,
    path: Option<&[String]>,
) -> Result<HeaderParam, String> {
    let Value::String(name) = decl else {
        return Err("an x-mcp-header value is not a string".to_owned());
    };
    let shown = crate::text::cap_chars(name, NAME_CAP);
    if name.is_empty() {
        return Err("an x-mcp-header value is empty".to_owned());
    }
    if name.len() > NAME_CAP {
        return Err(format!(
            "x-mcp-header {shown:?}… is longer than {NAME_CAP} bytes"
        ));
    }
    if !name.bytes().all(is_tchar) {
        return Err(format!(
            "x-mcp-header {shown:?} is not an HTTP header name token"
        ));
    }
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return Err(format!(
            "x-mcp-header {shown:?} is not on a property reached through `properties` alone"
        ));
    };
    match schema.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        _ => {
            return Err(format!(
            "x-mcp-header {shown:?} is on a property whose type is not string, integer or boolean"
        ))
        }
    }
    Ok(HeaderParam {
        path: path.to_vec(),
        name: name.clone(),
    })
}

/// The `Mcp-Param-*` headers of one call: for each declaration whose argument is present and
/// not null, its name and encoded value. An argument of the wrong type (an object where a
/// string was declared, an integer beyond the safe range) is an error: the call is not sent.
pub fn param_headers(
    params: &[HeaderParam],
    arguments: &Map<String, Value>,
) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        let mut at: Option<&Value> = None;
        let mut map = Some(arguments);
        for key in &p.path {
            at = map.and_then(|m| m.get(key));
            map = at.and_then(Value::as_object);
        }
        let text = match at {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => encode_value(s),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(i) if (-SAFE_INTEGER..=SAFE_INTEGER).contains(&i) => i.to_string(),
                _ => {
                    return Err(format!(
                        "argument `{}` is not an integer within ±2^53 for header Mcp-Param-{}",
                        p.path.join("."),
                        p.name
                    ))
                }
            },
            Some(_) => {
                return Err(format!(
                    "argument `{}` is not a string, integer or boolean for header Mcp-Param-{}",
                    p.path.join("."),
                    p.name
                ))
            }
        };
        out.push((format!("mcp-param-{}", p.name), text));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_plain_or_base64() {
        let cases = [
            ("us-west1", "us-west1"),
            ("us west 1", "us west 1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
            ("\tindented", "=?base64?CWluZGVudGVk?="),
            ("", ""),
        ];
        for (v, want) in cases {
            assert_eq!(encode_value(v), want, "{v:?}");
        }
    }

    fn tool(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    #[test]
    fn valid_declarations_follow_properties_only() {
        let s = tool(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "outer": {"type": "object", "properties": {
                "flag": {"type": "boolean", "x-mcp-header": "Flag"}
            }},
            "q": {"type": "string"}
        }));
        let d = declarations(&s).unwrap();
        let names: Vec<_> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["Region", "N", "Flag"]);
        assert_eq!(d[2].path, ["outer", "flag"]);
        let args = json!({"region": "eu", "n": 42, "outer": {"flag": false}, "q": "x"});
        let h = param_headers(&d, args.as_object().unwrap()).unwrap();
        assert_eq!(
            h,
            [
                ("mcp-param-Region".to_owned(), "eu".to_owned()),
                ("mcp-param-N".to_owned(), "42".to_owned()),
                ("mcp-param-Flag".to_owned(), "false".to_owned()),
            ]
        );
        let args = json!({"region": null});
        assert!(param_headers(&d, args.as_object().unwrap())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn invalid_declarations_are_refused_with_the_reason() {
        let cases = [
            (
                tool(json!({"v": {"type": "string", "x-mcp-header": ""}})),
                "empty",
            ),
            (
                tool(json!({"v": {"type": "object", "x-mcp-header": "V"}})),
                "type",
            ),
            (
                tool(json!({"v": {"type": "array", "x-mcp-header": "V"}})),
                "type",
            ),
            (
                tool(json!({"v": {"type": "null", "x-mcp-header": "V"}})),
                "type",
            ),
            (
                tool(json!({"v": {"type": "number", "x-mcp-header": "V"}})),
                "type",
            ),
            (
                tool(json!({"a": {"type": "string", "x-mcp-header": "V"},
                            "b": {"type": "string", "x-mcp-header": "v"}})),
                "twice",
            ),
            (
                tool(json!({"v": {"type": "string", "x-mcp-header": "A B"}})),
                "token",
            ),
            (
                tool(json!({"v": {"type": "string", "x-mcp-header": "A:B"}})),
                "token",
            ),
            (
                tool(json!({"v": {"type": "string", "x-mcp-header": "Région"}})),
                "token",
            ),
            (
                tool(json!({"v": {"type": "string", "x-mcp-header": "R\t1"}})),
                "token",
            ),
            (
                tool(
                    json!({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}),
                ),
                "properties",
            ),
            (
                json!({"type": "object", "allOf": [{"properties": {"v": {"type": "string", "x-mcp-header": "V"}}}]}),
                "properties",
            ),
            (
                json!({"type": "object", "x-mcp-header": "Root"}),
                "properties",
            ),
            (
                tool(json!({"v": {"type": "string", "x-mcp-header": 7}})),
                "not a string",
            ),
        ];
        for (schema, want) in cases {
            let e = declarations(&schema).unwrap_err();
            assert!(e.contains(want), "{schema}: {e}");
        }
    }

    #[test]
    fn wrong_argument_types_are_errors() {
        let d = declarations(&tool(
            json!({"n": {"type": "integer", "x-mcp-header": "N"}}),
        ))
        .unwrap();
        for bad in [
            json!({"n": {"x": 1}}),
            json!({"n": 9007199254740993u64}),
            json!({"n": 1.5}),
        ] {
            assert!(
                param_headers(&d, bad.as_object().unwrap()).is_err(),
                "{bad}"
            );
        }
    }
}
