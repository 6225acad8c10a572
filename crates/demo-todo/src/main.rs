//! `maven-demo-todo`: a tiny to-do list MCP server over stdio, so a newcomer can try the whole
//! flow (discovery → proposed → enabled on /tools with step-up → a turn) without any service.
//!
//! Three tools: `list_tasks` (read-only, one required string `project`: a turn's tail binds to
//! it), `update_task` (writes, with a required `task_id`: Maven refuses to guess a write's
//! arguments from a sentence) and `clear_done` (writes, no arguments: Maven asks for
//! confirmation every time). The list lives in
//! memory and starts with a few open tasks and one done (so `clear_done` has one to remove);
//! nothing is written to disk.
//!
//! Line-delimited JSON-RPC 2.0 on stdin/stdout, one message per line; requests are answered in
//! order. Lines longer than 1 MiB are refused without being assembled.

#![allow(
    clippy::disallowed_macros,
    reason = "a demo server, run by hand or by tests"
)]

use std::io::{BufRead, BufReader, Read, Write};

use serde_json::{json, Value};

/// Longest request line read.
const MAX_LINE: u64 = 1 << 20;
/// Protocol versions this server speaks, newest first.
const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

struct Task {
    id: u64,
    project: String,
    title: String,
    done: bool,
}

struct Todo {
    tasks: Vec<Task>,
}

fn tools() -> Value {
    json!([
        {
            "name": "list_tasks",
            "title": "List tasks",
            "description": "Lists the open and done tasks of one project (for example \"inbox\" or \"garden\").",
            "inputSchema": {
                "type": "object",
                "properties": {"project": {"type": "string", "description": "The project's name"}},
                "required": ["project"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true}
        },
        {
            "name": "update_task",
            "title": "Update a task",
            "description": "Marks a task done (or open again) and optionally renames it.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "task_id": {"type": "integer", "description": "The task's number"},
                    "done": {"type": "boolean", "description": "Done (default true)"},
                    "title": {"type": "string", "description": "A new title"}
                },
                "required": ["task_id"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": false}
        },
        {
            "name": "clear_done",
            "title": "Clear done tasks",
            "description": "Removes every task marked done, in every project.",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "annotations": {"readOnlyHint": false, "destructiveHint": true}
        }
    ])
}

fn text(s: String, is_error: bool) -> Value {
    json!({"content": [{"type": "text", "text": s}], "isError": is_error})
}

impl Todo {
    fn new() -> Todo {
        let t = |id, project: &str, title: &str, done| Task {
            id,
            project: project.into(),
            title: title.into(),
            done,
        };
        Todo {
            tasks: vec![
                t(1, "inbox", "Buy milk", false),
                t(2, "inbox", "Call the plumber", false),
                t(3, "inbox", "Renew the passport", false),
                t(4, "garden", "Plant the tulips", false),
                t(5, "garden", "Buy tulip bulbs", true),
            ],
        }
    }

    fn call(&mut self, name: &str, args: &Value) -> Value {
        match name {
            "list_tasks" => {
                let Some(project) = args.get("project").and_then(Value::as_str) else {
                    return text("list_tasks needs a string \"project\"".into(), true);
                };
                let lines: Vec<String> = self
                    .tasks
                    .iter()
                    .filter(|t| t.project.eq_ignore_ascii_case(project.trim()))
                    .map(|t| format!("{}. [{}] {}", t.id, if t.done { "x" } else { " " }, t.title))
                    .collect();
                if lines.is_empty() {
                    text(format!("No tasks in {project:?}."), false)
                } else {
                    text(lines.join("\n"), false)
                }
            }
            "update_task" => {
                let Some(id) = args.get("task_id").and_then(Value::as_u64) else {
                    return text("update_task needs an integer \"task_id\"".into(), true);
                };
                let done = args.get("done").and_then(Value::as_bool).unwrap_or(true);
                let title = args.get("title").and_then(Value::as_str);
                match self.tasks.iter_mut().find(|t| t.id == id) {
                    Some(t) => {
                        t.done = done;
                        if let Some(title) = title {
                            t.title = title.chars().take(200).collect();
                        }
                        text(
                            format!(
                                "Task {id} ({}) is now {}.",
                                t.title,
                                if done { "done" } else { "open" }
                            ),
                            false,
                        )
                    }
                    None => text(format!("There is no task {id}."), true),
                }
            }
            "clear_done" => {
                let removed: Vec<String> = self
                    .tasks
                    .iter()
                    .filter(|t| t.done)
                    .map(|t| format!("{}. {}", t.id, t.title))
                    .collect();
                self.tasks.retain(|t| !t.done);
                let said = match removed.len() {
                    0 => "No task is done: nothing to remove.".to_owned(),
                    1 => format!("Removed 1 done task ({}).", removed.join(", ")),
                    n => format!("Removed {n} done tasks ({}).", removed.join(", ")),
                };
                text(said, false)
            }
            other => text(format!("unknown tool {other:?}"), true),
        }
    }

    /// The answer to one message; `None` for a notification.
    fn handle(&mut self, msg: &Value) -> Option<Value> {
        let id = msg.get("id").cloned()?;
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => {
                let asked = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let version = VERSIONS
                    .iter()
                    .find(|v| **v == asked)
                    .unwrap_or(&VERSIONS[0]);
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "maven-demo-todo", "version": env!("CARGO_PKG_VERSION")}
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": tools()})),
            "tools/call" => match params.get("name").and_then(Value::as_str) {
                Some(name) => {
                    let args = params.get("arguments").cloned().unwrap_or(json!({}));
                    Ok(self.call(name, &args))
                }
                None => Err((-32602, "tools/call needs a name".to_owned())),
            },
            other => Err((-32601, format!("method not found: {other}"))),
        };
        Some(match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        })
    }
}

fn main() {
    let mut todo = Todo::new();
    let stdin = std::io::stdin();
    let mut input = BufReader::new(stdin.lock());
    let mut out = std::io::stdout().lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut input).take(MAX_LINE + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.last() != Some(&b'\n') && buf.len() as u64 > MAX_LINE {
            eprintln!("maven-demo-todo: a line longer than {MAX_LINE} bytes; stopping");
            return;
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let reply = match serde_json::from_slice::<Value>(&buf) {
            Ok(msg) if msg.is_object() => todo.handle(&msg),
            Ok(_) => Some(json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32600, "message": "one JSON-RPC object per line"}})),
            Err(e) => Some(json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32700, "message": format!("parse error: {e}")}})),
        };
        if let Some(r) = reply {
            let mut line = r.to_string();
            line.push('\n');
            if out
                .write_all(line.as_bytes())
                .and_then(|_| out.flush())
                .is_err()
            {
                return;
            }
        }
    }
}
