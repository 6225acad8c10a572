//! `maven mcp import FILE` (C-5): reads the `mcpServers` shape other MCP hosts use
//! (`command`/`args`/`env`, or `url`/`headers`) and prints a Maven `mcp_servers` block with
//! every server `enabled: false`. Secret-bearing values (environment values, header values)
//! are never printed: they become `${NAME}` references, and stderr says which variables to set.

use crate::exit::outln;
use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::{json, Map, Value};

use config::{flatten_name, Config};

use crate::exit::{EXIT_FAILED, EXIT_USAGE};

/// What an import produced: the block and what the owner should know.
#[derive(Debug)]
pub(crate) struct Imported {
    pub(crate) block: Value,
    pub(crate) notes: Vec<String>,
}

fn env_name(server: &str, key: &str) -> String {
    let mut s = String::new();
    for c in format!("MCP_{server}_{key}").chars() {
        s.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    s
}

fn string_map(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Converts another host's configuration into a Maven `mcp_servers` block.
pub(crate) fn convert(input: &Value) -> Result<Imported, String> {
    let servers = input
        .get("mcpServers")
        .or_else(|| input.get("servers"))
        .and_then(Value::as_object)
        .ok_or(
            "expected an object with \"mcpServers\" (or \"servers\") mapping names to servers",
        )?;
    let mut out = Map::new();
    let mut notes = Vec::new();
    let mut flat: BTreeMap<String, String> = BTreeMap::new();
    for (raw_name, server) in servers {
        let name: String = raw_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        if name.is_empty() {
            notes.push(format!(
                "{raw_name:?}: skipped: the name has no usable character"
            ));
            continue;
        }
        if name != *raw_name {
            notes.push(format!("{raw_name:?}: renamed to {name:?}"));
        }
        if let Some(other) = flat.insert(flatten_name(&name), name.clone()) {
            notes.push(format!(
                "{name:?}: skipped: it flattens like {other:?}, and their tool rows would collide"
            ));
            continue;
        }
        let Some(obj) = server.as_object() else {
            notes.push(format!("{name}: skipped: not an object"));
            continue;
        };
        let mut block = Map::new();
        if let Some(cmd) = obj.get("command").and_then(Value::as_str) {
            block.insert("command".into(), json!(cmd));
            let args: Vec<&str> = obj
                .get("args")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if !args.is_empty() {
                block.insert("args".into(), json!(args));
            }
            let mut env = Map::new();
            for (k, _) in string_map(obj.get("env")) {
                let var = env_name(&name, &k);
                notes.push(format!(
                    "{name}: env.{k} is now ${{{var}}}: set {var} in the daemon's environment"
                ));
                env.insert(k, json!(format!("${{{var}}}")));
            }
            if !env.is_empty() {
                block.insert("env".into(), Value::Object(env));
            }
        } else if let Some(url) = obj.get("url").and_then(Value::as_str) {
            if obj.get("type").and_then(Value::as_str) == Some("sse") {
                notes.push(format!(
                    "{name}: declared the legacy SSE transport; Maven speaks Streamable HTTP to the same URL, which may not work"
                ));
            }
            block.insert("url".into(), json!(url));
            let mut headers = Map::new();
            for (k, _) in string_map(obj.get("headers")) {
                let var = env_name(&name, &k);
                notes.push(format!(
                    "{name}: header {k} is now ${{{var}}}: set {var} in the daemon's environment"
                ));
                headers.insert(k, json!(format!("${{{var}}}")));
            }
            if !headers.is_empty() {
                block.insert("headers".into(), Value::Object(headers));
            }
            if let Ok(u) = url::Url::parse(url) {
                let private = matches!(u.host_str(), Some(h) if h == "localhost" || h.starts_with("127.") || h.starts_with("192.168.") || h.starts_with("10.") || h == "[::1]");
                if private {
                    notes.push(format!(
                        "{name}: {url} is on this machine or the LAN: add \"allow_private\": true if you trust it"
                    ));
                }
            }
        } else {
            notes.push(format!("{name}: skipped: neither \"command\" nor \"url\""));
            continue;
        }
        for k in obj.keys() {
            if !matches!(
                k.as_str(),
                "command" | "args" | "env" | "url" | "headers" | "type"
            ) {
                notes.push(format!(
                    "{name}: {k:?} has no Maven equivalent and was dropped"
                ));
            }
        }
        block.insert("enabled".into(), json!(false));
        out.insert(name, Value::Object(block));
    }
    Ok(Imported {
        block: json!({ "mcp_servers": Value::Object(out) }),
        notes,
    })
}

/// Runs the command.
pub(crate) fn run(file: &str) -> ExitCode {
    let bytes = if file == "-" {
        let mut b = Vec::new();
        if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut b) {
            eprintln!("maven mcp import: cannot read stdin: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
        b
    } else {
        match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("maven mcp import: cannot read {file}: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    };
    let input: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("maven mcp import: {file}: not valid JSON: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let imported = match convert(&input) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("maven mcp import: {file}: {}", shown::block(&e.to_string()));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    // What is printed must itself be a valid Maven configuration.
    let text = serde_json::to_string_pretty(&imported.block).unwrap_or_default();
    if let Err(e) = Config::parse("(imported)", text.as_bytes(), &|_| None) {
        eprintln!(
            "maven mcp import: the converted block does not validate:\n{}",
            shown::block(&e.to_string())
        );
        return ExitCode::from(EXIT_FAILED);
    }
    for n in &imported.notes {
        // Notes quote the names of another host's file: shown, never obeyed.
        eprintln!("note: {}", shown::line(n));
    }
    outln!("{text}");
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_desktop_shape_becomes_a_dark_block_without_secrets() {
        let input = json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "@x/server-files", "/home/me"], "env": {"API_KEY": "sk-secret"}},
            "remote thing": {"url": "https://mcp.example/mcp", "headers": {"Authorization": "Bearer abc"}, "timeout": 5},
            "lan": {"type": "http", "url": "http://192.168.1.5:9100/mcp"},
            "broken": {"foo": 1}
        }});
        let out = convert(&input).unwrap();
        let text = out.block.to_string();
        assert!(
            !text.contains("sk-secret") && !text.contains("Bearer abc"),
            "{text}"
        );
        let s = &out.block["mcp_servers"];
        assert_eq!(s["files"]["command"], "npx");
        assert_eq!(s["files"]["env"]["API_KEY"], "${MCP_FILES_API_KEY}");
        assert_eq!(s["files"]["enabled"], false);
        assert_eq!(
            s["remote_thing"]["headers"]["Authorization"],
            "${MCP_REMOTE_THING_AUTHORIZATION}"
        );
        assert_eq!(s["lan"]["url"], "http://192.168.1.5:9100/mcp");
        assert!(s.get("broken").is_none());
        let notes = out.notes.join("\n");
        assert!(
            notes.contains("\"remote thing\": renamed to \"remote_thing\""),
            "{notes}"
        );
        assert!(notes.contains("remote_thing: \"timeout\" has no Maven equivalent and was dropped"));
        assert!(notes.contains("broken: skipped: neither \"command\" nor \"url\""));
        assert!(notes.contains("lan: http://192.168.1.5:9100/mcp is on this machine or the LAN"));
        // The result is a valid Maven configuration.
        Config::parse("x", out.block.to_string().as_bytes(), &|_| None).unwrap();
    }

    #[test]
    fn names_that_flatten_alike_are_not_both_imported() {
        let out =
            convert(&json!({"mcpServers": {"a-b": {"command": "x"}, "a_b": {"command": "y"}}}))
                .unwrap();
        assert_eq!(out.block["mcp_servers"].as_object().unwrap().len(), 1);
        assert!(out.notes[0].contains("flattens like"), "{:?}", out.notes);
    }

    #[test]
    fn other_shapes_are_refused() {
        assert!(convert(&json!({"servers": 3})).is_err());
        assert!(convert(&json!([])).is_err());
    }
}
