//! Positional binding: the router's tail becomes a tool's one argument.

use serde_json::{Map, Value};

use store::ToolRow;

/// Why the tail could not become arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// The tool needs arguments Maven will not guess.
    #[error("{tool} needs arguments I will not guess: {}. Use the page or the service itself.", .missing.join(", "))]
    NeedsArgs {
        /// The row.
        tool: String,
        /// The required properties, each with its declared type.
        missing: Vec<String>,
    },
    /// A read-only tool with one argument that its server's `allow_tools` does not name: the
    /// rest of the sentence would be its argument once it is named there.
    #[error("{tool} needs an argument: {property}. Run `maven mcp allow {server} {remote}` to name it in the server's allow_tools, and the rest of the sentence becomes its argument.")]
    NotNamed {
        /// The row.
        tool: String,
        /// The one required property, with its declared type.
        property: String,
        /// The row's server.
        server: String,
        /// The tool's name on its server.
        remote: String,
    },
    /// The tail is not a number the schema asks for.
    #[error("{tool}: {property} must be {kind}, and {value:?} is not")]
    BadNumber {
        /// The row.
        tool: String,
        /// The property the tail was bound to.
        property: String,
        /// What the schema asks for (`an integer`, `a number`).
        kind: &'static str,
        /// The tail as said.
        value: String,
    },
}

/// How many local `$ref`s are followed to find a property's type.
const REF_DEPTH: usize = 8;

/// The declared `type` of property `prop`: written on the property, or on what its `$ref`
/// points to inside the same schema (`#/$defs/…`, `#/definitions/…`, any local JSON pointer),
/// at most [`REF_DEPTH`] references deep. A reference to anything outside the schema (a
/// network URI) is never fetched: the type is then unknown, and unknown is refused, not
/// guessed.
fn property_type<'a>(schema: &'a Value, prop: &str) -> Option<&'a str> {
    let mut node = schema.get("properties")?.get(prop)?;
    for _ in 0..=REF_DEPTH {
        if let Some(t) = node.get("type").and_then(Value::as_str) {
            return Some(t);
        }
        let pointer = node.get("$ref")?.as_str()?.strip_prefix('#')?;
        node = if pointer.is_empty() {
            schema
        } else {
            schema.pointer(pointer)?
        };
    }
    None
}

fn describe_property(schema: &Value, prop: &str) -> String {
    match property_type(schema, prop) {
        Some(t) => format!("{prop} ({t})"),
        None => format!("{prop} (not described)"),
    }
}

/// binds the router's text tail to a tool's arguments, or refuses.
///
/// - no required property: runs bare (nothing is guessed from the tail);
/// - read-only (the row is not destructive) **and** named in the server's `allow_tools`
///   **and** exactly one required property that the schema describes as string, number or
///   integer: the tail becomes that property (numbers parsed);
/// - anything else: refused, naming what is missing. A required property the schema never
///   describes is refused, never guessed as a string.
pub fn bind_positional(
    row: &ToolRow,
    allow_tools: &[String],
    tail: &str,
) -> Result<Map<String, Value>, BindError> {
    let schema = &row.input_schema;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if required.is_empty() {
        return Ok(Map::new());
    }
    let needs = || BindError::NeedsArgs {
        tool: row.name.clone(),
        missing: required
            .iter()
            .map(|p| describe_property(schema, p))
            .collect(),
    };
    let named = allow_tools.contains(&row.tool);
    if required.len() != 1 || row.destructive {
        return Err(needs());
    }
    let prop = required[0];
    let kind = property_type(schema, prop);
    let bindable = matches!(kind, Some("string" | "integer" | "number"));
    if !named {
        return Err(match (bindable, row.kind) {
            (true, store::ToolKind::Mcp) => BindError::NotNamed {
                tool: row.name.clone(),
                property: describe_property(schema, prop),
                server: row.server.clone(),
                remote: row.tool.clone(),
            },
            _ => needs(),
        });
    }
    let tail = tail.trim();
    if tail.is_empty() {
        return Err(needs());
    }
    let bad = |kind: &'static str| BindError::BadNumber {
        tool: row.name.clone(),
        property: prop.to_string(),
        kind,
        value: tail.to_string(),
    };
    let value = match kind {
        Some("string") => Value::String(tail.to_string()),
        Some("integer") => Value::from(tail.parse::<i64>().map_err(|_| bad("an integer"))?),
        Some("number") => {
            let n: f64 = tail.parse().map_err(|_| bad("a number"))?;
            serde_json::Number::from_f64(n)
                .map(Value::Number)
                .ok_or_else(|| bad("a finite number"))?
        }
        _ => return Err(needs()),
    };
    let mut args = Map::new();
    args.insert(prop.to_string(), value);
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use store::{ToolKind, ToolState};
    use time::OffsetDateTime;

    fn row(tool: &str, destructive: bool, schema: Value) -> ToolRow {
        ToolRow {
            name: format!("srv_{tool}"),
            kind: ToolKind::Mcp,
            server: "srv".into(),
            tool: tool.into(),
            cmd: vec!["mcp".into(), "srv".into(), tool.into()],
            scope: "mcp:srv".into(),
            state: ToolState::Enabled,
            destructive,
            fingerprint: None,
            description: String::new(),
            input_schema: schema,
            shape: json!({}),
            approved_shape: None,
            provenance: String::new(),
            created: OffsetDateTime::UNIX_EPOCH,
            updated: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn allow(t: &str) -> Vec<String> {
        vec![t.to_string()]
    }

    #[test]
    fn binding_follows_local_refs_only() {
        // A local $ref to $defs (2020-12) or definitions: followed to its type.
        for defs in ["$defs", "definitions"] {
            let r = row(
                "get",
                false,
                json!({"type": "object", defs: {"id": {"type": "integer"}, "alias": {"$ref": format!("#/{defs}/id")}},
                       "properties": {"p": {"$ref": format!("#/{defs}/alias")}}, "required": ["p"]}),
            );
            assert_eq!(
                bind_positional(&r, &allow("get"), "7").unwrap()["p"],
                json!(7)
            );
        }
        // A network $ref is never fetched: the type is unknown, and refused.
        let r = row(
            "net",
            false,
            json!({"type": "object", "properties": {"p": {"$ref": "https://schemas.example/id.json"}}, "required": ["p"]}),
        );
        assert_eq!(
            bind_positional(&r, &allow("net"), "x").unwrap_err(),
            BindError::NeedsArgs {
                tool: "srv_net".into(),
                missing: vec!["p (not described)".into()]
            }
        );
        // A dangling pointer and a reference loop: refused, not guessed.
        for p in [
            json!({"$ref": "#/$defs/nope"}),
            json!({"$ref": "#/properties/p"}),
        ] {
            let r = row(
                "odd",
                false,
                json!({"type": "object", "properties": {"p": p}, "required": ["p"]}),
            );
            assert!(matches!(
                bind_positional(&r, &allow("odd"), "x"),
                Err(BindError::NeedsArgs { .. })
            ));
        }
    }

    #[test]
    fn binding_table() {
        let one = |ty: &str| json!({"type": "object", "properties": {"p": {"type": ty}}, "required": ["p"]});
        // No required property: bare, whatever the tail.
        let r = row(
            "list",
            false,
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        );
        assert_eq!(bind_positional(&r, &[], "inbox").unwrap(), Map::new());
        // Read-only + allow_tools + one required string: the tail.
        let r = row("list", false, one("string"));
        assert_eq!(
            bind_positional(&r, &allow("list"), " inbox ").unwrap()["p"],
            json!("inbox")
        );
        // Integer parsed; a bad integer is a clear error.
        let r = row("get", false, one("integer"));
        assert_eq!(
            bind_positional(&r, &allow("get"), "42").unwrap()["p"],
            json!(42)
        );
        assert_eq!(
            bind_positional(&r, &allow("get"), "forty")
                .unwrap_err()
                .to_string(),
            "srv_get: p must be an integer, and \"forty\" is not"
        );
        let r = row("num", false, one("number"));
        assert_eq!(
            bind_positional(&r, &allow("num"), "2.5").unwrap()["p"],
            json!(2.5)
        );
        // Not named in allow_tools: refused even though read-only, naming the command that
        // names it.
        let r = row("list", false, one("string"));
        assert_eq!(
            bind_positional(&r, &[], "x").unwrap_err().to_string(),
            "srv_list needs an argument: p (string). Run `maven mcp allow srv list` to name it in the server's allow_tools, and the rest of the sentence becomes its argument."
        );
        // Two required: refused, naming both.
        let r = row(
            "update_task",
            false,
            json!({"type": "object", "properties": {"task_id": {"type": "integer"}, "title": {"type": "string"}}, "required": ["task_id", "title"]}),
        );
        assert_eq!(
            bind_positional(&r, &allow("update_task"), "42").unwrap_err().to_string(),
            "srv_update_task needs arguments I will not guess: task_id (integer), title (string). Use the page or the service itself."
        );
        // A required property the schema never describes: refused, never guessed.
        let r = row("odd", false, json!({"type": "object", "required": ["p"]}));
        assert_eq!(
            bind_positional(&r, &allow("odd"), "x").unwrap_err(),
            BindError::NeedsArgs {
                tool: "srv_odd".into(),
                missing: vec!["p (not described)".into()]
            }
        );
        // A mutating tool with one required string: refused.
        let r = row("delete", true, one("string"));
        assert!(matches!(
            bind_positional(&r, &allow("delete"), "7"),
            Err(BindError::NeedsArgs { .. })
        ));
        // An object-typed property is not guessed either.
        let r = row("obj", false, one("object"));
        assert!(matches!(
            bind_positional(&r, &allow("obj"), "{}"),
            Err(BindError::NeedsArgs { .. })
        ));
        // Empty tail for a required string: refused.
        let r = row("list", false, one("string"));
        assert!(matches!(
            bind_positional(&r, &allow("list"), "  "),
            Err(BindError::NeedsArgs { .. })
        ));
    }
}
