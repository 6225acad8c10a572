//! Conversations through the real daemon: a slow act in one terminal conversation (a real MCP
//! server that takes 20 s per call) while a digest, another server's act and `maven status`
//! answer in others, and the conversation's own next turn waits for it; then two voice
//! conversations (the PyPI `wyoming` client through `voice.listen`) and two terminal ones,
//! each with a question before the demo todo server's write: every yes confirms its own
//! question alone, and the acts log names the front end that confirmed.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{by_name, demo_server, eventually, free_port, stderr, testkit_mcp, Home};
use crate::voice::{say as voice_say, word_of};

/// How long the slow server takes to answer a call.
const SLOW_MS: u64 = 20_000;

/// The most another conversation's answer may take while the slow call runs: far below the
/// slow call, generous for a loaded machine.
const PROMPT: Duration = Duration::from_secs(8);

fn calls(record: &Path) -> usize {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim() == "tools/call")
        .count()
}

/// `maven say [--conversation NAME] TEXT` started in the background.
fn say_in_background(home: &Home, conversation: &str, text: &str) -> Child {
    let mut args = vec!["say", "--conversation", conversation];
    args.extend(text.split(' '));
    home.command_for(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// One terminal turn (of the terminal conversation `conversation`, else the owner's
/// terminal's): its exit code and what it printed.
fn say(home: &Home, conversation: Option<&str>, text: &str) -> (i32, String) {
    let mut args = vec!["say"];
    if let Some(c) = conversation {
        args.extend(["--conversation", c]);
    }
    args.extend(text.split(' '));
    let out = home.run(&args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    )
}

/// A testkit server's config: its tools from `tools`, its calls recorded in `record`.
fn testkit_server(
    home: &Home,
    name: &str,
    tools: Value,
    extra: &[String],
) -> (Value, std::path::PathBuf) {
    let file = home.dir.path().join(format!("{name}-tools.json"));
    let record = home.dir.path().join(format!("{name}-record.txt"));
    std::fs::write(&file, tools.to_string()).unwrap();
    std::fs::write(&record, "").unwrap();
    crate::support::writable_by_root_servers(&record);
    let mut args = vec![
        format!("--tools-file={}", file.display()),
        format!("--record={}", record.display()),
    ];
    args.extend(extra.iter().cloned());
    let server = json!({
        "command": testkit_mcp().to_str().unwrap(),
        "args": args,
        "enabled": true,
        "sandbox": {"read": [file], "write": [record]}
    });
    (server, record)
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test times real processes by the wall clock"
)]
fn a_slow_act_in_one_conversation_delays_no_other_and_its_own_next_turn_waits_for_it() {
    let home = Home::new();
    let read_only = |name: &str| {
        json!([{"name": name, "description": "Reads.", "annotations": {"readOnlyHint": true},
                "inputSchema": {"type": "object"}}])
    };
    let (slow, slow_record) = testkit_server(
        &home,
        "slow",
        read_only("report"),
        &[format!("--call-delay-ms={SLOW_MS}")],
    );
    let (fast, fast_record) = testkit_server(&home, "fast", read_only("ping"), &[]);
    home.write_config(&json!({"mcp_servers": {"slow": slow, "fast": fast}}).to_string());
    let d = home.start();
    eventually("discovery", || {
        (home.json(&["tools", "--json"]).as_array().unwrap().len() == 2).then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    home.enable(&["slow_report", "fast_ping"]);
    let _d = home.start();
    eventually("both servers to be ready", || {
        let st = home.json(&["mcp", "status", "--json"]);
        (by_name(&st, "slow")["state"] == "ready" && by_name(&st, "fast")["state"] == "ready")
            .then_some(())
    });

    // The slow act, in the conversation "slow", until its call reaches the server.
    let began = Instant::now();
    let mut first = say_in_background(&home, "slow", "slow report");
    eventually("the slow call to reach its server", || {
        (calls(&slow_record) == 1).then_some(())
    });

    // Meanwhile, in other conversations: the digest (no server), the fast server's act, and
    // `maven status` each answer at once, while the slow `maven say` still runs.
    let timed = |what: &str, args: &[&str]| {
        let at = Instant::now();
        let out = home.run(args);
        let took = at.elapsed();
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        assert!(took < PROMPT, "{what} took {took:?} behind the slow call");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let digest = timed(
        "the digest",
        &["say", "what's", "new", "in", "my", "feeds?"],
    );
    assert!(digest.starts_with("You have no feeds yet."), "{digest}");
    assert!(
        first.try_wait().unwrap().is_none(),
        "the slow say ended first"
    );
    let ping = timed(
        "the fast act",
        &["say", "--conversation", "fast", "fast", "ping"],
    );
    assert_eq!(
        ping,
        "fast_ping ran; the MCP server \"fast\" returned:\ncalled ping"
    );
    assert_eq!(calls(&fast_record), 1);
    assert!(
        first.try_wait().unwrap().is_none(),
        "the slow say ended first"
    );
    let status = timed("maven status", &["status", "--json"]);
    let status: Value = serde_json::from_str(&status).unwrap();
    assert!(status.is_object(), "{status}");
    assert!(
        first.try_wait().unwrap().is_none(),
        "the slow say ended first"
    );

    // The slow conversation's next turn — a digest, answered at once elsewhere — waits for
    // its first turn to end.
    let mut second = say_in_background(&home, "slow", "what's new in my feeds?");
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        first.try_wait().unwrap().is_none(),
        "the second turn was asked while the first ran"
    );
    let mut ended: [Option<Instant>; 2] = [None, None];
    let deadline = Instant::now() + Duration::from_millis(SLOW_MS) + Duration::from_secs(60);
    while ended.iter().any(Option::is_none) {
        for (i, child) in [&mut first, &mut second].into_iter().enumerate() {
            if ended[i].is_none() && child.try_wait().unwrap().is_some() {
                ended[i] = Some(Instant::now());
            }
        }
        assert!(
            Instant::now() < deadline,
            "the slow conversation's turns never ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (first_end, second_end) = (ended[0].unwrap(), ended[1].unwrap());
    assert!(
        first_end <= second_end,
        "the second turn of the conversation finished before its first"
    );
    assert!(
        first_end - began >= Duration::from_millis(SLOW_MS),
        "the slow call took its time"
    );
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).trim(),
        "slow_report ran; the MCP server \"slow\" returned:\ncalled report"
    );
    let second = second.wait_with_output().unwrap();
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        String::from_utf8_lossy(&second.stdout).starts_with("You have no feeds yet."),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
    assert_eq!(calls(&slow_record), 1, "the slow act ran once");
}

#[test]
fn each_conversation_confirms_only_its_own_question_and_the_acts_log_names_its_front_end() {
    let home = Home::new();
    let port = free_port();
    home.write_config(
        &json!({
            "voice": {"listen": format!("127.0.0.1:{port}")},
            "mcp_servers": {"todo": {"command": demo_server(), "enabled": true}}
        })
        .to_string(),
    );
    let d = home.start();
    eventually("discovery", || {
        let tools = home.json(&["tools", "--json"]);
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "todo_clear_done")
            .then_some(())
    });
    assert!(d.signal("-TERM").status.success());
    home.enable(&["todo_clear_done"]);
    let _d = home.start();
    eventually("the server to be ready", || {
        (by_name(&home.json(&["mcp", "status", "--json"]), "todo")["state"] == "ready")
            .then_some(())
    });
    let acts = || home.json(&["acts", "--json"]).as_array().unwrap().clone();

    // One question each: the owner's terminal, the terminal conversation "work", and the voice
    // conversations "kitchen" and "hall".
    let asks = "About to run todo_clear_done. Run it? (yes/no)";
    assert_eq!(say(&home, None, "todo clear done"), (0, asks.to_owned()));
    assert_eq!(
        say(&home, Some("work"), "todo clear done"),
        (0, asks.to_owned())
    );
    let (kind, kitchen) = voice_say(port, "Todo clear done.", "en", "kitchen");
    assert_eq!(kind, "handled");
    assert!(kitchen.contains("To run it, say: yes, "), "{kitchen}");
    let (_, hall) = voice_say(port, "Todo clear done.", "en", "hall");
    assert!(hall.contains("To run it, say: yes, "), "{hall}");
    let (kitchen_word, hall_word) = (word_of(&kitchen), word_of(&hall));
    assert!(acts().is_empty(), "nothing ran on a question");

    // The kitchen's yes runs the kitchen's act, once.
    let (_, ran) = voice_say(port, &format!("Yes, {kitchen_word}."), "en", "kitchen");
    assert!(ran.contains("Removed 1 done task"), "{ran}");
    assert_eq!(acts().len(), 1);
    // The terminal's yes runs the terminal's; "work" and the hall still wait.
    let (code, ran) = say(&home, None, "yes");
    assert_eq!(code, 0, "{ran}");
    assert!(ran.starts_with("todo_clear_done ran;"), "{ran}");
    assert_eq!(acts().len(), 2);
    let (_, ran) = voice_say(port, &format!("Yes, {hall_word}."), "en", "hall");
    assert!(ran.contains("No task is done"), "{ran}");
    assert_eq!(acts().len(), 3);
    let (code, ran) = say(&home, Some("work"), "yes");
    assert_eq!(code, 0, "{ran}");
    assert!(ran.starts_with("todo_clear_done ran;"), "{ran}");
    assert_eq!(acts().len(), 4);

    // Every question is answered: a yes anywhere confirms nothing more.
    assert_eq!(
        say(&home, None, "yes"),
        (0, "There is nothing to confirm.".to_owned())
    );
    let (_, again) = voice_say(port, &format!("Yes, {kitchen_word}."), "en", "kitchen");
    assert!(
        !again.contains("Removed") && !again.contains("No task"),
        "{again}"
    );
    let log = acts();
    assert_eq!(log.len(), 4, "{log:?}");

    // The acts log, newest first, names the conversation each yes came from.
    let by: Vec<&str> = log
        .iter()
        .map(|a| a["confirmed_by"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        by,
        [
            "owner (terminal, work: \"yes\")".to_owned(),
            format!("owner (voice, hall: \"yes {hall_word}\")"),
            "owner (terminal: \"yes\")".to_owned(),
            format!("owner (voice, kitchen: \"yes {kitchen_word}\")"),
        ]
    );
    assert!(log
        .iter()
        .all(|a| a["act"] == "todo_clear_done" && a["outcome"] == "ok"));
    // As `maven acts` says it.
    let out = home.run(&["acts", "--limit", "4"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for who in &by {
        assert!(text.contains(&format!("  confirmed by {who}\n")), "{text}");
    }

    // A conversation's name is bounded and plain: refused by `maven say` before the daemon is
    // asked, and by the daemon from a client that sends one anyway; nothing runs.
    let long = "x".repeat(65);
    for bad in ["a b", "-x", long.as_str()] {
        let out = home.run(&["say", "--conversation", bad, "yes"]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            stderr(&out).contains("a conversation's name is 1 to 64 letters, digits"),
            "{}",
            stderr(&out)
        );
    }
    let r = home.raw(
        r#"{"jsonrpc":"2.0","id":9,"method":"turn","params":{"text":"yes","conversation":"a\nb"}}"#,
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("conversation: a conversation's name is 1 to 64"),
        "{r}"
    );
    let r = home.raw(
        r#"{"jsonrpc":"2.0","id":10,"method":"turn","params":{"text":"yes","conversation":"work"}}"#,
    );
    assert_eq!(r["result"]["answer"], "There is nothing to confirm.", "{r}");
    assert_eq!(acts().len(), 4, "nothing more ran");
}
