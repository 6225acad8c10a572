//! The demo server as Maven sees it: a real child process spoken to over stdio.

#![allow(clippy::unwrap_used, reason = "test helpers fail loudly by design")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_maven-demo-todo"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
            next: 0,
        }
    }

    fn send(&mut self, msg: &Value) {
        writeln!(self.stdin, "{msg}").unwrap();
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let r = self.read();
        assert_eq!(r["id"], json!(id), "{r}");
        r
    }

    fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let res = &r["result"];
        (
            res["content"][0]["text"].as_str().unwrap().to_owned(),
            res["isError"] == json!(true),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn handshake_and_the_two_tools() {
    let mut s = Server::start();
    let r = s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(r["result"]["serverInfo"]["name"], "maven-demo-todo");
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = s.request("initialize", json!({"protocolVersion": "1999-01-01"}));
    assert_eq!(
        r["result"]["protocolVersion"], "2025-11-25",
        "newest when asked for an unknown one"
    );

    let tools = s.request("tools/list", json!({}))["result"]["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["list_tasks", "update_task", "clear_done"]);
    assert_eq!(tools[0]["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["project"]));
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["project"]["type"],
        "string"
    );
    assert_eq!(tools[1]["annotations"]["readOnlyHint"], false);
    assert_eq!(s.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn tasks_are_listed_and_updated() {
    let mut s = Server::start();
    let cases: &[(&str, Value, &str, bool)] = &[
        (
            "list_tasks",
            json!({"project": "inbox"}),
            "1. [ ] Buy milk\n2. [ ] Call the plumber\n3. [ ] Renew the passport",
            false,
        ),
        (
            "list_tasks",
            json!({"project": "garden"}),
            "4. [ ] Plant the tulips\n5. [x] Buy tulip bulbs",
            false,
        ),
        (
            "list_tasks",
            json!({"project": "moon"}),
            "No tasks in \"moon\".",
            false,
        ),
        (
            "list_tasks",
            json!({}),
            "list_tasks needs a string \"project\"",
            true,
        ),
        (
            "update_task",
            json!({"task_id": 3}),
            "Task 3 (Renew the passport) is now done.",
            false,
        ),
        (
            "list_tasks",
            json!({"project": "inbox"}),
            "1. [ ] Buy milk\n2. [ ] Call the plumber\n3. [x] Renew the passport",
            false,
        ),
        (
            "update_task",
            json!({"task_id": 3, "done": false, "title": "Renew it"}),
            "Task 3 (Renew it) is now open.",
            false,
        ),
        (
            "update_task",
            json!({"task_id": 99}),
            "There is no task 99.",
            true,
        ),
        (
            "update_task",
            json!({"task_id": "3"}),
            "update_task needs an integer \"task_id\"",
            true,
        ),
        (
            "update_task",
            json!({"task_id": 1}),
            "Task 1 (Buy milk) is now done.",
            false,
        ),
        (
            "clear_done",
            json!({}),
            "Removed 2 done tasks (1. Buy milk, 5. Buy tulip bulbs).",
            false,
        ),
        (
            "clear_done",
            json!({}),
            "No task is done: nothing to remove.",
            false,
        ),
        (
            "list_tasks",
            json!({"project": "garden"}),
            "4. [ ] Plant the tulips",
            false,
        ),
        (
            "delete_everything",
            json!({}),
            "unknown tool \"delete_everything\"",
            true,
        ),
    ];
    for (tool, args, want, err) in cases {
        assert_eq!(
            s.call(tool, args.clone()),
            ((*want).to_owned(), *err),
            "{tool} {args}"
        );
    }
}

#[test]
fn unknown_methods_and_garbage_get_errors() {
    let mut s = Server::start();
    let r = s.request("sampling/createMessage", json!({}));
    assert_eq!(r["error"]["code"], -32601);
    writeln!(s.stdin, "not json").unwrap();
    assert_eq!(s.read()["error"]["code"], -32700);
    writeln!(s.stdin, "[1,2]").unwrap();
    assert_eq!(s.read()["error"]["code"], -32600);
    writeln!(s.stdin).unwrap();
    assert_eq!(
        s.request("ping", json!({}))["result"],
        json!({}),
        "a blank line is skipped"
    );
}
