//! The field-by-field difference between the shape the owner approved and the one a server
//! declares now, so the owner sees what changed before approving again.

use std::collections::BTreeMap;

use serde_json::Value;

/// At most this many changed fields are listed (a server controls the size of its shape).
const MAX_CHANGES: usize = 100;
/// A value is shown with at most this many characters.
const MAX_VALUE: usize = 300;
/// Nesting deeper than this is compared as one value.
const MAX_DEPTH: usize = 12;

/// One field that differs. `None` on a side means the field is absent there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// A dotted path such as `inputSchema.properties.project.type` or `annotations`.
    pub(crate) field: String,
    pub(crate) approved: Option<String>,
    pub(crate) now: Option<String>,
}

fn show(v: &Value) -> String {
    let s = match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    shown::cut(&s, MAX_VALUE).into_owned()
}

fn key(path: &str, k: &str) -> String {
    let simple = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'$'));
    let k = if simple {
        k.to_owned()
    } else {
        format!("{k:?}")
    };
    if path.is_empty() {
        k
    } else {
        format!("{path}.{k}")
    }
}

fn flatten(v: &Value, path: String, depth: usize, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) if depth < MAX_DEPTH && !m.is_empty() => {
            for (k, x) in m {
                flatten(x, key(&path, k), depth + 1, out);
            }
        }
        Value::Array(a) if depth < MAX_DEPTH && !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                flatten(x, format!("{path}[{i}]"), depth + 1, out);
            }
        }
        other => {
            out.insert(
                if path.is_empty() {
                    "(shape)".into()
                } else {
                    path
                },
                show(other),
            );
        }
    }
}

/// Every leaf that differs between `approved` and `now`, in path order, capped.
pub(crate) fn diff(approved: &Value, now: &Value) -> Vec<Change> {
    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    flatten(approved, String::new(), 0, &mut a);
    flatten(now, String::new(), 0, &mut b);
    let mut fields: Vec<&String> = a.keys().chain(b.keys()).collect();
    fields.sort();
    fields.dedup();
    let mut out = Vec::new();
    for f in fields {
        let (x, y) = (a.get(f), b.get(f));
        if x != y {
            if out.len() == MAX_CHANGES {
                out.push(Change {
                    field: "…".into(),
                    approved: None,
                    now: Some("more changes not shown".into()),
                });
                break;
            }
            out.push(Change {
                field: f.clone(),
                approved: x.cloned(),
                now: y.cloned(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn c(field: &str, approved: Option<&str>, now: Option<&str>) -> Change {
        Change {
            field: field.into(),
            approved: approved.map(Into::into),
            now: now.map(Into::into),
        }
    }

    #[test]
    fn table() {
        let cases: Vec<(Value, Value, Vec<Change>)> = vec![
            (json!({"a": 1}), json!({"a": 1}), vec![]),
            (
                json!({"name": "list_tasks", "description": "Lists tasks"}),
                json!({"name": "list_tasks", "description": "Deletes tasks"}),
                vec![c(
                    "description",
                    Some("\"Lists tasks\""),
                    Some("\"Deletes tasks\""),
                )],
            ),
            (
                json!({"annotations": {"readOnlyHint": true}}),
                json!({"annotations": {}}),
                vec![
                    c("annotations", None, Some("{}")),
                    c("annotations.readOnlyHint", Some("true"), None),
                ],
            ),
            (
                json!({"inputSchema": {"required": ["project"]}}),
                json!({"inputSchema": {"required": ["project", "force"]}}),
                vec![c("inputSchema.required[1]", None, Some("\"force\""))],
            ),
            (
                json!({"weird key": 1}),
                json!({"weird key": 2}),
                vec![c("\"weird key\"", Some("1"), Some("2"))],
            ),
        ];
        for (a, b, want) in cases {
            assert_eq!(diff(&a, &b), want, "{a} vs {b}");
        }
    }

    #[test]
    fn huge_shapes_are_capped() {
        let a: serde_json::Map<String, Value> =
            (0..500).map(|i| (format!("k{i}"), json!(i))).collect();
        let d = diff(&Value::Object(a), &json!({}));
        assert_eq!(d.len(), MAX_CHANGES + 1);
        let long = json!({"d": "x".repeat(10_000)});
        let d = diff(&json!({"d": "a"}), &long);
        assert!(d[0].now.as_ref().unwrap().chars().count() <= MAX_VALUE + 1);
    }
}
